import FoodCore
import Foundation
import MealStore
import Testing

@Suite("meal store: edits, logs, goals, achievements")
struct EditTests {
    @Test func editsRecomputeNutrientsTotalsTitleAndTags() throws {
        let t = try TempStore()
        defer { t.cleanup() }
        let s = t.store
        let out = try s.log(photoMeal("a", at("2026-11-22", "12:00"), [
            food("Rice", grams: 100, kcal: 130, protein: 2.7, carbs: 28, fat: 0.3),
            food("Chicken", grams: 100, kcal: 165, protein: 31, fat: 3.6),
            food("Naan", grams: 90, kcal: 290, protein: 9, carbs: 50, fat: 5),
        ]))
        // 130 + 165 + 261 = 556 kcal.
        #expect(try s.meal(id: out.mealID)?.totals.kcal == 556)
        // Rice to 200 g (260 kcal), naan removed, 50 g yogurt (61 kcal × 0.5 = 30.5 → 31) added.
        let yogurt = food("Yogurt", grams: 50, kcal: 61, protein: 3.5, carbs: 4.7, fat: 3.3)
        let m = try s.edit(mealID: out.mealID, [.grams(index: 0, grams: 200), .deleteFood(index: 2), .addFood(yogurt)])
        #expect(m.foods.map(\.name) == ["Rice", "Chicken", "Yogurt"])
        #expect(m.foods[0].nutrients == Macros(kcal: 260, proteinG: 5.4, carbsG: 56, fatG: 0.6, fiberG: 0))
        #expect(m.foods[0].gramsSource == .user)
        #expect(m.totals.kcal == 260 + 165 + 31)
        #expect(m.title == "Rice, Chicken & Yogurt")
        #expect(m.updatedAt == Date(timeIntervalSince1970: fixedNow.timeIntervalSince1970))
        #expect(try s.meal(id: out.mealID) == m)
        // Protein 5.4 + 31 + 1.8 = 38.2 g = 152.8 kcal of 456 (33.5 %): high-protein.
        #expect(m.tags.contains("high-protein"))

        // A title typed by hand stays when foods change; "" goes back to the automatic one.
        var e = try s.edit(mealID: out.mealID, [.title("Sunday lunch"), .type(.dinner), .time(at("2026-11-22", "18:30"))])
        #expect(e.title == "Sunday lunch" && e.type == .dinner && e.time == at("2026-11-22", "18:30"))
        e = try s.edit(mealID: out.mealID, [.deleteFood(index: 0)])
        #expect(e.title == "Sunday lunch")
        #expect(e.totals.kcal == 165 + 31)
        e = try s.edit(mealID: out.mealID, [.title("")])
        #expect(e.title == "Chicken & Yogurt")
    }

    /// The recognition text does not outlive a hand edit of the foods: one "Edited by hand" line says what the meal
    /// holds now (replaced, not stacked, by later edits); edits that leave the foods alone leave the text alone.
    @Test func analysisTextSaysWhenFoodsWereEditedByHand() throws {
        let t = try TempStore()
        defer { t.cleanup() }
        let s = t.store
        let out = try s.log(photoMeal("a", at("2026-11-22", "12:00"), [food("Rice", grams: 100, kcal: 130, protein: 2.7, carbs: 28, fat: 0.3)],
                                      analysis: "On-device recognition: rice 0.91"))
        var e = try s.edit(mealID: out.mealID, [.title("Lunch at work")])
        #expect(e.analysis == "On-device recognition: rice 0.91")
        e = try s.edit(mealID: out.mealID, [.grams(index: 0, grams: 200)])
        #expect(e.analysis == "On-device recognition: rice 0.91\n\nEdited by hand: foods now Rice 200 g (260 kcal).")
        e = try s.edit(mealID: out.mealID, [.addFood(food("Dal", grams: 100, kcal: 116, protein: 9, carbs: 20, fat: 0.4))])
        #expect(e.analysis == "On-device recognition: rice 0.91\n\nEdited by hand: foods now Rice 200 g, Dal 100 g (376 kcal).")
    }

    @Test func badEditsChangeNothingAndSayWhy() throws {
        let t = try TempStore()
        defer { t.cleanup() }
        let s = t.store
        let out = try s.log(photoMeal("a", at("2026-11-22", "12:00"), [food("Rice", kcal: 130)]))
        let before = try s.meal(id: out.mealID)
        // The grams edit is applied, then food #5 fails: the whole edit is rolled back.
        #expect(throws: MealStoreError.noSuchFood(meal: String(out.mealID.prefix(8)), number: 5, count: 1)) {
            try s.edit(mealID: out.mealID, [.grams(index: 0, grams: 500), .deleteFood(index: 4)])
        }
        #expect(throws: MealStoreError.self) { try s.edit(mealID: out.mealID, [.grams(index: 0, grams: -1)]) }
        #expect(throws: MealStoreError.noSuchMeal("nope")) { try s.edit(mealID: "nope", [.title("x")]) }
        #expect(try s.meal(id: out.mealID) == before)
        #expect(MealStoreError.noSuchFood(meal: "ABCD1234", number: 5, count: 1).description.contains("food #5"))
    }

    @Test func waterWeightAndGoals() throws {
        let t = try TempStore()
        defer { t.cleanup() }
        let s = t.store
        try s.addWater(milliliters: 250, at: at("2026-11-22", "08:00"))
        try s.addWater(milliliters: 500, at: at("2026-11-22", "13:00"))
        try s.addWater(milliliters: 300, at: at("2026-11-23", "08:00"))
        let day = LocalDay("2026-11-22")!
        let water = try s.waterLogs(from: day.start(in: berlin), to: day.adding(days: 1).start(in: berlin))
        #expect(water.map(\.milliliters) == [250, 500])
        #expect(throws: MealStoreError.self) { try s.addWater(milliliters: 0) }
        try s.addWeight(kilograms: 68.2, at: at("2026-11-20", "07:00"))
        try s.addWeight(kilograms: 67.9, at: at("2026-11-22", "07:00"))
        #expect(try s.weightLogs(from: .distantPast, to: .distantFuture).map(\.kilograms) == [68.2, 67.9])
        #expect(throws: MealStoreError.self) { try s.addWeight(kilograms: .nan) }
        #expect(try s.goals() == Goals())
        let g = Goals(dailyKcal: 2000, proteinG: 120, waterMl: 2000, targetWeightKg: 65)
        try s.setGoals(g)
        #expect(try s.goals() == g)
        #expect(throws: MealStoreError.self) { try s.setGoals(Goals(dailyKcal: -5)) }
        #expect(try s.goals() == g)
    }

    @Test func achievementsFollowTheRulesAndAreDatedByWhatEarnedThem() throws {
        let t = try TempStore()
        defer { t.cleanup() }
        let s = t.store
        #expect(try s.updateAchievements() == [])
        try s.setGoals(Goals(proteinG: 60, waterMl: 1000))
        try s.log(photoMeal("d1", at("2026-11-20", "12:00"), [food("Tofu", grams: 200, kcal: 76, protein: 8)]))   // 16 g
        try s.log(photoMeal("d2", at("2026-11-21", "12:00"), [food("Chicken", grams: 200, kcal: 165, protein: 31)])) // 62 g
        var new = try s.updateAchievements()
        #expect(new.map(\.id) == ["first-meal", "protein-goal"])
        #expect(new.first { $0.id == "protein-goal" }?.unlockedAt == at("2026-11-21", "12:00"))
        #expect(try s.updateAchievements() == [])  // stored once
        try s.log(photoMeal("d3", at("2026-11-22", "08:00"), [food("Egg", kcal: 143)]))
        try s.addWater(milliliters: 600, at: at("2026-11-22", "09:00"))
        try s.addWater(milliliters: 600, at: at("2026-11-22", "15:00"))
        new = try s.updateAchievements()
        #expect(new.map(\.id) == ["streak-3", "hydrated"])
        #expect(new[0].unlockedAt == at("2026-11-22", "08:00"))
        #expect(new[1].unlockedAt == at("2026-11-22", "15:00"))
        #expect(try s.achievements().count == 4)
    }
}
