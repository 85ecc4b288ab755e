/// A warning about numbers that look wrong. Flags never change values: the caller decides what to show.
public struct PlausibilityFlag: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable {
        /// kcal per gram outside the bounds for the food's category.
        case energyDensity
        /// Reported energy disagrees with 4 × protein + 4 × carbohydrate + 9 × fat (+ 7 × alcohol).
        case atwaterMismatch
        /// The whole meal is over the meal limit (default 2000 kcal).
        case mealEnergyHigh
        /// A portion weight that is not a positive, finite number or is over 2 kg.
        case implausibleGrams
    }

    public var kind: Kind
    /// The food concerned (nil for meal-level flags).
    public var foodID: String?
    public var message: String
}

/// Plausibility checks for a list of (food, grams) items.
///
/// * Energy density: 0…9 kcal/g for every food (pure fat is ~9); USDA fruit and vegetable categories 0…4 kcal/g
///   (dried fruit reaches ~3.6); beverages 0…1.5 kcal/g.
/// * Atwater: |energy − (4 P + 4 C + 9 F + 7 alcohol)| ≤ max(20 kcal, 15 %) per 100 g. Carbohydrate "by difference"
///   includes fiber, so high-fiber foods sit near the edge; the tolerance covers the usual cases. Skipped when energy was
///   itself estimated from macros (it would agree by construction) or a macro is missing.
/// * Meal: total energy over `mealLimitKcal` (default 2000 kcal).
public enum Plausibility {
    public static let atwaterAbsoluteToleranceKcal = 20.0
    public static let atwaterRelativeTolerance = 0.15

    public static func check(_ items: [(food: Food, grams: Double)], mealLimitKcal: Double = 2000) -> [PlausibilityFlag] {
        var flags: [PlausibilityFlag] = []
        var total = 0.0
        for (food, grams) in items {
            guard grams.isFinite, grams > 0, grams <= 2000 else {
                flags.append(PlausibilityFlag(kind: .implausibleGrams, foodID: food.id, message: "\(food.name): \(grams) g is not a plausible portion"))
                continue
            }
            guard let kcal = food.per100g[.energyKcal] else { continue }
            total += kcal * grams / 100
            let density = kcal / 100
            let upper = upperDensity(food)
            if density < 0 || density > upper {
                flags.append(PlausibilityFlag(kind: .energyDensity, foodID: food.id,
                    message: "\(food.name): \(Portions.format(density)) kcal/g is outside 0…\(Portions.format(upper)) kcal/g for \(food.category.isEmpty ? "this food" : food.category)"))
            }
            if !food.energyEstimatedFromMacros, let p = food.per100g[.protein], let c = food.per100g[.carbohydrate], let f = food.per100g[.fat] {
                let atwater = 4 * p + 4 * c + 9 * f + 7 * (food.per100g[.alcohol] ?? 0)
                let tolerance = max(atwaterAbsoluteToleranceKcal, atwaterRelativeTolerance * max(kcal, atwater))
                if abs(kcal - atwater) > tolerance {
                    flags.append(PlausibilityFlag(kind: .atwaterMismatch, foodID: food.id,
                        message: "\(food.name): energy \(Portions.format(kcal)) kcal/100 g but 4P + 4C + 9F = \(Portions.format(atwater)) kcal/100 g"))
                }
            }
        }
        if total > mealLimitKcal {
            flags.append(PlausibilityFlag(kind: .mealEnergyHigh, foodID: nil,
                message: "meal total \(Int(total.rounded())) kcal is over \(Int(mealLimitKcal)) kcal: check the portions"))
        }
        return flags
    }

    static func upperDensity(_ food: Food) -> Double {
        let c = food.category.lowercased()
        if c == "fruits and fruit juices" || c == "vegetables and vegetable products" { return 4 }
        let words = Set(Text.tokens(c).map(Text.stem))
        if !words.isDisjoint(with: ["beverage", "drink", "tea", "coffee", "water", "juice"]) { return 1.5 }
        return 9
    }
}
