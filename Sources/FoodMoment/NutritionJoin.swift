public import FoodCore
public import FoodRecognition
public import Nutrition

extension MealFood {
    /// A food stage 1 recognised, with its label's names, emoji and colour; nutrients are joined by `joinNutrition`.
    public init(_ found: RecognizedFood, display d: LabelDisplay) {
        self.init(label: found.label, name: d.name, nameZh: d.nameZh, emoji: d.emoji, color: d.color,
                  confidence: found.confidence, box: found.box, grams: found.grams, gramsSource: found.gramsSource,
                  source: found.source)
    }

    /// The one nutrition join — for analysis, the LLM's foods, foods typed by hand and the server's meals: the table
    /// food's id, name and provenance, its values per 100 g, and the nutrients for `grams`, computed here once (the
    /// diary, the export and the server keep what this printed). nil clears them (no table food).
    public mutating func joinNutrition(_ food: Food?) {
        guard let food else {
            foodId = nil; foodName = nil; provenance = nil; per100g = nil; nutrients = .zero
            return
        }
        foodId = food.id
        foodName = food.name
        provenance = food.provenance
        // The tables give two decimals at most; rounding keeps the Float→Double noise (27.989999771118164) out of
        // JSON, CSV and the diary.
        per100g = Self.macros(food.per100g, places: 100, energyPlaces: 100)
        nutrients = Self.macros(food.per100g.scaled(by: max(0, grams) / 100), places: 10, energyPlaces: 1)
    }

    /// Table values as `Macros`: a value the table does not report counts 0 for energy and macros (as the meal's sums
    /// always did) and stays nil for sugars and sodium. Sodium (mg) is rounded to 1 mg per portion.
    static func macros(_ v: NutrientValues, places: Double, energyPlaces: Double) -> Macros {
        func r(_ n: Nutrient, _ p: Double) -> Double? { v[n].map { ($0 * p).rounded() / p } }
        return Macros(kcal: r(.energyKcal, energyPlaces) ?? 0, proteinG: r(.protein, places) ?? 0,
                      carbsG: r(.carbohydrate, places) ?? 0, fatG: r(.fat, places) ?? 0, fiberG: r(.fiber, places) ?? 0,
                      sugarsG: r(.sugars, places), sodiumMg: r(.sodium, places == 10 ? 1 : places))
    }
}

extension Macros {
    /// The sums over the foods that have nutrition, each rounded to 0.1 (sodium to 1 mg): a photo's `totals`.
    public init(totalOf foods: [MealFood]) {
        self = foods.filter(\.hasNutrition).reduce(Macros.zero) { $0 + $1.nutrients }
        func r(_ v: Double) -> Double { (v * 10).rounded() / 10 }
        kcal = r(kcal); proteinG = r(proteinG); carbsG = r(carbsG); fatG = r(fatG); fiberG = r(fiberG)
        sugarsG = sugarsG.map(r); sodiumMg = sodiumMg.map { $0.rounded() }
    }
}
