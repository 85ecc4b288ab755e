import FoodCore
import FoodMoment
import Foundation

/// `POST /api/v1/food/analyze`: what the app shows for one photo.
public struct AnalysisResponse: Codable, Sendable, Equatable {
    public struct Nutrition: Codable, Sendable, Equatable {
        public var proteinG: Double, carbsG: Double, fatG: Double, fiberG: Double
        /// Sums over the foods whose table reports them; nil when none does.
        public var sugarsG: Double?, sodiumMg: Double?
        enum CodingKeys: String, CodingKey {
            case proteinG = "protein_g", carbsG = "carbs_g", fatG = "fat_g", fiberG = "fiber_g", sugarsG = "sugars_g", sodiumMg = "sodium_mg"
        }
    }

    /// The app's wire shape of one food (`bounding_box`, `calories`: the FoodMoment app's names), projected from the
    /// library's one food value, `MealFood`; nothing here is computed again.
    public struct Food: Codable, Sendable, Equatable {
        public var label: String
        public var name: String
        public var nameZh: String
        public var emoji: String
        public var color: String
        public var confidence: Double
        public var boundingBox: NormalizedBox
        public var grams: Double
        public var gramsSource: GramsSource
        /// nil when the label has no table food (then no macros either).
        public var calories: Double?
        public var proteinG: Double?, carbsG: Double?, fatG: Double?, fiberG: Double?, sugarsG: Double?, sodiumMg: Double?
        /// Who named it: `model`, `learned`, `llm`, `user`.
        public var source: FoodOrigin
        /// The table food the numbers come from (`sr:173944`) and its provenance.
        public var foodId: String?
        public var provenance: String?

        enum CodingKeys: String, CodingKey {
            case label, name, emoji, color, confidence, grams, calories, source, provenance
            case nameZh = "name_zh", boundingBox = "bounding_box", gramsSource = "grams_source"
            case proteinG = "protein_g", carbsG = "carbs_g", fatG = "fat_g", fiberG = "fiber_g", foodId = "food_id"
            case sugarsG = "sugars_g", sodiumMg = "sodium_mg"
        }
    }

    public var imageId: String
    public var totalCalories: Double
    public var totalNutrition: Nutrition
    public var detectedFoods: [Food]
    /// A short text about the photo, written from the numbers above (never new numbers).
    public var aiAnalysis: String
    public var tags: [String]
    /// True when no food we know is in the photo (`detected_foods` is then empty).
    public var unknown: Bool
    /// True when the photo was kept (`store_photo=true`) under the caller's account.
    public var photoStored: Bool?
    /// Where its owner can GET the kept photo (`/api/v1/images/{image_id}`); nil when it was not kept.
    public var imageURL: String?
    /// With `refine=true`: whether the LLM changed the foods (provider, model) or why not.
    public var refinement: RefinementInfo?

    enum CodingKeys: String, CodingKey {
        case tags, unknown, refinement, photoStored = "photo_stored", imageURL = "image_url"
        case imageId = "image_id", totalCalories = "total_calories", totalNutrition = "total_nutrition"
        case detectedFoods = "detected_foods", aiAnalysis = "ai_analysis"
    }

    public init(_ result: PhotoResult) {
        let foods = result.foods ?? []
        imageId = result.photoHash ?? UUID().uuidString.lowercased()
        detectedFoods = foods.map { f in
            let n = f.knownNutrients
            return Food(label: f.label, name: f.name, nameZh: f.nameZh, emoji: f.emoji, color: f.color,
                        confidence: f.confidence, boundingBox: f.box ?? .whole, grams: f.grams, gramsSource: f.gramsSource,
                        calories: n?.kcal, proteinG: n?.proteinG, carbsG: n?.carbsG, fatG: n?.fatG, fiberG: n?.fiberG,
                        sugarsG: n?.sugarsG, sodiumMg: n?.sodiumMg, source: f.source, foodId: f.foodId, provenance: f.provenance)
        }
        let totals = result.totals ?? Macros()
        totalCalories = totals.kcal
        totalNutrition = Nutrition(proteinG: totals.proteinG, carbsG: totals.carbsG, fatG: totals.fatG, fiberG: totals.fiberG,
                                   sugarsG: totals.sugarsG, sodiumMg: totals.sodiumMg)
        unknown = result.unknown ?? foods.isEmpty
        refinement = result.refinement
        tags = Self.tags(foods: foods, totals: totals)
        aiAnalysis = Self.summary(foods: foods, totals: totals, unknown: unknown)
    }

    /// Rule-based tags from the totals: the same thresholds as a nutrition label's claims (per meal).
    static func tags(foods: [MealFood], totals: Macros) -> [String] {
        var tags: [String] = []
        if foods.count > 1 { tags.append("several_foods") }
        if totals.kcal > 0 {
            if totals.proteinG >= 20 { tags.append("high_protein") }
            if totals.fiberG >= 6 { tags.append("high_fiber") }
            if totals.kcal >= 800 { tags.append("high_calorie") } else if totals.kcal <= 200 { tags.append("light") }
            if totals.fatG * 9 >= 0.4 * totals.kcal { tags.append("high_fat") }
        }
        return tags
    }

    static func summary(foods: [MealFood], totals: Macros, unknown: Bool) -> String {
        guard !foods.isEmpty else {
            return unknown ? "No food we know is in this photo." : "No food was found in this photo."
        }
        let names = foods.map { "\($0.name.lowercased()) (\(Int($0.grams.rounded())) g)" }
        let list = names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " and " + names.last!
        return "This looks like \(list): about \(Int(totals.kcal.rounded())) kcal, "
            + "\(Int(totals.proteinG.rounded())) g protein, \(Int(totals.carbsG.rounded())) g carbs and \(Int(totals.fatG.rounded())) g fat."
    }
}
