import FoodCore
import FoodMomentTestSupport
import Foundation
import GRDB
@testable import MealStore
import Testing

/// The food `analyze` prints is the food the diary keeps: one value, one JSON shape, sugars and sodium included,
/// and what older versions wrote still reads.
@Suite("One food value")
struct OneFoodValueTests {
    static let sweet = MealFood(label: "banana", name: "Banana", nameZh: "香蕉", emoji: "🍌", color: "#FFD23F", confidence: 0.9,
                                box: NormalizedBox(x: 0.1, y: 0.1, w: 0.5, h: 0.5), grams: 118, gramsSource: .boxArea,
                                source: .model, foodId: "sr:173944", foodName: "Bananas, raw", provenance: "USDA SR Legacy",
                                per100g: Macros(kcal: 89, proteinG: 1.09, carbsG: 22.84, fatG: 0.33, fiberG: 2.6,
                                                sugarsG: 12.23, sodiumMg: 1),
                                nutrients: Macros(kcal: 105, proteinG: 1.3, carbsG: 27, fatG: 0.4, fiberG: 3.1, sugarsG: 14.4, sodiumMg: 1))

    @Test func aFoodIsOneFlatObjectAndReadsBackTheSame() throws {
        let data = try JSONEncoder().encode(Self.sweet)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["kcal"] as? Double == 105 && object["sugars_g"] as? Double == 14.4 && object["sodium_mg"] as? Double == 1)
        #expect(object["nutrients"] == nil && object["color"] as? String == "#FFD23F" && object["food_name"] as? String == "Bananas, raw")
        #expect(try JSONDecoder().decode(MealFood.self, from: data) == Self.sweet)
        // A food without table numbers leaves them out (unknown, not zero).
        let bare = MealFood(label: "my_soup", name: "My soup", grams: 300, gramsSource: .defaultPortion, source: .learned)
        let bareObject = try #require(try JSONSerialization.jsonObject(with: try JSONEncoder().encode(bare)) as? [String: Any])
        #expect(bareObject["kcal"] == nil && !bare.hasNutrition)
    }

    @Test func aFoodWrittenBefore060StillReads() throws {
        let old = #"""
        {"label": "rice", "name": "Rice", "name_zh": "米饭", "emoji": "🍚", "confidence": 0.8, "grams": 200,
         "grams_source": "box_area", "source": "model", "food_id": "sr:1", "provenance": "test",
         "per_100g": {"kcal": 130, "protein_g": 2.7, "carbs_g": 28.2, "fat_g": 0.3, "fiber_g": 0.4},
         "nutrients": {"kcal": 261, "protein_g": 5.4, "carbs_g": 56.4, "fat_g": 0.6, "fiber_g": 0.8}, "photo_hash": "ab"}
        """#
        let f = try JSONDecoder().decode(MealFood.self, from: Data(old.utf8))
        #expect(f.nutrients == Macros(kcal: 261, proteinG: 5.4, carbsG: 56.4, fatG: 0.6, fiberG: 0.8))
        #expect(f.nutrients.sugarsG == nil && f.color == MealFood.defaultColor && f.photoHash == "ab")
    }

    @Test func sugarsAndSodiumSurviveTheDiaryAndSumPerMeal() throws {
        let t = try TempStore()
        defer { t.cleanup() }
        var salty = food("Miso soup", grams: 240, kcal: 40, protein: 3)
        salty.per100g?.sodiumMg = 400
        salty.setGrams(240, source: .boxArea)
        let logged = try t.store.log(photoMeal("a", at("2026-11-21", "12:00"), [Self.sweet, salty]))
        let meal = try #require(try t.store.meal(id: logged.mealID))
        #expect(meal.foods.map { $0.photoHash } == ["a", "a"], "the store records the photo each food was seen in")
        #expect(meal.foods.map { var f = $0; f.photoHash = nil; return f } == [Self.sweet, salty], "every field kept")
        #expect(meal.totals.sodiumMg == 961 && meal.totals.sugarsG == 14.4, "a sum counts the foods whose table reports it")
        // An edit of the grams scales them with the rest.
        try t.store.edit(mealID: logged.mealID, [.grams(index: 1, grams: 120)])
        #expect(try t.store.meal(id: logged.mealID)?.foods[1].nutrients.sodiumMg == 480)
        let csv = try t.store.exportCSV(timeZone: berlin)
        #expect(csv.contains(",105,1.3,27,0.4,3.1,14.4,1,a,/photos/a.jpg"))
    }

    @Test func aDiaryFromBefore060OpensWithItsFoodsAndNoSugarsOrSodium() throws {
        let dir = TestPaths.makeTempDirectory("legacy-diary")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/meals.sqlite"
        let queue = try DatabaseQueue(path: path)
        try Schema.migrator.migrate(queue, upTo: "v4: goals in the change log")
        try queue.write { db in
            try db.execute(sql: """
                INSERT INTO meals (id, type, time_ms, utc_offset_s, title, tags, analysis, created_ms, updated_ms)
                VALUES ('m1', 'lunch', 1795400000000, NULL, 'Rice', '[]', NULL, 1795400000000, 1795400000000);
                INSERT INTO foods (meal_id, position, label, name, name_zh, emoji, confidence, grams, grams_source, source,
                  food_id, provenance, per100_kcal, per100_protein_g, per100_carbs_g, per100_fat_g, per100_fiber_g,
                  kcal, protein_g, carbs_g, fat_g, fiber_g)
                VALUES ('m1', 0, 'rice', 'Rice', '米饭', '🍚', 0.8, 200, 'box_area', 'model', 'sr:1', 'test',
                  130, 2.7, 28.2, 0.3, 0.4, 261, 5.4, 56.4, 0.6, 0.8);
                """)
        }
        try queue.close()
        let store = try MealStore(path: path, timeZone: berlin)
        let meal = try #require(try store.meal(id: "m1"))
        #expect(meal.foods.count == 1 && meal.foods[0].nutrients.kcal == 261 && meal.foods[0].nutrients.sodiumMg == nil)
        #expect(meal.totals.sodiumMg == nil && meal.foods[0].color == MealFood.defaultColor)
    }
}
