/// Where a food's numbers come from.
public enum FoodSource: UInt8, Sendable, Codable, CaseIterable, Comparable {
    case srLegacy = 1, foundation = 2, fndds = 3
    case offLifyzer2019 = 4, offExport2020 = 5, offExport2021 = 6, offExport2024 = 7

    /// The id prefix (`sr:173944`, `foundation:321360`, `fndds:63107010`, `off:05449000039231`).
    public var idPrefix: String {
        switch self {
        case .srLegacy: "sr"
        case .foundation: "foundation"
        case .fndds: "fndds"
        default: "off"
        }
    }

    /// Human data type, as FoodData Central names it (or the Open Food Facts dump used).
    public var dataType: String {
        switch self {
        case .srLegacy: "USDA SR Legacy (2018-04)"
        case .foundation: "USDA Foundation Foods (2024-10-31)"
        case .fndds: "USDA FNDDS 2021-2023"
        case .offLifyzer2019: "Open Food Facts dump 2019-06-14 (Lifyzer)"
        case .offExport2020: "Open Food Facts export 2020"
        case .offExport2021: "Open Food Facts export 2021"
        case .offExport2024: "Open Food Facts export 2024"
        }
    }

    /// USDA generic foods rank before branded products in search.
    public var isGeneric: Bool { rawValue <= FoodSource.fndds.rawValue }

    public static func < (a: FoodSource, b: FoodSource) -> Bool { a.rawValue < b.rawValue }
}

/// A household measure with its gram weight ("1 medium (7\" to 7-7/8\" long)" = 118 g).
public struct Portion: Sendable, Codable, Equatable, Hashable {
    /// How many units the gram weight is for (usually 1).
    public var amount: Double
    /// The measure without the amount: "medium (7\" to 7-7/8\" long)", "cup, sliced", "slice".
    public var unit: String
    /// Grams for `amount` units.
    public var grams: Double

    public init(amount: Double, unit: String, grams: Double) {
        self.amount = amount; self.unit = unit; self.grams = grams
    }

    /// "1 medium (7\" to 7-7/8\" long), 118 g".
    public var description: String { "\(Portions.format(amount)) \(unit), \(Portions.format(grams)) g" }
}

/// One food or packaged product with its per-100 g values and provenance.
public struct Food: Sendable, Codable, Equatable, Identifiable {
    /// `sr:173944`, `foundation:321360`, `fndds:63107010` or `off:<GTIN-14>`.
    public var id: String
    public var name: String
    public var source: FoodSource
    /// USDA food category or WWEIA category; empty for products.
    public var category: String
    /// Brand of a packaged product; empty for USDA foods.
    public var brand: String
    /// Values per 100 g (edible portion for USDA, as sold for Open Food Facts).
    public var per100g: NutrientValues
    /// Foundation foods without plain energy (nutrient 1008) carry Atwater energy (2048, else 2047).
    public var energyIsAtwater: Bool
    /// Open Food Facts products without a usable energy value: kcal = 4 × protein + 9 × fat + 4 × carbohydrate.
    public var energyEstimatedFromMacros: Bool
    /// Household measures with gram weights.
    public var portions: [Portion]
    /// Label serving size text of a product ("30 g", "1 bar (45 g)") and its grams when known.
    public var servingSize: String?
    public var servingGrams: Double?
    /// GTIN-14 of a product (14 digits, zero-padded).
    public var gtin14: String?

    /// FDC id / FNDDS food code / GTIN as text, without the prefix.
    public var sourceID: String { String(id.split(separator: ":", maxSplits: 1).last ?? "") }

    /// "USDA SR Legacy (2018-04), FDC 173944".
    public var provenance: String {
        switch source {
        case .srLegacy, .foundation: "\(source.dataType), FDC id \(sourceID)"
        case .fndds: "\(source.dataType), food code \(sourceID)"
        default: "\(source.dataType), barcode \(sourceID); data © Open Food Facts contributors, ODbL 1.0"
        }
    }
}

/// Nutrients of an amount of a food, with where the numbers and the grams came from.
public struct NutritionFacts: Sendable, Codable, Equatable {
    public var food: Food
    public var grams: Double
    /// How the grams were obtained ("1 medium (7\" to 7-7/8\" long), 118 g" or "150 g").
    public var portion: String
    public var nutrients: NutrientValues
}
