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
/// database by recognition label or name; without grams, the label's household portion (or 100 g).
public enum ManualFood {
    public static func make(name rawName: String, grams: Double?, db: NutritionDatabase) throws(ManualFoodError) -> MealFood {
        let name = rawName.trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { throw .emptyName }
        if let grams, !(grams.isFinite && grams >= 0 && grams <= 20_000) { throw .badGrams(name) }
        let key = name.lowercased().replacingOccurrences(of: " ", with: "_")
        if let label = db.labels[key], let food = db.food(forLabel: key) {
            return MealFood(label: label.label, name: label.name, nameZh: label.nameZh, emoji: label.emoji, confidence: 1,
                            grams: grams ?? label.portionGrams, gramsSource: grams == nil ? .defaultPortion : .user,
                            source: .user, foodId: food.id, provenance: food.provenance, per100g: macros(food))
        }
        guard let hit = db.search(name, limit: 1).first else { throw .notFound(name) }
        // A hit that is a recognition label's food reads as that label (its name, emoji and portion).
        if let label = db.labels.values.sorted(by: { $0.label < $1.label }).first(where: { $0.food == hit.food.id }) {
            return MealFood(label: label.label, name: label.name, nameZh: label.nameZh, emoji: label.emoji, confidence: 1,
                            grams: grams ?? label.portionGrams, gramsSource: grams == nil ? .defaultPortion : .user,
                            source: .user, foodId: hit.food.id, provenance: hit.food.provenance, per100g: macros(hit.food))
        }
        return MealFood(label: key, name: hit.food.name, confidence: 1, grams: grams ?? 100,
                        gramsSource: grams == nil ? .defaultPortion : .user, source: .user, foodId: hit.food.id,
                        provenance: hit.food.provenance, per100g: macros(hit.food))
    }

    /// Per-100 g macros, rounded to 0.001 like the database's own JSON (the tables hold Float values).
    public static func macros(_ f: Food) -> Macros {
        func v(_ n: Nutrient) -> Double { ((f.per100g[n] ?? 0) * 1000).rounded() / 1000 }
        return Macros(kcal: v(.energyKcal), proteinG: v(.protein), carbsG: v(.carbohydrate), fatG: v(.fat), fiberG: v(.fiber))
    }
}
