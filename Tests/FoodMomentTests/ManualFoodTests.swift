import FoodCore
import FoodMoment
import FoodMomentTestSupport
import Foundation
import Nutrition
import Testing

/// Foods typed by hand (`meal add`, the server's meals, the web app's search): by label, by table id, by name — each
/// through the one nutrition join.
@Suite("Foods typed by hand")
struct ManualFoodTests {
    static let db = try? NutritionDatabase.load(directory: URL(fileURLWithPath: TestPaths.repoRoot + "/nutrition-db"))

    @Test func aLabelATableIdAndANameEachGiveTheirFood() throws {
        let db = try #require(Self.db)
        let byLabel = try ManualFood.make(name: "banana", grams: 118, db: db)
        #expect(byLabel.label == "banana" && byLabel.foodId == "sr:173944" && byLabel.nutrients.kcal == 105)
        #expect(byLabel.nutrients.sodiumMg == 1 && byLabel.nutrients.sugarsG == 14.4 && byLabel.color != MealFood.defaultColor)
        // A search hit's id: exactly that food (a name could resolve to another), read as the label that names it.
        let byID = try ManualFood.make(name: "sr:173944", grams: 118, db: db)
        #expect(byID.foodId == "sr:173944" && byID.label == "banana" && byID.nutrients == byLabel.nutrients)
        let hit = try #require(db.search("apple juice", limit: 5).first { $0.food.id != db.food(forLabel: "apple")?.id })
        let exact = try ManualFood.make(name: hit.food.id, grams: 250, db: db)
        #expect(exact.foodId == hit.food.id && exact.foodName == hit.food.name && exact.gramsSource == .user)
        #expect(throws: ManualFoodError.notFound("sr:0")) { try ManualFood.make(name: "sr:0", grams: 10, db: db) }
    }
}
