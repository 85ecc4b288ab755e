/// The nutrients the database keeps, in record order. Units are fixed per nutrient (see `unit`).
///
/// Raw values are *per 100 g of edible portion* (USDA) or *per 100 g as sold* (Open Food Facts).
/// Sodium is always stored in milligrams (Open Food Facts grams are converted at build time).
public enum Nutrient: Int, Sendable, CaseIterable, Codable, Hashable {
    case energyKcal, protein, fat, saturatedFat, carbohydrate, fiber, sugars, sodium
    case cholesterol, calcium, iron, potassium, magnesium, zinc, phosphorus
    case vitaminC, vitaminA, vitaminD, vitaminB12, folate, water, alcohol, caffeine

    /// Nutrients stored for Open Food Facts products (the first eight, in this order).
    public static let core: [Nutrient] = [.energyKcal, .protein, .fat, .saturatedFat, .carbohydrate, .fiber, .sugars, .sodium]

    /// Stable machine key (used in JSON).
    public var key: String {
        switch self {
        case .energyKcal: "energy_kcal"
        case .protein: "protein_g"
        case .fat: "fat_g"
        case .saturatedFat: "saturated_fat_g"
        case .carbohydrate: "carbohydrate_g"
        case .fiber: "fiber_g"
        case .sugars: "sugars_g"
        case .sodium: "sodium_mg"
        case .cholesterol: "cholesterol_mg"
        case .calcium: "calcium_mg"
        case .iron: "iron_mg"
        case .potassium: "potassium_mg"
        case .magnesium: "magnesium_mg"
        case .zinc: "zinc_mg"
        case .phosphorus: "phosphorus_mg"
        case .vitaminC: "vitamin_c_mg"
        case .vitaminA: "vitamin_a_rae_mcg"
        case .vitaminD: "vitamin_d_mcg"
        case .vitaminB12: "vitamin_b12_mcg"
        case .folate: "folate_dfe_mcg"
        case .water: "water_g"
        case .alcohol: "alcohol_g"
        case .caffeine: "caffeine_mg"
        }
    }

    /// English display name.
    public var displayName: String {
        switch self {
        case .energyKcal: "Energy"
        case .protein: "Protein"
        case .fat: "Fat"
        case .saturatedFat: "Saturated fat"
        case .carbohydrate: "Carbohydrate"
        case .fiber: "Fiber"
        case .sugars: "Sugars"
        case .sodium: "Sodium"
        case .cholesterol: "Cholesterol"
        case .calcium: "Calcium"
        case .iron: "Iron"
        case .potassium: "Potassium"
        case .magnesium: "Magnesium"
        case .zinc: "Zinc"
        case .phosphorus: "Phosphorus"
        case .vitaminC: "Vitamin C"
        case .vitaminA: "Vitamin A (RAE)"
        case .vitaminD: "Vitamin D"
        case .vitaminB12: "Vitamin B12"
        case .folate: "Folate (DFE)"
        case .water: "Water"
        case .alcohol: "Alcohol"
        case .caffeine: "Caffeine"
        }
    }

    public var unit: String {
        switch self {
        case .energyKcal: "kcal"
        case .protein, .fat, .saturatedFat, .carbohydrate, .fiber, .sugars, .water, .alcohol: "g"
        case .vitaminA, .vitaminD, .vitaminB12, .folate: "µg"
        default: "mg"
        }
    }
}

/// A set of nutrient amounts; `nil` means "not reported by the source" (never silently zero).
public struct NutrientValues: Sendable, Equatable, Codable {
    /// Indexed by `Nutrient.rawValue`; NaN = not reported.
    public private(set) var raw: [Float]

    public init() { raw = Array(repeating: .nan, count: Nutrient.allCases.count) }

    public init(raw: [Float]) {
        var r = Array(raw.prefix(Nutrient.allCases.count))
        if r.count < Nutrient.allCases.count { r += Array(repeating: .nan, count: Nutrient.allCases.count - r.count) }
        self.raw = r
    }

    public subscript(_ n: Nutrient) -> Double? {
        get { raw[n.rawValue].isNaN ? nil : Double(raw[n.rawValue]) }
        set { raw[n.rawValue] = newValue.map { Float($0) } ?? .nan }
    }

    /// The same values scaled by `factor` (e.g. grams / 100).
    public func scaled(by factor: Double) -> NutrientValues {
        NutrientValues(raw: raw.map { $0.isNaN ? .nan : Float(Double($0) * factor) })
    }

    /// Reported nutrients in record order.
    public var reported: [(nutrient: Nutrient, value: Double)] {
        Nutrient.allCases.compactMap { n in self[n].map { (n, $0) } }
    }

    public static func == (a: NutrientValues, b: NutrientValues) -> Bool {
        zip(a.raw, b.raw).allSatisfy { $0 == $1 || ($0.isNaN && $1.isNaN) }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: DynamicKey.self)
        for (n, v) in reported { try c.encode((v * 1000).rounded() / 1000, forKey: DynamicKey(n.key)) }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: DynamicKey.self)
        self.init()
        for n in Nutrient.allCases { self[n] = try c.decodeIfPresent(Double.self, forKey: DynamicKey(n.key)) }
    }

    struct DynamicKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ s: String) { stringValue = s }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
