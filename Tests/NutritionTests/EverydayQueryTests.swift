import Foundation
import Nutrition
import Testing

/// The first hit for everyday queries, in English (British spellings too) and Chinese: the generic food a person
/// means, before branded products and before processed or unusual forms (ranking in `NutritionDatabase.search`).
@Suite("search: the everyday food comes first")
struct EverydayQueryTests {
    static let cases: [(query: String, first: String)] = [
        ("egg", "Egg, whole, cooked, hard-boiled"), ("eggs", "Egg, whole, cooked, hard-boiled"),
        ("milk", "Milk, NFS"), ("whole milk", "Milk, whole"), ("skim milk", "Milk, fat free (skim)"),
        ("yogurt", "Yogurt, NFS"), ("greek yogurt", "Yogurt, Greek, plain"), ("greek yoghurt", "Yogurt, Greek, plain"),
        ("chicken breast", "Chicken breast, baked, broiled, or roasted"), ("chicken", "Chicken, stewing, meat only, raw"),
        ("beef", "Beef, steak, NFS"), ("ground beef", "Beef, ground"), ("pork", "Pork, NFS"),
        ("salmon", "Fish, salmon"), ("tuna", "Fish, tuna, raw"), ("shrimp", "Shrimp, NFS"), ("prawns", "Shrimp, NFS"),
        ("rice", "Rice, white, cooked"), ("brown rice", "Rice, brown, cooked"), ("bread", "Bread, white"),
        ("noodles", "Noodles, cooked"), ("oatmeal", "Oatmeal, NFS"), ("porridge", "Oatmeal, NFS"),
        ("banana", "Bananas, raw"), ("apple", "Apples, raw"), ("orange", "Oranges, raw"), ("avocado", "Avocados, raw"),
        ("broccoli", "Broccoli, raw"), ("carrot", "Carrots, raw"), ("potato", "Potatoes, flesh and skin, raw"),
        ("sweet potato", "Sweet potato, raw"), ("tomato", "Tomatoes, red, ripe, raw"), ("aubergine", "Eggplant, raw"),
        ("courgette", "Squash, summer, zucchini"), ("tofu", "Tofu, raw"), ("cheese", "Cheese, NFS"),
        ("butter", "Butter, NFS"), ("peanut butter", "Peanut butter"), ("olive oil", "Olive oil"), ("honey", "Honey"),
        ("coffee", "Coffee, brewed"), ("orange juice", "Orange juice, 100%, NFS"),
        ("鸡蛋", "Egg, whole, cooked, hard-boiled"), ("牛奶", "Milk, NFS"), ("酸奶", "Yogurt, NFS"),
        ("鸡胸肉", "Chicken breast, baked, broiled, or roasted"), ("牛肉", "Beef, steak, NFS"), ("猪肉", "Pork, NFS"),
        ("米饭", "Rice, white, cooked"), ("面条", "Noodles, cooked"), ("面包", "Bread, white"), ("苹果", "Apples, raw"),
        ("香蕉", "Bananas, raw"), ("土豆", "Potatoes, flesh and skin, raw"), ("西红柿", "Tomatoes, red, ripe, raw"),
        ("豆腐", "Tofu, raw"), ("咖啡", "Coffee, brewed"), ("绿茶", "Tea, hot, leaf, green"), ("虾", "Shrimp, NFS"),
        ("花生酱", "Peanut butter"), ("橙汁", "Orange juice, 100%, NFS"), ("西兰花", "Broccoli, raw"),
        ("可乐", "Soft drink, cola"),
    ]

    @Test(.enabled(if: Shared.database != nil, "needs nutrition-db/nutrition.fmdb"), arguments: cases)
    func firstHit(_ query: String, _ first: String) throws {
        let db = try db()
        let hit = try #require(db.search(query, limit: 5).first, "no hit for \(query)")
        #expect(hit.food.name.hasPrefix(first), "\(query): first hit \(hit.food.name) [\(hit.food.id)], want \(first)…")
        #expect(hit.food.source.isGeneric, "\(query): a branded product came first")
    }

    @Test func theTableIsLargeAndBilingual() {
        #expect(Self.cases.count >= 40)
        #expect(Self.cases.filter { $0.query.unicodeScalars.contains { $0.value > 0x3000 } }.count >= 15)
    }

    /// A brand name still finds the brand's products (the generic prior does not hide them).
    @Test(.enabled(if: Shared.database != nil, "needs nutrition-db/nutrition.fmdb"))
    func brandsStillFindProducts() throws {
        let db = try db()
        let hit = try #require(db.search("coca cola", limit: 3).first)
        #expect(!hit.food.source.isGeneric && hit.food.name.lowercased().contains("coca"), "\(hit.food.name)")
    }
}
