import FoodCore
import Foundation
import MealStore
import Testing

@Suite("meal store: merge rules, dedupe, journal")
struct MergeTests {
    @Test(arguments: [
        ("04:59", MealType.snack), ("05:00", .breakfast), ("10:29", .breakfast), ("10:30", .lunch), ("14:59", .lunch),
        ("15:00", .snack), ("16:59", .snack), ("17:00", .dinner), ("21:59", .dinner), ("22:00", .snack), ("00:30", .snack),
    ])
    func defaultWindowsDecideTheMealType(time: String, type: MealType) throws {
        let t = try TempStore()
        defer { t.cleanup() }
        let out = try t.store.log(photoMeal("h1", at("2026-11-22", time), [food("Rice", kcal: 130)]))
        #expect(out.outcome == .created)
        #expect(try t.store.meal(id: out.mealID)?.type == type)
    }

    @Test func windowsAreConfigurableAndParsed() throws {
        let w = try MealWindows(parsing: "breakfast=06:00-09:00, dinner=18:00-23:30")
        #expect(w.breakfast == .init(start: 360, end: 540))
        #expect(w.lunch == MealWindows.standard.lunch)
        #expect(w.type(atMinute: 5 * 60 + 30) == .snack)
        #expect(w.type(atMinute: 23 * 60) == .dinner)
        #expect(throws: MealStoreError.self) { try MealWindows(parsing: "brunch=10:00-11:00") }
        #expect(throws: MealStoreError.self) { try MealWindows(parsing: "lunch=14:00-12:00") }
        // The type is read in the policy's zone: 07:30 UTC is 08:30 in Berlin (breakfast) and 15:30 in Shanghai (snack).
        let utc = Date(timeIntervalSince1970: 1_795_332_600) // 2026-11-22 07:30 UTC
        #expect(w.type(at: utc, timeZone: berlin) == .breakfast)
        #expect(w.type(at: utc, timeZone: TimeZone(identifier: "Asia/Shanghai")!) == .snack)
        // Stored with the diary; nil goes back to the defaults.
        let t = try TempStore()
        defer { t.cleanup() }
        #expect(try t.store.mealWindows() == .standard)
        try t.store.setMealWindows(w)
        #expect(try MealStore(path: t.store.path).mealWindows() == w)
        try t.store.setMealWindows(nil)
        #expect(try t.store.mealWindows() == .standard)
    }

    @Test func photosOfOneMealWithinTheGapMerge() throws {
        let t = try TempStore()
        defer { t.cleanup() }
        let s = t.store
        let a = try s.log(photoMeal("a", at("2026-11-22", "12:00"), [food("Rice", grams: 200, kcal: 130, protein: 2.7, carbs: 28)]))
        let b = try s.log(photoMeal("b", at("2026-11-22", "12:40"), [food("Chicken curry", grams: 250, kcal: 160, protein: 14, fat: 9)]))
        // 44 minutes after b (but 84 after a): the gap counts from the nearest photo of the meal.
        let c = try s.log(photoMeal("c", at("2026-11-22", "13:24"), [food("Naan", grams: 90, kcal: 290, protein: 9, carbs: 50)]))
        // 46 minutes after c: a new lunch.
        let d = try s.log(photoMeal("d", at("2026-11-22", "14:10"), [food("Tea", grams: 250, kcal: 1)]))
        #expect(a.outcome == .created)
        #expect(b == LoggedMeal(outcome: .merged, mealID: a.mealID))
        #expect(c == LoggedMeal(outcome: .merged, mealID: a.mealID))
        #expect(d.outcome == .created && d.mealID != a.mealID)
        let meal = try #require(try s.meal(id: a.mealID))
        #expect(meal.title == "Rice, Chicken curry & Naan")
        #expect(meal.photos.map(\.hash) == ["a", "b", "c"])
        #expect(meal.time == at("2026-11-22", "12:00"))
        // 260 + 400 + 261 kcal; protein 5.4 + 35 + 8.1.
        #expect(meal.totals.kcal == 921)
        #expect(meal.totals.proteinG == 48.5)
        #expect(meal.foods.map(\.photoHash) == ["a", "b", "c"])
        #expect(try s.mealCount() == 2)
    }

    @Test func differentTypesOrDaysDoNotMergeEvenWithinTheGap() throws {
        let t = try TempStore()
        defer { t.cleanup() }
        let s = t.store
        let breakfast = try s.log(photoMeal("a", at("2026-11-22", "10:20"), [food("Toast", kcal: 260)]))
        let lunch = try s.log(photoMeal("b", at("2026-11-22", "10:40"), [food("Soup", kcal: 50)]))
        #expect(lunch.outcome == .created && lunch.mealID != breakfast.mealID)
        // Two snacks 20 minutes apart across local midnight are two days' snacks.
        let late = try s.log(photoMeal("c", at("2026-11-22", "23:50"), [food("Chips", kcal: 530)]))
        let early = try s.log(photoMeal("d", at("2026-11-23", "00:10"), [food("Chips", kcal: 530)]))
        #expect(late.outcome == .created && early.outcome == .created)
        #expect(try s.mealCount() == 4)
        // A larger gap merges what the default kept apart.
        let next = try s.log(photoMeal("e", at("2026-11-23", "01:20"), [food("Cookie", kcal: 480)]), gap: 2 * 3600)
        #expect(next == LoggedMeal(outcome: .merged, mealID: early.mealID))
    }

    @Test func theSamePhotoIsNeverLoggedTwiceUnlessReplaced() throws {
        let t = try TempStore()
        defer { t.cleanup() }
        let s = t.store
        let first = try s.log(photoMeal("p1", at("2026-11-22", "19:00"), [food("Pasta", grams: 300, kcal: 150, carbs: 30)]))
        try s.log(photoMeal("p2", at("2026-11-22", "19:10"), [food("Salad", grams: 100, kcal: 20)]))
        // Logged again (another path, another analysis): nothing changes.
        var again = photoMeal("p1", at("2026-11-22", "19:00"), [food("Pizza", grams: 200, kcal: 270)])
        again.photo.path = "/elsewhere/copy.jpg"
        #expect(try s.log(again) == LoggedMeal(outcome: .duplicate, mealID: first.mealID))
        var meal = try #require(try s.meal(id: first.mealID))
        #expect(meal.foods.map(\.name) == ["Pasta", "Salad"])
        #expect(meal.totals.kcal == 470)
        // Replace: p1's foods become the new ones, p2's stay; totals, title and path follow.
        #expect(try s.log(again, replace: true) == LoggedMeal(outcome: .replaced, mealID: first.mealID))
        meal = try #require(try s.meal(id: first.mealID))
        #expect(meal.foods.map(\.name) == ["Salad", "Pizza"])
        #expect(meal.totals.kcal == 560)
        #expect(meal.title == "Salad & Pizza")
        #expect(meal.photos.first { $0.hash == "p1" }?.path == "/elsewhere/copy.jpg")
        #expect(try s.mealCount() == 1)
        #expect(try s.photoCount() == 2)
    }

    @Test func tagsFollowTheDocumentedRules() {
        // 40 g protein = 160 kcal of 600 (26.7 %): high-protein; carbs 60 g = 40 %; fat 20 g = 30 %: balanced.
        #expect(MealRules.tags(totals: Macros(kcal: 600, proteinG: 40, carbsG: 60, fatG: 20, fiberG: 9))
                == ["high-protein", "high-fiber", "balanced"])
        // 30 g protein in 1000 kcal is only 12 %; carbs 20 g = 8 %: low-carb, hearty.
        #expect(MealRules.tags(totals: Macros(kcal: 1000, proteinG: 30, carbsG: 20, fatG: 90)) == ["low-carb", "hearty"])
        #expect(MealRules.tags(totals: Macros(kcal: 90, carbsG: 22)) == ["light"])
        #expect(MealRules.tags(totals: .zero) == [])
        #expect(MealRules.title(foods: [], type: .dinner) == "Dinner")
        let many = ["A", "B", "C", "D", "E", "A"].map { food($0, kcal: 1) }
        #expect(MealRules.title(foods: many, type: .lunch) == "A, B, C & 2 more")
    }

    @Test func journalEntriesAreKeyedByHashAndSettings() throws {
        let t = try TempStore()
        defer { t.cleanup() }
        let s = t.store
        let policy = MergePolicy(timeZone: berlin)
        // Analysed but not logged (a failed photo, or a run without --log).
        #expect(try s.record(hash: "x", path: "/p/x.jpg", settings: "k1", result: Data("fail".utf8), meal: nil,
                             policy: policy, replace: false) == nil)
        let m = photoMeal("y", at("2026-11-22", "08:00"), [food("Egg", grams: 50, kcal: 143)])
        let out = try s.record(hash: "y", path: "/p/y.jpg", settings: "k1", result: Data("ok".utf8), meal: m, policy: policy,
                               replace: false)
        #expect(try s.journalEntry(hash: "x", settings: "k1") == JournalEntry(hash: "x", path: "/p/x.jpg", settings: "k1",
                                                                                result: Data("fail".utf8), mealID: nil))
        #expect(try s.journalEntry(hash: "y", settings: "k1")?.mealID == out?.mealID)
        #expect(try s.journalEntry(hash: "y", settings: "k2") == nil)
        let hashes = ["x", "y", "z"] + (0..<1200).map { "n\($0)" }
        #expect(Set(try s.journalEntries(hashes: hashes, settings: "k1").keys) == ["x", "y"])
        // Re-recording without a meal keeps the link to the meal.
        _ = try s.record(hash: "y", path: "/p/y2.jpg", settings: "k1", result: Data("again".utf8), meal: nil, policy: policy,
                         replace: false)
        let y = try #require(try s.journalEntry(hash: "y", settings: "k1"))
        #expect(y.path == "/p/y2.jpg" && y.result == Data("again".utf8) && y.mealID == out?.mealID)
        // Deleting the meal unlinks the journal row; the photo stays deleted unless logged again on purpose (replace).
        #expect(try s.deleteMeal(id: out!.mealID))
        #expect(try s.journalEntry(hash: "y", settings: "k1")?.mealID == nil)
        #expect(try s.log(m).outcome == .deleted)
        #expect(try s.record(hash: "y", path: "/p/y.jpg", settings: "k1", result: Data("ok".utf8), meal: m, policy: policy,
                             replace: false)?.outcome == .deleted)
        #expect(try s.journalEntry(hash: "y", settings: "k1")?.mealID == nil)
        #expect(try s.log(m, replace: true).outcome == .created)
        #expect(try s.log(m).outcome == .duplicate)
    }

    @Test func mealIDsMayBeShortenedToAUniquePrefix() throws {
        let t = try TempStore()
        defer { t.cleanup() }
        let out = try t.store.log(photoMeal("a", at("2026-11-22", "08:00"), [food("Egg", kcal: 143)]))
        #expect(try t.store.meal(id: String(out.mealID.prefix(8)).lowercased())?.id == out.mealID)
        #expect(try t.store.meal(id: String(out.mealID.prefix(5))) == nil)  // too short to guess
        #expect(try t.store.meal(id: "ZZZZZZZZ") == nil)
    }

    @Test func openingABadPathSaysWhichAndWhy() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fm-notdir-\(UUID().uuidString)").path
        _ = FileManager.default.createFile(atPath: dir, contents: Data("x".utf8))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect {
            try MealStore(path: dir + "/meals.sqlite")
        } throws: { e in
            guard case let .cannotOpen(path, _)? = e as? MealStoreError else { return false }
            return path == dir + "/meals.sqlite"
        }
        // A file that is not SQLite.
        let junk = dir + "-junk.sqlite"
        _ = FileManager.default.createFile(atPath: junk, contents: Data(repeating: 0x41, count: 4096))
        defer { try? FileManager.default.removeItem(atPath: junk) }
        #expect(throws: MealStoreError.self) { try MealStore(path: junk) }
    }
}
