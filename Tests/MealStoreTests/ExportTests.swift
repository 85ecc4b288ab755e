import FoodCore
import FoodMomentTestSupport
import Foundation
import MealStore
import Testing

@Suite("export / import")
struct ExportTests {
    /// A diary with every kind of value: merged meals, a hand-added food without a box or per-100 g values,
    /// odd text, sub-millisecond times, water, weight, goals, achievements.
    func fill(_ s: MealStore) throws {
        try s.log(photoMeal("a", at("2026-11-21", "12:00").addingTimeInterval(0.1234), [
            food("Rice", grams: 183.3, kcal: 130, protein: 2.7, carbs: 28, fat: 0.3, fiber: 0.4),
        ], analysis: "Looks like rice, \"steamed\".\nSecond line"))
        try s.log(photoMeal("b", at("2026-11-21", "12:30"), [food("Chicken curry", grams: 250, kcal: 160, protein: 14, fat: 9)]))
        let dinner = try s.log(photoMeal("c", at("2026-11-22", "19:05"), [food("Pizza, margherita", grams: 310, kcal: 266, protein: 11, carbs: 33, fat: 10)]))
        var manual = MealFood(label: "tea", name: "Tea 🍵 \"green\"", nameZh: "绿茶", emoji: "🍵", grams: 250, gramsSource: .user, source: .user)
        manual.nutrients = Macros(kcal: 2, proteinG: 0.1)
        try s.edit(mealID: dinner.mealID, [.addFood(manual), .title("Friday, pizza night")])
        try s.addWater(milliliters: 250, at: at("2026-11-22", "08:00"))
        try s.addWeight(kilograms: 68.25, at: at("2026-11-22", "07:00"))
        try s.setGoals(Goals(dailyKcal: 2100, proteinG: 110.5, waterMl: 2000))
        try s.setMealWindows(try MealWindows(parsing: "breakfast=06:00-09:30"))
        try s.updateAchievements()
    }

    @Test func jsonRoundTripIsByteIdenticalAndImportingTwiceAddsNothing() throws {
        let a = try TempStore(), b = try TempStore()
        defer { a.cleanup(); b.cleanup() }
        try fill(a.store)
        let first = try a.store.exportDocument().jsonData()
        let doc = try DiaryExport.decode(first)
        #expect(doc.schemaVersion == 1 && doc.meals.count == 2 && doc.water.count == 1 && doc.achievements.count == 1)

        let report = try b.store.importDocument(doc)
        #expect(report.mealsAdded == 2 && report.waterAdded == 1 && report.weightAdded == 1 && report.goalsSet && report.mealWindowsSet)
        #expect(try b.store.mealWindows().breakfast == .init(start: 360, end: 570))
        let second = try b.store.exportDocument().jsonData()
        #expect(second == first)
        #expect(try b.store.exportDocument() == doc)

        let again = try b.store.importDocument(try DiaryExport.decode(second))
        #expect(again.mealsUnchanged == 2 && again.mealsAdded == 0 && again.mealsUpdated == 0 && again.waterAdded == 0
                && again.weightAdded == 0 && again.achievementsAdded == 0 && !again.goalsSet)
        #expect(try b.store.mealCount() == 2)
        #expect(try b.store.exportDocument().jsonData() == first)
        // Into the original store: nothing changes either.
        #expect(try a.store.importDocument(doc).mealsUnchanged == 2)
        #expect(try a.store.exportDocument().jsonData() == first)
        // The document reads as documented.
        let json = String(decoding: first, as: UTF8.self)
        for key in ["\"schema_version\" : 1", "\"taken_at\" : \"2026-11-21T11:00:00.123Z\"", "\"per_100g\"", "\"grams_source\"",
                    "\"totals\"", "\"daily_kcal\" : 2100", "\"meal_windows\"", "\"title\" : \"Friday, pizza night\""] {
            #expect(json.contains(key), "missing \(key)")
        }
    }

    @Test func anEditedMealIsUpdatedOnImportAndAPhotoOfAnotherMealIsSkipped() throws {
        let a = try TempStore(), b = try TempStore()
        defer { a.cleanup(); b.cleanup() }
        try fill(a.store)
        var doc = try a.store.exportDocument()
        _ = try b.store.importDocument(doc)
        doc.meals[0].foods[0].setGrams(100)
        #expect(try b.store.importDocument(doc).mealsUpdated == 1)
        #expect(try b.store.meal(id: doc.meals[0].id)?.foods[0].grams == 100)
        // A meal with another id but a photo already logged here is refused, not duplicated.
        doc.meals[1].id = "NEW-MEAL-ID"
        let r = try b.store.importDocument(doc)
        #expect(r.mealsSkipped.count == 1 && r.mealsSkipped[0].contains("already in meal"))
        #expect(try b.store.mealCount() == 2)
    }

    @Test(arguments: [
        ("[]", "not a JSON object"), ("{}", "no schema_version"), ("{\"schema_version\": 99}", "schema_version 99"),
        ("{\"schema_version\": 1, \"meals\": 3}", "not a foodmoment export"),
    ])
    func badExportsAreRefusedWithTheReason(text: String, message: String) {
        #expect {
            try DiaryExport.decode(Data(text.utf8))
        } throws: { e in
            (e as? MealStoreError)?.description.contains(message) == true
        }
    }

    @Test func csvHasOneRowPerFoodWithTheDocumentedColumns() throws {
        let t = try TempStore()
        defer { t.cleanup() }
        try fill(t.store)
        let csv = try t.store.exportCSV(timeZone: berlin)
        let lines = csv.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines[0] == DiaryCSV.columns.joined(separator: ","))
        #expect(lines.count == 1 + 4 + 1)  // header, 4 foods, trailing newline
        #expect(lines[1].hasPrefix(try t.store.allMeals()[0].id + ",lunch,2026-11-21T11:00:00.123Z,2026-11-21,12:00,"))
        #expect(lines[1].contains(",1,rice,Rice,,🍽️,0.8,183.3,box_area,model,sr:1,238,4.9,51.3,0.5,0.7,,,a,/photos/a.jpg"))
        #expect(lines[4].contains("\"Friday, pizza night\""))
        #expect(lines[4].contains("\"Tea 🍵 \"\"green\"\"\",绿茶"))
    }

    /// A title or food name a spreadsheet would run as a formula is written as text (the same guard as analyze's CSV).
    @Test func csvNeverHandsASpreadsheetAFormula() throws {
        let t = try TempStore()
        defer { t.cleanup() }
        let food = MealFood(label: "x", name: "@SUM(A1:A9)", grams: 10, gramsSource: .user, source: .user)
        try t.store.addMeal(time: Date(timeIntervalSince1970: 1_795_000_000), type: .snack, foods: [food], title: "=HYPERLINK(\"http://x\")")
        let row = try t.store.exportCSV(timeZone: berlin).split(separator: "\n")[1]
        #expect(row.contains(",\"'=HYPERLINK(\"\"http://x\"\")\",") && row.contains(",'@SUM(A1:A9),"), "\(row)")
        #expect(CSV.line(["-12.5", "+1", "-", "=1"]) == "-12.5,+1,'-,'=1", "numbers stay numbers")
    }
}
