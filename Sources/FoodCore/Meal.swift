public import Foundation

/// Breakfast, lunch, dinner or snack (as in the app's data model).
public enum MealType: String, Sendable, Codable, CaseIterable, Comparable {
    case breakfast, lunch, dinner, snack

    public static func < (a: MealType, b: MealType) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// Where a food's grams came from.
public enum GramsSource: String, Sendable, Codable, Hashable, CaseIterable {
    /// The label's household portion (one food alone in the photo).
    case defaultPortion = "default_portion"
    /// No coin: the food's share of the photo (of a shared plate, or of a photo of it alone) scales its typical amount.
    case boxArea = "box_area"
    /// The box's area at the scale of a coin found in the photo.
    case referenceObject = "reference_object"
    /// The optional LLM refinement's estimate.
    case llm
    /// Typed or edited by the user.
    case user
}

/// Who named a food.
public enum FoodOrigin: String, Sendable, Codable, Hashable, CaseIterable {
    /// The on-device food head / cell detector.
    case model
    /// A food the user taught with `foodmoment learn`.
    case learned
    /// The optional LLM refinement.
    case llm
    /// Added or renamed by the user.
    case user
}

/// What logging a photo did to the diary.
public enum MealOutcome: String, Sendable, Codable, Hashable {
    /// A new meal record.
    case created
    /// Joined an existing meal (same type, within the gap, same local day).
    case merged
    /// That photo (content hash) is already in the diary; nothing changed.
    case duplicate
    /// That photo was already logged and its foods were replaced by the new ones.
    case replaced
    /// The user deleted the meal this photo was in: it is not logged again (`--force` logs it on purpose).
    case deleted
}

/// Energy, macronutrients, sugars and sodium. Per item these are for the item's grams; per meal they are sums.
/// Sugars and sodium are nil where the table has no value (a sum is nil only when no food had one).
public struct Macros: Sendable, Codable, Equatable, Hashable {
    public var kcal: Double
    public var proteinG: Double
    public var carbsG: Double
    public var fatG: Double
    public var fiberG: Double
    /// Total sugars, grams.
    public var sugarsG: Double?
    /// Sodium, milligrams.
    public var sodiumMg: Double?

    public init(kcal: Double = 0, proteinG: Double = 0, carbsG: Double = 0, fatG: Double = 0, fiberG: Double = 0,
                sugarsG: Double? = nil, sodiumMg: Double? = nil) {
        self.kcal = kcal; self.proteinG = proteinG; self.carbsG = carbsG; self.fatG = fatG; self.fiberG = fiberG
        self.sugarsG = sugarsG; self.sodiumMg = sodiumMg
    }

    public static let zero = Macros()

    public static func + (a: Macros, b: Macros) -> Macros {
        func add(_ x: Double?, _ y: Double?) -> Double? { x == nil && y == nil ? nil : (x ?? 0) + (y ?? 0) }
        return Macros(kcal: a.kcal + b.kcal, proteinG: a.proteinG + b.proteinG, carbsG: a.carbsG + b.carbsG,
                      fatG: a.fatG + b.fatG, fiberG: a.fiberG + b.fiberG, sugarsG: add(a.sugarsG, b.sugarsG),
                      sodiumMg: add(a.sodiumMg, b.sodiumMg))
    }

    /// These values scaled by `factor` (per-100 g values × grams / 100).
    public func scaled(by factor: Double) -> Macros {
        Macros(kcal: kcal * factor, proteinG: proteinG * factor, carbsG: carbsG * factor, fatG: fatG * factor,
               fiberG: fiberG * factor, sugarsG: sugarsG.map { $0 * factor }, sodiumMg: sodiumMg.map { $0 * factor })
    }

    /// Rounded for storage and display: kcal and sodium mg to 1, grams to 0.1.
    public var rounded: Macros {
        func r(_ v: Double) -> Double { (v * 10).rounded() / 10 }
        return Macros(kcal: kcal.rounded(), proteinG: r(proteinG), carbsG: r(carbsG), fatG: r(fatG), fiberG: r(fiberG),
                      sugarsG: sugarsG.map(r), sodiumMg: sodiumMg.map { $0.rounded() })
    }

    enum CodingKeys: String, CodingKey {
        case kcal
        case proteinG = "protein_g", carbsG = "carbs_g", fatG = "fat_g", fiberG = "fiber_g"
        case sugarsG = "sugars_g", sodiumMg = "sodium_mg"
    }

    /// A value a source leaves out reads as 0 (energy and macros) or unknown (sugars, sodium), as the tables do.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func v(_ k: CodingKeys) throws -> Double { try c.decodeIfPresent(Double.self, forKey: k) ?? 0 }
        self.init(kcal: try v(.kcal), proteinG: try v(.proteinG), carbsG: try v(.carbsG), fatG: try v(.fatG), fiberG: try v(.fiberG),
                  sugarsG: try c.decodeIfPresent(Double.self, forKey: .sugarsG),
                  sodiumMg: try c.decodeIfPresent(Double.self, forKey: .sodiumMg))
    }
}

/// One food, the same value from the photo to the diary: what was recognised (or typed), where, how much, its names,
/// and its nutrients with where each number came from. `MealAnalyzer` produces it (the nutrition joined once),
/// `analyze` prints it, the diary stores it, export, import, the report and the server read it; an edit of the grams
/// scales `per100g`.
///
/// In JSON a food is one flat object: the nutrients (`kcal`, `protein_g`, … `sugars_g`, `sodium_mg`) sit beside the
/// label and grams when the food has numbers, and are left out when it has none. Files written before 0.6.0 kept a
/// diary food's numbers under `nutrients`; they still read.
public struct MealFood: Sendable, Codable, Equatable, Hashable {
    public var label: String
    public var name: String
    public var nameZh: String
    public var emoji: String
    /// The label's colour for boxes and charts (`#RRGGBB`).
    public var color: String
    public var confidence: Double
    /// Where in the photo (nil for foods added by hand).
    public var box: NormalizedBox?
    public var grams: Double
    public var gramsSource: GramsSource
    /// Who named the food.
    public var source: FoodOrigin
    /// The nutrition table food the numbers come from (nil when the label maps to none), its name and provenance.
    public var foodId: String?
    public var foodName: String?
    public var provenance: String?
    /// Table values per 100 g, kept so an edit of `grams` recomputes `nutrients` without the table.
    public var per100g: Macros?
    /// For `grams`: computed once from the table (kcal to 1, grams to 0.1, sodium to 1 mg); zero when no table food.
    public var nutrients: Macros
    /// Content hash of the photo the food was seen in (nil for hand-added foods and in `analyze`'s own output).
    public var photoHash: String?

    public static let defaultColor = "#888888"

    public init(label: String, name: String, nameZh: String = "", emoji: String = "🍽️", color: String = MealFood.defaultColor,
                confidence: Double = 1, box: NormalizedBox? = nil, grams: Double, gramsSource: GramsSource, source: FoodOrigin,
                foodId: String? = nil, foodName: String? = nil, provenance: String? = nil, per100g: Macros? = nil,
                nutrients: Macros? = nil, photoHash: String? = nil) {
        self.label = label; self.name = name; self.nameZh = nameZh; self.emoji = emoji; self.color = color
        self.confidence = confidence; self.box = box; self.grams = grams; self.gramsSource = gramsSource; self.source = source
        self.foodId = foodId; self.foodName = foodName; self.provenance = provenance; self.per100g = per100g
        self.photoHash = photoHash
        self.nutrients = nutrients ?? Self.nutrients(per100g: per100g, grams: grams)
    }

    /// The nutrients for `grams` from the per-100 g values (zero without them), rounded as stored.
    static func nutrients(per100g: Macros?, grams: Double) -> Macros {
        per100g.map { $0.scaled(by: grams / 100).rounded } ?? .zero
    }

    /// The nutrients when the food has numbers, else nil (shown as "—", left out of JSON).
    public var knownNutrients: Macros? { hasNutrition ? nutrients : nil }

    /// Whether the food has numbers (a table food, per-100 g values or nutrients given); without, JSON leaves them out.
    public var hasNutrition: Bool { foodId != nil || per100g != nil || nutrients != .zero }

    /// Changes the grams (by hand) and recomputes the nutrients from the per-100 g values (or, for a food imported
    /// without them, in proportion).
    public mutating func setGrams(_ newGrams: Double, source: GramsSource = .user) {
        if per100g != nil {
            nutrients = Self.nutrients(per100g: per100g, grams: newGrams)
        } else if grams > 0 {
            nutrients = nutrients.scaled(by: newGrams / grams).rounded
        } else {
            nutrients = .zero
        }
        grams = newGrams
        gramsSource = source
    }

    enum CodingKeys: String, CodingKey {
        case label, name, emoji, color, confidence, box, grams, source, provenance
        case nameZh = "name_zh", gramsSource = "grams_source", foodId = "food_id", foodName = "food_name"
        case per100g = "per_100g", photoHash = "photo_hash"
        /// Before 0.6.0 a diary food's numbers were nested under this key.
        case legacyNutrients = "nutrients"
        case kcal
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        label = try c.decode(String.self, forKey: .label)
        name = try c.decode(String.self, forKey: .name)
        nameZh = try c.decodeIfPresent(String.self, forKey: .nameZh) ?? ""
        emoji = try c.decodeIfPresent(String.self, forKey: .emoji) ?? "🍽️"
        color = try c.decodeIfPresent(String.self, forKey: .color) ?? Self.defaultColor
        confidence = try c.decodeIfPresent(Double.self, forKey: .confidence) ?? 1
        box = try c.decodeIfPresent(NormalizedBox.self, forKey: .box)
        grams = try c.decode(Double.self, forKey: .grams)
        gramsSource = try c.decode(GramsSource.self, forKey: .gramsSource)
        source = try c.decode(FoodOrigin.self, forKey: .source)
        foodId = try c.decodeIfPresent(String.self, forKey: .foodId)
        foodName = try c.decodeIfPresent(String.self, forKey: .foodName)
        provenance = try c.decodeIfPresent(String.self, forKey: .provenance)
        per100g = try c.decodeIfPresent(Macros.self, forKey: .per100g)
        photoHash = try c.decodeIfPresent(String.self, forKey: .photoHash)
        if let nested = try c.decodeIfPresent(Macros.self, forKey: .legacyNutrients) {
            nutrients = nested
        } else if c.contains(.kcal) {
            nutrients = try Macros(from: decoder)
        } else {
            nutrients = Self.nutrients(per100g: per100g, grams: grams)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(label, forKey: .label)
        try c.encode(name, forKey: .name)
        try c.encode(nameZh, forKey: .nameZh)
        try c.encode(emoji, forKey: .emoji)
        try c.encode(color, forKey: .color)
        try c.encode(confidence, forKey: .confidence)
        try c.encodeIfPresent(box, forKey: .box)
        try c.encode(grams, forKey: .grams)
        try c.encode(gramsSource, forKey: .gramsSource)
        try c.encode(source, forKey: .source)
        try c.encodeIfPresent(foodId, forKey: .foodId)
        try c.encodeIfPresent(foodName, forKey: .foodName)
        try c.encodeIfPresent(provenance, forKey: .provenance)
        try c.encodeIfPresent(per100g, forKey: .per100g)
        try c.encodeIfPresent(photoHash, forKey: .photoHash)
        if hasNutrition { try nutrients.encode(to: encoder) }
    }
}

/// Where a photo's time came from (`time_source` in every format).
public enum TimeSource: String, Sendable, Codable, Hashable, CaseIterable {
    /// EXIF DateTimeOriginal, with OffsetTimeOriginal when present.
    case exif
    /// EXIF DateTimeOriginal without an offset: read in the machine's time zone.
    case exifLocal = "exif_local"
    /// The user's `--time` (or the server's meal time).
    case given
    /// The file's modification time, which copying a photo changes: never used to merge photos into one meal.
    case fileTime = "file_time"

    /// A word this version does not know (a newer client's) reads as the least trusted source.
    public init(from decoder: any Decoder) throws {
        self = TimeSource(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .fileTime
    }
}

/// A photo that belongs to a meal record.
public struct MealPhoto: Sendable, Codable, Equatable, Hashable {
    /// SHA-256 of the file's bytes, hex: the identity that keeps a photo from being logged twice.
    public var hash: String
    public var path: String
    public var takenAt: Date
    /// Where `takenAt` came from. Only a file time is not trusted to say which photos belong to one meal.
    public var timeSource: TimeSource

    public init(hash: String, path: String, takenAt: Date, timeSource: TimeSource) {
        self.hash = hash; self.path = path; self.takenAt = takenAt; self.timeSource = timeSource
    }

    enum CodingKeys: String, CodingKey {
        case hash, path
        case takenAt = "taken_at", timeSource = "time_source"
    }
}

/// A meal in the diary: one or more photos of one meal, their foods and the totals recomputed from the foods.
public struct MealRecord: Sendable, Codable, Equatable {
    /// Stable identity (a UUID string), kept across export and import.
    public var id: String
    public var type: MealType
    public var time: Date
    /// The photo's UTC offset in seconds when known (EXIF OffsetTimeOriginal), for showing local time.
    public var utcOffsetSeconds: Int?
    public var title: String
    public var foods: [MealFood]
    public var photos: [MealPhoto]
    public var tags: [String]
    /// Free text about the meal (the LLM's notes, when refinement ran; else a summary of stage 1).
    public var analysis: String?
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: String = UUID().uuidString, type: MealType, time: Date, utcOffsetSeconds: Int? = nil, title: String,
                foods: [MealFood], photos: [MealPhoto] = [], tags: [String] = [], analysis: String? = nil,
                createdAt: Date, updatedAt: Date? = nil) {
        self.id = id; self.type = type; self.time = time; self.utcOffsetSeconds = utcOffsetSeconds; self.title = title
        self.foods = foods; self.photos = photos; self.tags = tags; self.analysis = analysis
        self.createdAt = createdAt; self.updatedAt = updatedAt ?? createdAt
    }

    /// Always the sum of the foods: never stored apart from them.
    public var totals: Macros { foods.reduce(Macros.zero) { $0 + $1.nutrients }.rounded }

    enum CodingKeys: String, CodingKey {
        case id, type, time, title, foods, photos, tags, analysis, totals
        case utcOffsetSeconds = "utc_offset_seconds", createdAt = "created_at", updatedAt = "updated_at"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        type = try c.decode(MealType.self, forKey: .type)
        time = try c.decode(Date.self, forKey: .time)
        utcOffsetSeconds = try c.decodeIfPresent(Int.self, forKey: .utcOffsetSeconds)
        title = try c.decode(String.self, forKey: .title)
        foods = try c.decode([MealFood].self, forKey: .foods)
        photos = try c.decodeIfPresent([MealPhoto].self, forKey: .photos) ?? []
        tags = try c.decodeIfPresent([String].self, forKey: .tags) ?? []
        analysis = try c.decodeIfPresent(String.self, forKey: .analysis)
        createdAt = try c.decode(Date.self, forKey: .createdAt)
        updatedAt = try c.decodeIfPresent(Date.self, forKey: .updatedAt) ?? createdAt
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(type, forKey: .type)
        try c.encode(time, forKey: .time)
        try c.encodeIfPresent(utcOffsetSeconds, forKey: .utcOffsetSeconds)
        try c.encode(title, forKey: .title)
        try c.encode(totals, forKey: .totals)
        try c.encode(foods, forKey: .foods)
        try c.encode(photos, forKey: .photos)
        try c.encode(tags, forKey: .tags)
        try c.encodeIfPresent(analysis, forKey: .analysis)
        try c.encode(createdAt, forKey: .createdAt)
        try c.encode(updatedAt, forKey: .updatedAt)
    }
}

public struct WaterLog: Sendable, Codable, Equatable {
    public var id: String
    public var time: Date
    public var milliliters: Double
    public init(id: String = UUID().uuidString, time: Date, milliliters: Double) {
        self.id = id; self.time = time; self.milliliters = milliliters
    }
}

public struct WeightLog: Sendable, Codable, Equatable {
    public var id: String
    public var time: Date
    public var kilograms: Double
    public init(id: String = UUID().uuidString, time: Date, kilograms: Double) {
        self.id = id; self.time = time; self.kilograms = kilograms
    }
}

/// Daily targets; nil means "not set".
public struct Goals: Sendable, Codable, Equatable {
    public var dailyKcal: Double?
    public var proteinG: Double?
    public var carbsG: Double?
    public var fatG: Double?
    public var waterMl: Double?
    public var targetWeightKg: Double?

    public init(dailyKcal: Double? = nil, proteinG: Double? = nil, carbsG: Double? = nil, fatG: Double? = nil,
                waterMl: Double? = nil, targetWeightKg: Double? = nil) {
        self.dailyKcal = dailyKcal; self.proteinG = proteinG; self.carbsG = carbsG; self.fatG = fatG
        self.waterMl = waterMl; self.targetWeightKg = targetWeightKg
    }

    enum CodingKeys: String, CodingKey {
        case dailyKcal = "daily_kcal", proteinG = "protein_g", carbsG = "carbs_g", fatG = "fat_g"
        case waterMl = "water_ml", targetWeightKg = "target_weight_kg"
    }

    /// The one rule for "a day within the kcal goal" (stats, the HTML report and the diary all use it): within ±10 %
    /// of the goal. Nil when no goal is set.
    public func kcalWithinGoal(_ kcal: Double) -> Bool? {
        guard let goal = dailyKcal, goal > 0 else { return nil }
        return abs(kcal - goal) <= goal * Self.kcalGoalTolerance
    }

    /// ±10 %.
    public static let kcalGoalTolerance = 0.1
}

public struct Achievement: Sendable, Codable, Equatable {
    public var id: String
    public var title: String
    public var unlockedAt: Date
    public init(id: String, title: String, unlockedAt: Date) { self.id = id; self.title = title; self.unlockedAt = unlockedAt }
    enum CodingKeys: String, CodingKey { case id, title; case unlockedAt = "unlocked_at" }
}
