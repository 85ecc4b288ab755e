public import FoodRecognition
public import FoodCore
public import FoodVision
public import ImageCodecs
public import Nutrition
public import Foundation

/// How a label is shown (from `nutrition-db/labels.json`): names in English and Chinese, emoji, colour, portion.
public struct LabelDisplay: Sendable, Codable, Equatable {
    public var name: String
    public var nameZh: String
    public var emoji: String
    public var color: String
    public var portionGrams: Double
    public var portion: String

    public init(name: String, nameZh: String, emoji: String, color: String, portionGrams: Double, portion: String) {
        self.name = name; self.nameZh = nameZh; self.emoji = emoji; self.color = color
        self.portionGrams = portionGrams; self.portion = portion
    }

    /// For labels with no entry (e.g. a food the user taught with `learn`).
    public static func fallback(_ label: String) -> LabelDisplay {
        LabelDisplay(name: label.replacingOccurrences(of: "_", with: " ").capitalized, nameZh: "", emoji: "🍽️",
                     color: "#888888", portionGrams: PortionTable.fallbackGrams, portion: "1 portion (assumed), 150 g")
    }
}

/// Decode → recognise → nutrition for one photo: the pipeline a library user calls.
public final class MealAnalyzer: @unchecked Sendable {
    public let decoder: PhotoDecoder
    public let recognizer: FoodRecognizer
    public let nutrition: NutritionDatabase?
    /// Names, emoji and colours per label, from the nutrition database's labels.
    public let displays: [String: LabelDisplay]

    /// The user's taught foods (`PersonalFoods`), matched before the model's own answer; nil = none.
    public let taughtFoods: PrototypeMatcher?

    public init(decoder: PhotoDecoder, recognizer: FoodRecognizer, nutrition: NutritionDatabase?, taughtFoods: PrototypeMatcher? = nil) {
        self.decoder = decoder
        self.recognizer = recognizer
        self.nutrition = nutrition
        self.taughtFoods = taughtFoods
        self.displays = Self.displays(from: nutrition)
    }

    /// The bundled pipeline, configured by what the caller passes — the library reads no environment of its own:
    /// the models in `modelsDirectory` (default: `models/` found beside the executable, or `FOODMOMENT_MODELS` of
    /// `environment`), the nutrition tables in `nutritionDirectory` (default: `nutrition-db/`, or
    /// `FOODMOMENT_NUTRITION_DB`; without them foods come back without nutrients), the user's taught foods in
    /// `userDataDirectory` (nil: none) and the network's arithmetic (`inference`, default from `environment`'s
    /// `FOODMOMENT_PRECISION`, else the CPU's best). A program passes `ProcessInfo.processInfo.environment`, or `[:]`.
    public static func load(environment: [String: String], modelsDirectory: String? = nil, nutritionDirectory: URL? = nil,
                            userDataDirectory: String? = nil, decoder: PhotoDecoder = PhotoDecoder(),
                            inference: InferenceOptions? = nil) throws -> MealAnalyzer {
        let nutrition = try? NutritionDatabase.load(directory: nutritionDirectory ?? NutritionDatabase.defaultDirectory(environment: environment),
                                                    cacheDirectory: NutritionDatabase.defaultCacheDirectory(environment: environment))
        let recognizer = try FoodRecognizer.load(modelsDirectory: modelsDirectory ?? ResourceLocator.modelsDirectory(environment: environment),
                                                 userDataDirectory: nil, portions: portions(from: nutrition),
                                                 inference: inference ?? InferenceOptions(environment: environment))
        let taught = try userDataDirectory.flatMap { dir throws(PersonalFoodsError) in
            try PersonalFoods(directory: dir).matcherIfAny(dimension: recognizer.head.dimension)
        }
        return MealAnalyzer(decoder: decoder, recognizer: recognizer, nutrition: nutrition, taughtFoods: taught)
    }

    public func display(_ label: String) -> LabelDisplay { displays[label] ?? .fallback(label) }

    /// Each label's household portion, the base of stage 1's grams, and each dish's generic kind.
    public static func portions(from db: NutritionDatabase?) -> PortionTable {
        let labels = db?.labels ?? [:]
        return PortionTable(grams: labels.mapValues(\.portionGrams), kinds: labels.compactMapValues(\.parent))
    }

    /// Label display data (names, emoji, colour, portion) from the nutrition database's labels.
    public static func displays(from db: NutritionDatabase?) -> [String: LabelDisplay] {
        guard let db else { return [:] }
        return db.labels.mapValues { l in
            LabelDisplay(name: l.name, nameZh: l.nameZh, emoji: l.emoji, color: l.color, portionGrams: l.portionGrams, portion: l.portion)
        }
    }

    public func analyze(path: String) -> PhotoResult {
        let start = ContinuousClock.now
        do {
            return analyze(try PhotoFile.read(atPath: path, maxBytes: decoder.options.maxFileBytes), start: start)
        } catch {
            return PhotoResult(file: path, error: PhotoError(error))
        }
    }

    /// Decode → recognise → nutrition for a file already read and hashed.
    /// `personal`: one user's taught foods in place of `taughtFoods` (the server's accounts).
    public func analyze(_ file: PhotoFile, start: ContinuousClock.Instant = .now, personal: PrototypeMatcher? = nil) -> PhotoResult {
        analyze(file, decoded: decoder.decode(file, start: start), start: start, personal: personal)
    }

    /// Recognise → nutrition for a file already decoded (`decoded` is `decoder.decode(file)`'s answer; `start` the
    /// instant the reading began, for the `total` timing).
    public func analyze(_ file: PhotoFile, decoded: Result<(DecodedImage, DecodeSummary), PhotoError>,
                        start: ContinuousClock.Instant, personal: PrototypeMatcher? = nil) -> PhotoResult {
        let path = file.path
        switch decoded {
        case .failure(let error):
            var result = PhotoResult(file: path, error: error)
            result.photoHash = file.sha256
            return result
        case .success(let (decoded, summary)):
            do {
                let recognition = try recognizer.recognize(decoded.image, personal: personal ?? taughtFoods)
                // The one nutrition join: names, emoji and colour, then nutrients for the grams stage 1 estimated.
                let foods = recognition.foods.map { found in
                    var food = MealFood(found, display: display(found.label))
                    food.joinNutrition(nutrition?.food(forLabel: found.label))
                    return food
                }
                var result = PhotoResult(file: path, decode: summary)
                result.photoHash = file.sha256
                result.foods = foods
                if foods.contains(where: \.hasNutrition) { result.totals = Macros(totalOf: foods) }
                result.unknown = recognition.unknown
                result.top = recognition.top
                result.reference = recognition.reference
                var timings = recognition.timings
                timings[.decode] = summary.decodeMilliseconds
                timings[.total] = (ContinuousClock.now - start).milliseconds
                result.timings = timings
                result.precision = recognizer.backbone.precision
                if let db = nutrition {
                    let items = recognition.foods.compactMap { f in db.food(forLabel: f.label).map { (food: $0, grams: f.grams) } }
                    let flags = Plausibility.check(items)
                    result.flags = flags.isEmpty ? nil : flags
                }
                return result
            } catch {
                var result = PhotoResult(file: path, decode: summary, error: PhotoError(kind: .recognitionFailed, message: "\(error)"))
                result.photoHash = file.sha256
                return result
            }
        }
    }

    /// What `learn` and a correction store for a photo: the food embedding of `region` (nil = the whole photo) and of
    /// its mirror image, as the training tools embed a photo's first two views.
    public func exampleEmbeddings(of image: RGBImage, region: NormalizedBox?) throws -> [[Float]] {
        let views = RegionViews.pair(of: image, mirroredImage: image.applying(.upMirrored), region: region ?? .whole,
                                     size: FoodRecognizer.inputSize)
        return try recognizer.embeddings(of: views).map(\.embedding)
    }

}

extension MealFood {
    /// A photo's food as a diary entry: the same value `analyze` printed, with the photo it was seen in.
    public func logged(photoHash: String?) -> MealFood {
        var f = self
        f.photoHash = photoHash
        return f
    }
}

/// A region of a photo and the same region of its mirror image, as network inputs: the two views a taught food's
/// examples are made of (`MealAnalyzer.exampleEmbeddings`) and every training photo starts with (FoodTraining's
/// `augmentedViews`), so a correction is embedded as the head's training photos were.
package enum RegionViews {
    /// `box` in the mirror image's coordinates.
    package static func mirrored(_ box: NormalizedBox) -> NormalizedBox {
        NormalizedBox(x: 1 - box.x - box.w, y: box.y, w: box.w, h: box.h)
    }

    /// `mirroredImage` is `image.applying(.upMirrored)` (passed in: training reuses it for its random crops).
    package static func pair(of image: RGBImage, mirroredImage: RGBImage, region: NormalizedBox, size: Int) -> [FloatImage] {
        [ImageResampler.tensor(from: image, mode: .region(region), size: size),
         ImageResampler.tensor(from: mirroredImage, mode: .region(mirrored(region)), size: size)]
    }
}
