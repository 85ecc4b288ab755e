import Foundation
public import FoodCore
public import Nutrition

/// Why a food typed by hand could not be logged.
public enum ManualFoodError: Error, Equatable, Sendable, CustomStringConvertible {
    case emptyName
    case badGrams(String)
    case notFound(String)

    public var description: String {
        switch self {
        case .emptyName: "give a food name"
        case .badGrams(let name): "grams of \(name) must be a number ≥ 0 and ≤ 20,000"
        case .notFound(let name): "no food named \(name) in the nutrition database (try searching for it)"
        }
    }
}

/// A food typed by hand (the CLI's `meal add --food banana=120`, the server's meals): looked up in the nutrition
/// database by recognition label, table id (`sr:173944`) or name; without grams, the label's household portion (or 100 g).
public enum ManualFood {
    public static func make(name rawName: String, grams: Double?, db: NutritionDatabase) throws(ManualFoodError) -> MealFood {
        let name = rawName.trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { throw .emptyName }
        if let grams, !(grams.isFinite && grams >= 0 && grams <= 20_000) { throw .badGrams(name) }
        let key = name.lowercased().replacingOccurrences(of: " ", with: "_")
        let label: FoodLabel?, food: Food
        if let l = db.labels[key], let f = db.food(forLabel: key) {
            (label, food) = (l, f)
        } else if let f = db.food(id: name) {
            // A table food's id (`sr:173944`, a search hit's food_id): exactly that food, as its label when one names it.
            (label, food) = (labelNaming(f, db: db), f)
        } else {
            guard let hit = db.search(name, limit: 1).first else { throw .notFound(name) }
            // A hit that is a recognition label's food reads as that label (its name, emoji and portion).
            (label, food) = (labelNaming(hit.food, db: db), hit.food)
        }
        var item = MealFood(label: label?.label ?? key, name: label?.name ?? food.name, nameZh: label?.nameZh ?? "",
                            emoji: label?.emoji ?? "🍽️", color: label?.color ?? MealFood.defaultColor, confidence: 1,
                            grams: grams ?? label?.portionGrams ?? 100, gramsSource: grams == nil ? .defaultPortion : .user,
                            source: .user)
        item.joinNutrition(food)
        return item
    }

    /// The recognition label whose table food is `food` (the first by name when several are), if any.
    static func labelNaming(_ food: Food, db: NutritionDatabase) -> FoodLabel? {
        db.labels.values.sorted(by: { $0.label < $1.label }).first(where: { $0.food == food.id })
    }
}
