public import FoodCore
public import FoodVision
import Foundation

/// Household portion grams per label: what one food alone in a photo weighs (`nutrition-db/labels.json` gives
/// them; portioning scales them by the food's share of a plate or a coin's scale).
public struct PortionTable: Sendable, Equatable {
    public var grams: [String: Double]
    /// The generic kind of each dish label (`ramen` → `noodle_soup`, labels.json `parent`): the answer when the head
    /// is too unsure of the dish to name it (`OpenSetRule`).
    public var kinds: [String: String]
    /// For labels with no entry (e.g. a food the user taught with `learn`).
    public static let fallbackGrams: Double = 150

    public init(grams: [String: Double] = [:], kinds: [String: String] = [:]) { self.grams = grams; self.kinds = kinds }

    public func grams(for label: String) -> Double { grams[label] ?? Self.fallbackGrams }
}

/// One food found in a photo: what stage 1 knows (label, where, how sure, how much). Names, emoji and nutrients
/// are joined on later from the nutrition tables.
public struct RecognizedFood: Sendable, Codable, Equatable {
    public var label: String
    public var confidence: Double
    public var box: NormalizedBox
    public var grams: Double
    public var gramsSource: GramsSource
    public var source: FoodOrigin

    public init(label: String, confidence: Double, box: NormalizedBox, grams: Double, gramsSource: GramsSource,
                source: FoodOrigin) {
        self.label = label; self.confidence = confidence; self.box = box; self.grams = grams
        self.gramsSource = gramsSource; self.source = source
    }

    enum CodingKeys: String, CodingKey {
        case label, confidence, box, grams, source
        case gramsSource = "grams_source"
    }
}

/// Stage 1 for one photo.
public struct Recognition: Sendable, Codable, Equatable {
    public var foods: [RecognizedFood]
    /// True when the photo was judged not to show a known food (nothing forced onto a label).
    public var unknown: Bool
    /// The head's five best labels for the whole photo.
    public var top: [LabelScore]
    /// Milliseconds per step: preprocess, backbone, head, localisation.
    public var timings: StageTimings
    /// The scale reference (coin) found in the photo, if any; never one of `foods`.
    public var reference: ReferenceObject?
    /// True when the boxes came from the whole-photo pass's map because `RecognitionCalibration.localizationGate`
    /// judged the localisation pass unnecessary; nil when that pass ran (or there is none).
    public var localizationSkipped: Bool?
}

/// When the whole-photo pass shows one food alone, confidently, with no coin and not on a shared plate, its own 7×7
/// map gives that food's box and the localisation pass (three quarters of the network's work) is skipped. Every other
/// photo — a plate, several foods, a coin (whose finder needs the finer map), an unsure label — gets the pass.
public struct LocalizationGate: Sendable, Codable, Equatable {
    /// The food head's best whole-photo probability must reach this.
    public var minTopProbability: Float
    /// No cell of the whole-photo map may reach this coin probability (the coin head on the 7×7 map).
    public var maxCoinProbability: Float
    /// How the numbers were chosen.
    public var note: String?

    public init(minTopProbability: Float, maxCoinProbability: Float, note: String? = nil) {
        self.minTopProbability = minTopProbability
        self.maxCoinProbability = maxCoinProbability
        self.note = note
    }
}

/// Thresholds chosen by `foodmoment dev calibrate` on dev photos and non-food photos (see README).
public struct RecognitionCalibration: Sendable, Codable, Equatable {
    /// A photo whose best head probability is below this is "unknown / not food".
    public var unknownThreshold: Float = 0.35
    /// A point of the activation map belongs to a food when it is at least this far up the food's activation range.
    public var cellThreshold: Float = 0.5
    /// The same when the photo shows one food (its whole extent matters, not only its strongest part).
    public var singleFoodCellThreshold: Float = 0.6
    /// Labels other than the best with a whole-photo probability below this are not localised.
    public var candidateThreshold: Float = 0.1
    /// Input size for the localisation map (0 = reuse the 224×224 classification pass; 448 gives a 14×14 map on
    /// which the items of a shared plate look as large as the crops the head was trained on).
    public var localizationSize: Int = 0
    /// A photo whose ImageNet "food context" mass (see `FoodContext`) is below this is "unknown / not food" …
    public var foodContextThreshold: Float = 0
    /// … unless the food head gives its best label at least this probability (a clear single food the ImageNet
    /// classes have no name for, like a litchi); nil = the food context always counts.
    public var confidentFoodProbability: Float?
    /// The learned-food matcher's cosine-similarity threshold.
    public var matcherThreshold: Float = 0.8
    /// Where the whole-photo embedding comes from: `mirror_pair` (224×224 photo + mirror image, mean), `single`
    /// (one 224×224 view), `localisation` (the localisation pass's own embedding = the mean of its map; no 224 pass).
    public var embeddingSource: EmbeddingSource = .mirrorPair
    /// Where boxes come from.
    public var localizer: Localizer = .cells
    /// One answer per food for a person (see `FoodConsolidation`): regions whose label the whole photo rules out
    /// take the dominant label, touching regions of one label become one food, specks next to bigger foods go.
    /// false = every region the detector ranks (what `eval-detect --raw-boxes` scores).
    public var consolidate: Bool = true
    /// The localisation pass keeps the photo's aspect (long side `localisationSize`, short side the nearest
    /// multiple of 32) instead of stretching it to a square: no distortion, and a 4:3 photo costs 448×352 instead of
    /// 448×448. The cell detector and the coin head must be trained the same way (`train-cells --keep-aspect`,
    /// `train-reference` follows this file).
    public var keepAspect: Bool = false
    /// When the localisation pass may be skipped (see `LocalizationGate`); nil = it always runs.
    public var localizationGate: LocalizationGate?
    /// When set, no localisation pass runs: the cell detector and the coin finder read the whole-photo pass's map
    /// fused with these blocks' finer outputs, finest first (`FusedCellMap`; in Lite0 block 4 ends the stride-8
    /// stage, block 10 the stride-16 one). Their heads must be trained on that map (`train-cells` and
    /// `train-reference` follow this file).
    public var fusedMapBlocks: [Int]?
    /// With `fusedMapBlocks`: a photo the answer calls a shared plate still gets the localisation pass, and its boxes
    /// come from that pass's map (`plate-cell-head.json`, a cell head trained on it); every other photo's boxes, and
    /// every coin, come from the fused map. A plate's items are too small on the whole-photo pass's maps.
    public var localizationPassForPlates: Bool = false
    /// How sure the head must be to name a dish it may never have been taught; nil = the head's best label always.
    public var openSet: OpenSetRule?
    public var note: String = "defaults"

    public init() {}

    enum CodingKeys: String, CodingKey {
        case unknownThreshold, cellThreshold, singleFoodCellThreshold, candidateThreshold, foodContextThreshold, confidentFoodProbability
        case matcherThreshold, embeddingSource, consolidate, keepAspect, note
        case localizationGate, fusedMapBlocks, localizationPassForPlates, openSet, localizationSize, localizer
    }

    /// The keys files written before 0.5.0 used (British spelling); read when the new key is absent.
    enum LegacyKeys: String, CodingKey {
        case localisationGate, localisationPassForPlates, localisationSize, localiser
    }

    /// Missing keys take the defaults above (one place for them); a missing `singleFoodCellThreshold` follows
    /// `cellThreshold`.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let legacy = try decoder.container(keyedBy: LegacyKeys.self)
        let d = RecognitionCalibration()
        unknownThreshold = try c.decodeIfPresent(Float.self, forKey: .unknownThreshold) ?? d.unknownThreshold
        foodContextThreshold = try c.decodeIfPresent(Float.self, forKey: .foodContextThreshold) ?? d.foodContextThreshold
        confidentFoodProbability = try c.decodeIfPresent(Float.self, forKey: .confidentFoodProbability)
        cellThreshold = try c.decodeIfPresent(Float.self, forKey: .cellThreshold) ?? d.cellThreshold
        candidateThreshold = try c.decodeIfPresent(Float.self, forKey: .candidateThreshold) ?? d.candidateThreshold
        matcherThreshold = try c.decodeIfPresent(Float.self, forKey: .matcherThreshold) ?? d.matcherThreshold
        localizationSize = try c.decodeIfPresent(Int.self, forKey: .localizationSize)
            ?? legacy.decodeIfPresent(Int.self, forKey: .localisationSize) ?? d.localizationSize
        singleFoodCellThreshold = try c.decodeIfPresent(Float.self, forKey: .singleFoodCellThreshold) ?? cellThreshold
        embeddingSource = try c.decodeIfPresent(EmbeddingSource.self, forKey: .embeddingSource) ?? d.embeddingSource
        localizer = try c.decodeIfPresent(Localizer.self, forKey: .localizer)
            ?? legacy.decodeIfPresent(Localizer.self, forKey: .localiser) ?? d.localizer
        consolidate = try c.decodeIfPresent(Bool.self, forKey: .consolidate) ?? d.consolidate
        keepAspect = try c.decodeIfPresent(Bool.self, forKey: .keepAspect) ?? d.keepAspect
        localizationGate = try c.decodeIfPresent(LocalizationGate.self, forKey: .localizationGate)
            ?? legacy.decodeIfPresent(LocalizationGate.self, forKey: .localisationGate)
        fusedMapBlocks = try c.decodeIfPresent([Int].self, forKey: .fusedMapBlocks)
        localizationPassForPlates = try c.decodeIfPresent(Bool.self, forKey: .localizationPassForPlates)
            ?? legacy.decodeIfPresent(Bool.self, forKey: .localisationPassForPlates) ?? d.localizationPassForPlates
        openSet = try c.decodeIfPresent(OpenSetRule.self, forKey: .openSet)
        note = try c.decodeIfPresent(String.self, forKey: .note) ?? d.note
    }
}

/// A photo of a dish the head was never taught still gets a label from it, often confidently (a bowl of mapo tofu
/// came back "curry"). So a single dish (not a shared plate) is named only when the head is sure enough of it;
/// otherwise it is the generic kind its likeliest labels share (`PortionTable.kinds`: ramen and pho are both
/// `noodle_soup`), when they add up to enough, and else "unknown" with the head's best guesses in `top`.
/// Both numbers are chosen by leaving whole classes out of training (tools/models/open-set; docs/recognition.md).
public struct OpenSetRule: Sendable, Codable, Equatable {
    /// A dish's head probability must reach this for the photo to be named that dish.
    public var minDishProbability: Float
    /// Below it, the labels of one kind (the kind's own label included) must add up to this for the kind.
    public var minKindProbability: Float
    /// The confidence a named single dish is given, as (head probability, confidence) points joined by straight
    /// lines: the chance that the dish is right for a photo that may show a dish outside the vocabulary (fitted on
    /// held-out and left-out classes; the share of those the curve assumes is in `note`). The head's probability
    /// only says how the taught dishes compare; nil = the head's probability as it is.
    public var confidenceCurve: [[Float]]?
    /// How sure the whole photo must be of one label for regions whose label it gives < 1 % to take that label
    /// (`FoodConsolidation` rule 1; 0.9 with the 79-label head, nil = that). Over 176 labels a yellow apple's region
    /// is still a "banana" when the photo says apple at 0.7.
    public var dominantProbability: Float?
    public var note: String?

    public init(minDishProbability: Float, minKindProbability: Float, confidenceCurve: [[Float]]? = nil, note: String? = nil) {
        self.minDishProbability = minDishProbability
        self.minKindProbability = minKindProbability
        self.confidenceCurve = confidenceCurve
        self.note = note
    }

    /// The confidence for a head probability, read off `confidenceCurve` (clamped to its ends).
    public func confidence(headProbability p: Float) -> Float {
        guard let points = confidenceCurve?.filter({ $0.count == 2 }).sorted(by: { $0[0] < $1[0] }),
              let first = points.first, let last = points.last else { return p }
        if p <= first[0] { return first[1] }
        if p >= last[0] { return last[1] }
        for (a, b) in zip(points, points.dropFirst()) where p <= b[0] {
            let t = b[0] > a[0] ? (p - a[0]) / (b[0] - a[0]) : 1
            return a[1] + t * (b[1] - a[1])
        }
        return last[1]
    }

    /// The generic answer for an unsure head: the kind whose labels' probabilities add up most, when that reaches
    /// `minKindProbability`; nil = unknown. `scores` is the head's whole distribution.
    public func kind(for scores: [LabelScore], kinds: [String: String]) -> LabelScore? {
        guard !kinds.isEmpty else { return nil }
        let kindLabels = Set(kinds.values)
        var mass: [String: Float] = [:]
        for s in scores {
            if let k = kinds[s.label] { mass[k, default: 0] += s.probability } else if kindLabels.contains(s.label) { mass[s.label, default: 0] += s.probability }
        }
        guard let best = mass.max(by: { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }),
              best.value >= minKindProbability else { return nil }
        return LabelScore(label: best.key, probability: best.value)
    }
}

/// Where stage 1's whole-photo embedding comes from.
public enum EmbeddingSource: String, Sendable, Codable, Equatable, CaseIterable {
    /// The 224×224 photo and its mirror image, mean.
    case mirrorPair = "mirror_pair"
    /// One 224×224 view.
    case single
    /// The localization pass's own embedding (the mean of its map); no 224 pass.
    case localization

    /// Files written before 0.5.0 spell it `localisation`.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = EmbeddingSource(rawValue: text == "localisation" ? "localization" : text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "embeddingSource \(text) is not one of \(EmbeddingSource.allCases.map(\.rawValue))"))
        }
        self = value
    }
}

/// Where stage 1's boxes come from.
public enum Localizer: String, Sendable, Codable, Equatable, CaseIterable {
    /// The per-cell detector (`cell-head.json`, when present).
    case cells
    /// Class activation maps of the food head.
    case cam
}

extension RecognitionCalibration {
    /// The unknown / not-food decision.
    public func rejects(headProbability: Float, foodContext: Float) -> Bool {
        headProbability < unknownThreshold || (foodContext < foodContextThreshold && !overridesContext(headProbability))
    }

    /// Whether the head is sure enough of a food for a low food-context mass not to matter.
    public func overridesContext(_ headProbability: Float) -> Bool {
        confidentFoodProbability.map { headProbability >= $0 } ?? false
    }
}

/// The localisation pass's input: the photo stretched to `size × size`, or (keeping the aspect) its long side
/// `size` and its short side the nearest multiple of 32 (one map cell per 32 input pixels), at least 224.
public enum LocalizationInput {
    public static func dimensions(imageWidth: Int, imageHeight: Int, size: Int, keepAspect: Bool) -> (width: Int, height: Int) {
        guard keepAspect, imageWidth > 0, imageHeight > 0, imageWidth != imageHeight else { return (size, size) }
        let long = max(imageWidth, imageHeight), short = min(imageWidth, imageHeight)
        let scaled = Double(size) * Double(short) / Double(long)
        let side = min(size, max(224, Int((scaled / 32).rounded()) * 32))
        return imageWidth > imageHeight ? (size, side) : (side, size)
    }

    public static func tensor(_ image: RGBImage, size: Int, keepAspect: Bool) -> FloatImage {
        let (w, h) = dimensions(imageWidth: image.width, imageHeight: image.height, size: size, keepAspect: keepAspect)
        return ImageResampler.tensor(from: image, mode: .stretch, width: w, height: h, normalization: .efficientNetLite)
    }
}

/// How much of the backbone's ImageNet belief goes to foods, fruit, vegetables, dishes and table settings: the
/// "is this a meal photo at all" signal (the food head alone always picks some food).
public enum FoodContext {
    public static let imagenetIndices: [Int] = Array(923...957) + Array(959...969) + [
        987, 998, 415, 467, 532, 567, 582, 659, 809, 762, 469, 521, 544, 909, 910, 828, 868, 618, 813, 504, 849,
    ]

    /// Softmax mass on `imagenetIndices`, from the mean logits of the photo and its mirror image.
    public static func mass(logits: [Float]) -> Float {
        guard let m = logits.max() else { return 0 }
        var total: Float = 0, food: Float = 0
        for l in logits { total += expf(l - m) }
        for i in imagenetIndices where i < logits.count { food += expf(logits[i] - m) }
        return total > 0 ? food / total : 0
    }
}

/// Recognises foods in an upright photo: one backbone pass at 224×224 over the whole photo gives the embedding
/// (→ food head → labels) and the 7×7×1280 feature map; the head applied at every cell of that map (a class
/// activation map — exact, because the head is linear and the embedding is the mean of the cells) gives a
/// per-cell food distribution, whose connected regions become boxes.
public final class FoodRecognizer: @unchecked Sendable {
    public let backbone: EfficientNetLite0
    public let head: SoftmaxHead
    /// The fine-tuned top (`models/food-head/food-top.json`: the backbone's head conv, optionally with its last
    /// blocks, tuned on food): when present, it gives the food embedding — which the food head and the learned-food
    /// matcher read — and the food feature map (see `embeddings(of:)` for the ImageNet logits); the localisation
    /// pass (cell detector, coin finder) keeps the original network.
    public let foodTop: FoodTop?
    public private(set) var matcher: PrototypeMatcher
    /// Finds a coin for scale (`models/food-head/coin-head.json` + `reference.json`); nil = grams without scale.
    public let coinFinder: CoinFinder?
    /// The per-cell food detector (`models/food-head/cell-head.json`); nil = boxes from class activation maps.
    public let cellDetector: CellDetector?
    /// The cell detector for shared plates on the localisation pass's map (`plate-cell-head.json`), when
    /// `calibration.localizationPassForPlates` says the pass runs for them.
    public let plateCellDetector: CellDetector?
    /// Shared plate or one dish (`models/food-head/plate-head.json`); nil = the head's best label alone decides.
    public let plateHead: PlateHeadModel?
    public let calibration: RecognitionCalibration
    /// Household portions per label, the base of every grams estimate.
    public let portions: PortionTable
    /// Grams of a food alone in a photo without a coin (`models/food-head/photo-portions.json`); nil = its portion.
    public let photoPortions: PhotoPortionModel?
    /// Reads a small photo's embedding as a full-size photo's (`models/food-head/low-res-map.json`); nil = as it is.
    package let lowResolutionMap: LowResolutionMap?
    /// The head with the feature standardisation `(x - mean) * scale` folded in (logit_c(x) = Σ_k w'[c,k]·x_k + b'_c),
    /// as a 1×1 convolution that gives every cell of a feature map its logits.
    private let cellHead: PointwiseConv2D

    public static let inputSize = 224

    package init(backbone: EfficientNetLite0, head: SoftmaxHead, matcher: PrototypeMatcher? = nil,
                calibration: RecognitionCalibration = .init(), portions: PortionTable = .init(),
                coinFinder: CoinFinder? = nil, cellDetector: CellDetector? = nil, foodTop: FoodTop? = nil,
                plateHead: PlateHeadModel? = nil, photoPortions: PhotoPortionModel? = nil, plateCellDetector: CellDetector? = nil,
                lowResolutionMap: LowResolutionMap? = nil) {
        self.backbone = backbone
        self.lowResolutionMap = lowResolutionMap
        self.plateCellDetector = plateCellDetector
        self.photoPortions = photoPortions
        self.plateHead = plateHead
        self.foodTop = foodTop
        self.coinFinder = coinFinder
        self.cellDetector = cellDetector
        self.head = head
        self.calibration = calibration
        self.portions = portions
        var m = matcher ?? PrototypeMatcher(dimension: head.dimension, threshold: calibration.matcherThreshold)
        m.threshold = calibration.matcherThreshold
        self.matcher = m
        let c = head.classes.count, d = head.dimension
        var w = [Float](repeating: 0, count: c * d), b = head.bias
        for i in 0..<c {
            var shift: Float = 0
            for k in 0..<d {
                let wk = head.weights[i * d + k] * head.featureScale[k]
                w[i * d + k] = wk
                shift += wk * head.featureMean[k]
            }
            b[i] -= shift
        }
        cellHead = PointwiseConv2D(weightsOI: w, bias: b, inChannels: d, outChannels: c, activation: .none,
                                   precision: backbone.precision)
    }

    /// Loads `models/efficientnet-lite0`, `models/food-head/head.json` (+ `calibration.json`) and the user's
    /// learned foods (`<user data>/learned-foods.json`) when present; every network runs as `inference` says.
    public static func load(modelsDirectory: String, userDataDirectory: String?, portions: PortionTable,
                            inference: InferenceOptions = InferenceOptions()) throws -> FoodRecognizer {
        let backbone = try EfficientNetLite0(modelDirectory: modelsDirectory + "/efficientnet-lite0", options: inference)
        let head = try SoftmaxHead.load(from: modelsDirectory + "/food-head/head.json")
        var calibration = RecognitionCalibration()
        let calPath = modelsDirectory + "/food-head/calibration.json"
        if let data = FileManager.default.contents(atPath: calPath) {
            calibration = try JSONDecoder().decode(RecognitionCalibration.self, from: data)
        }
        var matcher: PrototypeMatcher?
        if let dir = userDataDirectory, FileManager.default.fileExists(atPath: dir + "/learned-foods.json") {
            matcher = try PrototypeMatcher.load(from: dir + "/learned-foods.json")
        }
        let topDirectory = modelsDirectory + "/food-head"
        let foodTop = FoodTop.exists(in: topDirectory) ? try FoodTop.load(directory: topDirectory, precision: inference.precision) : nil
        let coinFinder = try CoinFinder.load(modelsDirectory: modelsDirectory)
        let cellDetector = try CellDetector.load(modelsDirectory: modelsDirectory, precision: inference.precision)
        var plateCellDetector: CellDetector?
        if calibration.localizationPassForPlates {
            guard calibration.fusedMapBlocks != nil, calibration.localizationSize > inputSize else {
                throw FoodVisionError.invalidInput(reason: "calibration.json's localizationPassForPlates needs fusedMapBlocks and a localizationSize above \(inputSize)")
            }
            plateCellDetector = try CellDetector.load(modelsDirectory: modelsDirectory, file: "plate-cell-head.json",
                                                      precision: inference.precision)
            if plateCellDetector == nil {
                throw FoodVisionError.invalidInput(reason: "calibration.json's localizationPassForPlates needs \(topDirectory)/plate-cell-head.json (a cell head trained on the localisation pass's map)")
            }
        }
        // A head trained on another map would stop the process at its first photo (a precondition); say so here.
        let channels = try mapChannels(calibration, architecture: backbone.architecture)
        for (file, dimension, expected) in [("cell-head.json", cellDetector?.model.head.dimension, channels),
                                            ("coin-head.json", coinFinder?.head.dimension, channels),
                                            ("plate-cell-head.json", plateCellDetector?.model.head.dimension, BackboneArchitecture.embeddingSize)] {
            if let dimension, dimension != expected {
                throw FoodVisionError.invalidInput(reason: "\(topDirectory)/\(file) reads \(dimension)-channel maps, but calibration.json makes "
                    + "\(expected)-channel maps for it (fusedMapBlocks \(calibration.fusedMapBlocks.map { "\($0)" } ?? "not set")): "
                    + "retrain it for this calibration (dev train-cells, dev train-reference)")
            }
        }
        // A fused map's heads read it part by part (`CellFeatures`): split the cell head once, here.
        let parts = try fusedParts(calibration, architecture: backbone.architecture)
        return FoodRecognizer(backbone: backbone, head: head, matcher: matcher, calibration: calibration, portions: portions,
                              coinFinder: coinFinder,
                              cellDetector: try parts.flatMap { try cellDetector?.splitting(channels: $0) } ?? cellDetector, foodTop: foodTop,
                              plateHead: try PlateHeadModel.load(modelsDirectory: modelsDirectory),
                              photoPortions: try PhotoPortionModel.load(modelsDirectory: modelsDirectory),
                              plateCellDetector: plateCellDetector,
                              lowResolutionMap: try LowResolutionMap.load(directory: topDirectory))
    }

    /// Channels of the map the cell detector and the coin finder read under `calibration`.
    static func mapChannels(_ calibration: RecognitionCalibration, architecture: BackboneArchitecture) throws -> Int {
        try fusedParts(calibration, architecture: architecture)?.reduce(0, +) ?? BackboneArchitecture.embeddingSize
    }

    /// Channels of the fused map's parts, finest first (the last map's last); nil without a fused map.
    static func fusedParts(_ calibration: RecognitionCalibration, architecture: BackboneArchitecture) throws -> [Int]? {
        guard let blocks = calibration.fusedMapBlocks else { return nil }
        let shapes = architecture.blockShapes
        for block in blocks where !shapes.indices.contains(block) {
            throw FoodVisionError.invalidInput(reason: "calibration.json's fusedMapBlocks names block \(block), not a block of \(architecture.name) (0…\(shapes.count - 1))")
        }
        guard !blocks.isEmpty, blocks == blocks.sorted(), Set(blocks).count == blocks.count else {
            throw FoodVisionError.invalidInput(reason: "calibration.json's fusedMapBlocks must name blocks finest first, each once (it has \(blocks))")
        }
        return blocks.map { shapes[$0].outChannels } + [BackboneArchitecture.embeddingSize]
    }

    /// One recognizer per worker thread: this one, then `count - 1` over the same models. Each worker needs activation
    /// buffers of its own (the backbone's `forward` holds its lock for a whole pass), but the folded and packed weights
    /// never change after loading and are shared (`EfficientNetLite0.sharingWeights`): nothing is read, checked or
    /// packed again.
    public func forWorkers(_ count: Int) -> [FoodRecognizer] {
        [self] + (1..<max(1, count)).map { _ in FoodRecognizer(sharing: self, backbone: backbone.sharingWeights()) }
    }

    /// `other`'s models (its cell head already folded and packed) over `backbone`.
    private init(sharing other: FoodRecognizer, backbone: EfficientNetLite0) {
        self.backbone = backbone
        head = other.head; foodTop = other.foodTop; matcher = other.matcher; coinFinder = other.coinFinder
        cellDetector = other.cellDetector; plateHead = other.plateHead; calibration = other.calibration
        plateCellDetector = other.plateCellDetector; lowResolutionMap = other.lowResolutionMap
        portions = other.portions; photoPortions = other.photoPortions; cellHead = other.cellHead
    }

    /// The same models with another calibration (pass structure, localiser) and, optionally, another cell detector,
    /// plate head, coin finder or photo-portion model (`.some(nil)` turns one off).
    public func with(calibration: RecognitionCalibration, cellDetector: CellDetector?? = nil,
                     plateHead: PlateHeadModel?? = nil, coinFinder: CoinFinder?? = nil,
                     photoPortions: PhotoPortionModel?? = nil) -> FoodRecognizer {
        FoodRecognizer(backbone: backbone, head: head, matcher: matcher, calibration: calibration, portions: portions,
                       coinFinder: coinFinder ?? self.coinFinder, cellDetector: cellDetector ?? self.cellDetector, foodTop: foodTop,
                       plateHead: plateHead ?? self.plateHead, photoPortions: photoPortions ?? self.photoPortions,
                       plateCellDetector: plateCellDetector, lowResolutionMap: lowResolutionMap)
    }


    /// The whole photo as the network sees it.
    public static func preprocess(_ image: RGBImage) -> FloatImage {
        ImageResampler.tensor(from: image, mode: .stretch, size: inputSize, normalization: .efficientNetLite)
    }

    /// The photo and its mirror image: the embedding used for labels is the mean of the two (test-time
    /// augmentation; +TTA measured in README), the feature map for boxes comes from the unmirrored view.
    public static func preprocessWithMirror(_ image: RGBImage) -> [FloatImage] {
        let plain = preprocess(image)
        var mirrored = plain
        let s = inputSize
        plain.values.withUnsafeBufferPointer { src in
            mirrored.values.withUnsafeMutableBufferPointer { dst in
                for y in 0..<s {
                    for x in 0..<s {
                        let a = (y * s + x) * 3, b = (y * s + (s - 1 - x)) * 3
                        dst[b] = src[a]; dst[b + 1] = src[a + 1]; dst[b + 2] = src[a + 2]
                    }
                }
            }
        }
        return [plain, mirrored]
    }

    /// The whole-photo embedding and food-context mass, as `recognize` computes them (`embeddingSource`).
    public func embed(_ image: RGBImage) throws -> (embedding: [Float], foodContext: Float) {
        let passes = try forwardPasses(image)
        return (passes.embedding, FoodContext.mass(logits: passes.logits))
    }

    /// The localisation pass's last feature map (`localisationSize`, `keepAspect`).
    func localizationPassMap(_ image: RGBImage) throws -> FloatImage {
        let input = LocalizationInput.tensor(image, size: calibration.localizationSize, keepAspect: calibration.keepAspect)
        guard let map = try backbone.forward([input], includeFeatureMap: true).first?.featureMap else {
            throw FoodVisionError.invalidInput(reason: "backbone returned no feature map")
        }
        return map
    }

    /// The feature map the cell detector and the coin finder read for `image`, as `recognize` makes it (training
    /// their heads on another map would not match).
    public func cellMap(of image: RGBImage) throws -> FloatImage { try forwardPasses(image).map }

    /// What the backbone passes of one photo give `recognize`.
    struct Passes {
        /// The food embedding (the fine-tuned top's when there is one, else the backbone's): the food head's and the
        /// learned-food matcher's input.
        var embedding: [Float]
        /// ImageNet logits of that embedding (the "food context" signal).
        var logits: [Float]
        /// What the cell detector and the coin finder read: the localisation pass's last feature map, or the parts of
        /// the whole-photo pass's fused map.
        var features: CellFeatures
        /// That map (a fused one built).
        var map: FloatImage { features.materialised() }
        /// The localisation pass's block output at the food top's tap, for the food top's map (activation-map boxes).
        var block: FloatImage?
        var foodTop: FoodTop?
        /// The boxes come from the whole-photo pass: the gate let the localisation pass go.
        var localizationSkipped = false
        /// The backbone's own last map when `map` is a fused one (activation maps read 1280 channels).
        var coarseMap: FloatImage? = nil

        /// The food map over the same cells (the fine-tuned top's when there is one); computed only when needed.
        func foodMap() throws -> FloatImage {
            guard let foodTop else { return coarseMap ?? map }
            guard let block else { throw FoodVisionError.invalidInput(reason: "backbone returned no block output") }
            return try foodTop.featureMap(blockOutput: block)
        }
    }

    /// Food embeddings and ImageNet logits of whole-photo inputs (224 × 224), one per input. With a food top the
    /// top gives the embedding; a top with blocks replaces the network's last blocks, so the pass stops at its tap
    /// and the ImageNet classifier reads the food embedding (running the original tail as well would cost ~1.3 ms);
    /// a top without blocks reads the last block's output and the network's own logits come with it. `learn` uses
    /// this too, so taught foods live in the same space as the photos they are matched against.
    public func embeddings(of inputs: [FloatImage]) throws -> [(embedding: [Float], logits: [Float])] {
        guard let foodTop else { return try backbone.forward(inputs).map { ($0.embedding, $0.logits) } }
        return try foodTop.forward(inputs, on: backbone).map { try foodEmbedding($0, top: foodTop) }
    }

    /// The top's embedding of one backbone output (its tap block output) and the ImageNet logits: the network's
    /// own when the pass ran to the end, else the classifier on the food embedding.
    private func foodEmbedding(_ out: BackboneOutput, top: FoodTop) throws -> (embedding: [Float], logits: [Float]) {
        let e = try top.embedding(of: out)
        return (e, out.logits.isEmpty ? try backbone.imageNetLogits(embedding: e) : out.logits)
    }

    /// The backbone passes of stage 1, by `calibration.embeddingSource` and `localisationSize`: the whole-photo
    /// embedding and ImageNet logits, and the feature map for boxes. `lap` marks the ends of the steps.
    func forwardPasses(_ image: RGBImage, lap: (PipelineStage) -> Void = { _ in }) throws -> Passes {
        let localSize = calibration.localizationSize
        let useTop = foodTop != nil
        let tap = foodTop?.tapBlock
        /// A pass that also gives the feature map (and the `extra` blocks' outputs): the food embedding from its tap
        /// when there is a top.
        func full(_ inputs: [FloatImage], extra: [Int] = []) throws -> (outs: [BackboneOutput], whole: [(embedding: [Float], logits: [Float])]) {
            let outs = try backbone.forward(inputs, includeFeatureMap: true, includeBlockOutput: useTop, blockOutputIndex: tap,
                                            extraBlockOutputIndices: extra)
            guard let foodTop else { return (outs, outs.map { ($0.embedding, $0.logits) }) }
            return (outs, try outs.map { try foodEmbedding($0, top: foodTop) })
        }
        var whole: [(embedding: [Float], logits: [Float])]
        var localMap: FloatImage?, localBlock: FloatImage?
        var skipped = false
        var localStep = PipelineStage.backboneLocal
        var coarseMap: FloatImage?
        var fusedParts: [FloatImage]?
        if calibration.embeddingSource == .localization {
            let input = ImageResampler.tensor(from: image, mode: .stretch, size: max(localSize, Self.inputSize),
                                              normalization: .efficientNetLite)
            lap(.preprocess)
            let pass = try full([input])
            whole = pass.whole
            localMap = pass.outs.first?.featureMap; localBlock = pass.outs.first?.blockOutput
        } else {
            let inputs = calibration.embeddingSource == .single ? [Self.preprocess(image)] : Self.preprocessWithMirror(image)
            let localInput = localSize > Self.inputSize && calibration.fusedMapBlocks == nil
                ? LocalizationInput.tensor(image, size: localSize, keepAspect: calibration.keepAspect) : nil
            lap(.preprocess)
            if let fineBlocks = calibration.fusedMapBlocks {
                guard foodTop?.blocks.isEmpty ?? true else {
                    throw FoodVisionError.invalidInput(reason: "a fused cell map needs a food top without blocks (calibration.json fusedMapBlocks)")
                }
                let pass = try full(inputs, extra: fineBlocks)
                whole = pass.whole
                lap(.backbone)
                guard let first = pass.outs.first, let coarse = first.featureMap, first.extraBlockOutputs.count == fineBlocks.count else {
                    throw FoodVisionError.invalidInput(reason: "backbone returned no maps to fuse")
                }
                fusedParts = first.extraBlockOutputs + [coarse]; localBlock = first.blockOutput
                coarseMap = coarse
                localStep = .fuse
            } else if let localInput {
                if let gate = calibration.localizationGate, foodTop?.blocks.isEmpty ?? true {
                    // The whole-photo pass with its map, for the gate (and for the boxes when the gate says so).
                    let pass = try full(inputs)
                    whole = pass.whole
                    lap(.backbone)
                    if let first = pass.outs.first, let wholeMap = first.featureMap,
                       try gateEvidence(embedding: Self.meanOf(whole.map(\.embedding)), map: wholeMap)?.allowsSkipping(gate) == true {
                        localMap = wholeMap; localBlock = first.blockOutput
                        skipped = true
                    }
                } else {
                    whole = try embeddings(of: inputs)
                    lap(.backbone)
                }
                if !skipped {
                    let local = try backbone.forward([localInput], includeFeatureMap: true, includeBlockOutput: useTop, blockOutputIndex: tap).first
                    localMap = local?.featureMap; localBlock = local?.blockOutput
                }
            } else {
                let pass = try full(inputs)
                lap(.backbone)
                whole = pass.whole
                localMap = pass.outs.first?.featureMap; localBlock = pass.outs.first?.blockOutput
            }
        }
        let features: CellFeatures
        if let fusedParts { features = .fused(fusedParts) } else if let localMap { features = .map(localMap) } else {
            throw FoodVisionError.invalidInput(reason: "backbone returned no feature map")
        }
        guard !whole.isEmpty else { throw FoodVisionError.invalidInput(reason: "backbone returned no embedding") }
        if !skipped { lap(localStep) }
        return Passes(embedding: Self.meanOf(whole.map(\.embedding)), logits: Self.meanOf(whole.map(\.logits)), features: features,
                      block: localBlock, foodTop: foodTop, localizationSkipped: skipped, coarseMap: coarseMap)
    }

    /// What the gate reads on the whole-photo pass: the head's best probability, the plate head, the coin head's
    /// highest cell and the foods the cell detector finds on the 7×7 map.
    public struct GateEvidence: Sendable, Equatable {
        public var topProbability: Float
        public var plate: Bool
        /// The highest coin probability of a cell (0 without a coin finder).
        public var coinProbability: Float
        /// Foods the cell detector answers on the whole-photo map (after the same rules as the answer itself).
        public var foods: Int

        public init(topProbability: Float, plate: Bool, coinProbability: Float, foods: Int) {
            self.topProbability = topProbability; self.plate = plate; self.coinProbability = coinProbability; self.foods = foods
        }

        /// Whether `gate` lets the localisation pass go.
        public func allowsSkipping(_ gate: LocalizationGate) -> Bool {
            topProbability >= gate.minTopProbability && !plate && coinProbability < gate.maxCoinProbability && foods <= 1
        }
    }

    /// The gate's evidence for a photo, whatever this recogniser's gate says (`dev eval-gate` scores thresholds with it).
    public func gateEvidence(_ image: RGBImage) throws -> GateEvidence? {
        var c = calibration
        c.localizationSize = 0
        c.localizationGate = nil
        let passes = try (c == calibration ? self : with(calibration: c)).forwardPasses(image)
        return try gateEvidence(embedding: passes.embedding, map: passes.map)
    }

    /// The gate's evidence for one photo's whole-photo embedding and map (~0.2 ms on a 7×7 map); nil where boxes do
    /// not come from the cell detector (then the pass always runs).
    public func gateEvidence(embedding: [Float], map: FloatImage) throws -> GateEvidence? {
        guard let cellDetector, calibration.localizer == .cells else { return nil }
        let top = try head.predict(embedding)
        let plate = try plateHead?.isPlate(embedding) ?? false
        let coin = coinFinder?.cellProbabilities(map).max() ?? 0
        let found = detectCells(cellDetector, features: .map(map), global: top, plate: plate, reference: nil, imageSize: (map.width, map.height))
        return GateEvidence(topProbability: top.first?.probability ?? 0, plate: plate, coinProbability: coin, foods: found.count)
    }

    /// The element-wise mean of equally long vectors.
    static func meanOf(_ vectors: [[Float]]) -> [Float] {
        guard var sum = vectors.first else { return [] }
        for v in vectors.dropFirst() { for i in sum.indices { sum[i] += v[i] } }
        if vectors.count > 1 { let k = 1 / Float(vectors.count); for i in sum.indices { sum[i] *= k } }
        return sum
    }

    /// `personal`: one user's taught foods instead of `matcher` (a server holds one recogniser for every user).
    public func recognize(_ image: RGBImage, personal: PrototypeMatcher? = nil) throws -> Recognition {
        try recognizeScored(image, personal: personal).recognition
    }

    /// `recognize`, with the photo's food-context mass (what the not-food decision read), for evaluation.
    public func recognizeScored(_ image: RGBImage, personal: PrototypeMatcher? = nil) throws -> (recognition: Recognition, foodContext: Float) {
        let matcher = personal ?? self.matcher
        var timings = StageTimings()
        var t = ContinuousClock.now
        func lap(_ name: PipelineStage) {
            let now = ContinuousClock.now
            timings[name] = (now - t).milliseconds
            t = now
        }
        let passes = try forwardPasses(image, lap: lap)
        let features = passes.features
        var embedding = passes.embedding
        // A thumbnail is read the way the head was taught thumbnails (see `LowResolutionMap`).
        if let lowResolutionMap, lowResolutionMap.applies(width: image.width, height: image.height) {
            embedding = try lowResolutionMap.apply(embedding, head: head)
        }
        let foodMass = FoodContext.mass(logits: passes.logits)
        let top = try head.predict(embedding)
        // Learned foods are taught with the same food embedding (`learn` uses `embeddings(of:)`).
        let learned = matcher.labels.isEmpty ? nil : try matcher.match(passes.embedding)
        lap(.head)
        let reference = coinFinder?.find(in: image, features: features)
        lap(.reference)
        var foods: [RecognizedFood] = []
        var unknown = false
        if let learned, let label = learned.label, learned.similarity >= calibration.matcherThreshold,
           top.first.map({ $0.probability < 0.9 }) ?? true {
            // A taught dish weighs what the user said it weighed when they corrected it, else the label's portion.
            let yours = matcher.prototypes.first { $0.label == label }?.grams
            foods = [RecognizedFood(label: label, confidence: (Double(learned.similarity) * 1000).rounded() / 1000, box: .whole,
                                    grams: yours ?? portions.grams(for: label), gramsSource: yours == nil ? .defaultPortion : .user,
                                    source: .learned)]
        } else if foodMass >= calibration.foodContextThreshold || calibration.overridesContext(top.first?.probability ?? 0) {
            // A confident whole-photo label, or (a shared plate) confident regions of the map.
            let confident = (top.first?.probability ?? 0) >= calibration.unknownThreshold
            let size = (image.width, image.height)
            let plate = try plateHead?.isPlate(embedding) ?? false
            if let cellDetector, calibration.localizer != .cam {
                if let plateCells = plateCellDetector,
                   RegionRules.isPlate(plateHeadSays: plate, global: top, model: plateCells.model, cellLabels: plateCells.classes) {
                    let passMap = try localizationPassMap(image)
                    lap(.backboneLocal)
                    foods = detectCells(plateCells, features: .map(passMap), global: top, plate: plate, reference: reference, imageSize: size)
                } else {
                    foods = detectCells(cellDetector, features: features, global: top, plate: plate, reference: reference, imageSize: size)
                }
            }
            if foods.isEmpty {
                foods = localize(map: try passes.foodMap(), global: top, includeBest: confident, reference: reference,
                                 imageSize: size)
            }
            if let rule = calibration.openSet, let best = top.first, best.probability < rule.minDishProbability, !plate {
                // One dish the head is unsure of: its kind over the regions found, or nothing named.
                if let kind = rule.kind(for: top, kinds: portions.kinds) {
                    let box = foods.dropFirst().reduce(foods.first?.box ?? .whole) { $0.union($1.box) }
                    foods = [RecognizedFood(label: kind.label, confidence: (Double(kind.probability) * 1000).rounded() / 1000, box: box,
                                            grams: portions.grams(for: kind.label), gramsSource: .defaultPortion, source: .model)]
                } else {
                    foods = []
                }
            } else if let rule = calibration.openSet, rule.confidenceCurve != nil, !plate {
                // Not a shared plate: each food no surer than the chance its label is right, read off the whole photo's
                // probability of that label with dishes outside the vocabulary counted in (a region's own confidence
                // only says how sure its cells are of the label among the taught ones). Every food, so that a region the
                // whole photo barely believes does not outrank the dish it is sure of.
                let probability = Dictionary(top.map { ($0.label, $0.probability) }, uniquingKeysWith: max)
                for i in foods.indices where foods[i].source == .model {
                    let cap = Double(rule.confidence(headProbability: probability[foods[i].label] ?? 0))
                    foods[i].confidence = min(foods[i].confidence, (cap * 1000).rounded() / 1000)
                }
                // A region at 0.00 (the photo gives its label next to nothing) is not shown beside foods it believes.
                let believed = foods.filter { $0.source != .model || $0.confidence > 0 }
                if !believed.isEmpty { foods = believed }
            }
            unknown = foods.isEmpty
        } else {
            unknown = true
        }
        lap(.localise)
        return (Recognition(foods: foods, unknown: unknown, top: Array(top.prefix(5)), timings: timings, reference: reference,
                            localizationSkipped: passes.localizationSkipped ? true : nil),
                foodMass)
    }

    /// Boxes from the per-cell detector: regions of its per-cell argmax (see `CellDetector.detect`), minus regions on
    /// the reference coin. A region's confidence is its mean cell probability, blended with the whole-photo head's
    /// probability of the label (`globalWeight`). When the whole-photo head's best label is a food the cell head has
    /// no class for (it knows only the detection sets' labels: plate items and fruit) and the photo is not a shared
    /// plate (`plate`, from the plate head), the regions become that one food: a bowl of ramen is ramen, not the rice,
    /// curry and tea its cells resemble.
    func detectCells(_ detector: CellDetector, features: CellFeatures, global: [LabelScore], plate plateHeadSays: Bool = false,
                     reference: ReferenceObject?, imageSize: (width: Int, height: Int)) -> [RecognizedFood] {
        let plate = RegionRules.isPlate(plateHeadSays: plateHeadSays, global: global, model: detector.model, cellLabels: detector.classes)
        let probabilities = detector.probabilities(features)
        let (gw, gh) = (features.width, features.height)
        var found = detector.detect(probabilities: probabilities, width: gw, height: gh)
        if let coin = reference?.box {
            found.removeAll { CellLabeling.overlap($0.box, coin) >= 0.5 * $0.box.area }
        }
        guard !found.isEmpty else { return [] }
        let globalP = Dictionary(global.map { ($0.label, $0.probability) }, uniquingKeysWith: max)
        let lw = detector.model.labelWeight
        var items: [(label: String, confidence: Double, box: NormalizedBox)] = found.map { d in
            var label = detector.classes[d.classIndex]
            if lw > 0 {
                // The whole-photo head as a prior over the region's label (labels it lacks get a uniform share).
                let mean = CellDetector.meanProbabilities(probabilities, classes: detector.classes.count, width: gw,
                                                          height: gh, in: d.box)
                let floor = 1 / Double(max(head.classes.count, 1))
                var best = -Double.infinity
                for k in 1..<detector.classes.count {
                    let g = Double(globalP[detector.classes[k]] ?? Float(floor))
                    let score = (1 - lw) * log(Double(max(mean[k], 1e-6))) + lw * log(max(g, 1e-6))
                    if score > best { best = score; label = detector.classes[k] }
                }
            }
            let w = detector.model.globalWeight
            let confidence = globalP[label].map { pow(d.confidence, 1 - w) * pow(Double(max($0, 1e-4)), w) } ?? d.confidence
            return (label, confidence, d.box)
        }
        let model = detector.model
        // One kind of food (a pile of mangoes, not a fruit bowl): the whole photo names it better than its cells do.
        if !plate, let best = global.first, let dominant = model.dominantProbability, Double(best.probability) >= dominant,
           detector.classes.contains(best.label) {
            items = items.map { (best.label, $0.confidence, $0.box) }
        }
        // The answer for a person: confident regions, nested duplicates of a label dropped.
        var kept: [(label: String, confidence: Double, box: NormalizedBox)] = []
        for item in items.sorted(by: { $0.confidence > $1.confidence }) where item.confidence >= model.minConfidence {
            let nested = kept.contains { k in
                k.label == item.label && CellLabeling.overlap(k.box, item.box) >= model.containedFraction * item.box.area
            }
            if !nested { kept.append(item) }
        }
        items = kept
        guard !items.isEmpty else { return [] }
        if calibration.consolidate {
            let merged = FoodConsolidation.consolidate(items.map { .init(label: $0.label, confidence: $0.confidence, box: $0.box) },
                                                       photo: global,
                                                       dominant: calibration.openSet?.dominantProbability ?? FoodConsolidation.dominant)
            items = merged.map { ($0.label, $0.confidence, $0.box) }
        }
        if !plate {
            items = RegionRules.overrule(items.map { .init(label: $0.label, confidence: $0.confidence, box: $0.box) }, global: global,
                                         model: model, cellLabels: detector.classes).map { ($0.label, $0.confidence, $0.box) }
        }
        if !plate, let best = global.first, !detector.classes.contains(best.label),
           Double(best.probability) >= model.singleDishProbability {
            let all = items.dropFirst().reduce(items[0].box) { $0.union($1.box) }
            items = [(best.label, Double(best.probability), all)]
        }
        return items.map { item in
            let (grams, source) = GramsEstimator.estimate(label: item.label, portionGrams: portions.grams(for: item.label), box: item.box,
                                                          multipleFoods: items.count > 1, reference: reference,
                                                          scaleModel: coinFinder?.model, photo: photoPortions, imageSize: imageSize)
            return RecognizedFood(label: item.label, confidence: (item.confidence * 1000).rounded() / 1000, box: item.box.clipped,
                                  grams: grams, gramsSource: source, source: .model)
        }.sorted { $0.confidence > $1.confidence }
    }

    /// Class activation maps → boxes. For every candidate label (the best one, plus others that are probable for
    /// the whole photo and win cells of the map), its per-cell logit map is upsampled 4× (bilinear), each fine
    /// cell goes to the candidate with the highest normalised activation, and a label's box is the bounding box of
    /// its largest connected region above `cellThreshold` of its activation range.
    func localize(map: FloatImage, global: [LabelScore], includeBest: Bool = true, reference: ReferenceObject? = nil,
                  imageSize: (width: Int, height: Int) = (1, 1)) -> [RecognizedFood] {
        let gh = map.height, gw = map.width, d = map.channels, c = head.classes.count
        let cells = gh * gw
        // Per-cell logits for every class: the folded head as a 1×1 convolution over the map (the runtime's GEMM).
        precondition(d == head.dimension, "feature map has \(d) channels, the head \(head.dimension)")
        let logits = cellHead(Tensor(batch: 1, height: gh, width: gw, channels: d, values: map.values)).values
        let classIndex = Dictionary(uniqueKeysWithValues: head.classes.enumerated().map { ($1, $0) })
        // Cells each class wins outright (per-cell softmax argmax above 0.35), and how sure it is there.
        var wins = [Int](repeating: 0, count: c)
        var winProbability = [Float](repeating: 0, count: c)
        for cell in 0..<cells {
            var best = 0, maxLogit = -Float.infinity
            for i in 0..<c where logits[cell * c + i] > maxLogit { maxLogit = logits[cell * c + i]; best = i }
            var sum: Float = 0
            for i in 0..<c { sum += expf(logits[cell * c + i] - maxLogit) }
            if 1 / sum >= 0.35 { wins[best] += 1; winProbability[best] += 1 / sum }
        }
        // Candidates: the best whole-photo label; labels probable for the whole photo that also win cells; and
        // labels that win a sizeable, confident part of the map on their own (the items of a shared plate).
        // A dominant whole-photo label means one food: no region-only candidates then.
        let minLocalWins = max(2, cells / 20)
        var candidates: [(index: Int, probability: Float)] = []
        for (rank, g) in global.enumerated() {
            guard let i = classIndex[g.label] else { continue }
            if (rank == 0 && includeBest) || (g.probability >= calibration.candidateThreshold && wins[i] >= 2) {
                candidates.append((i, g.probability))
            }
        }
        let dominant = includeBest && (global.first?.probability ?? 0) >= 0.6
        if !dominant {
            for i in 0..<c where wins[i] >= minLocalWins && !candidates.contains(where: { $0.index == i }) {
                let mean = winProbability[i] / Float(wins[i])
                if mean >= 0.6 { candidates.append((i, mean * min(1, Float(wins[i]) / Float(2 * minLocalWins)))) }
            }
        }
        guard !candidates.isEmpty else { return [] }
        let first = includeBest ? [candidates[0]] : []
        candidates = Array((first + candidates.dropFirst(first.count).sorted { $0.probability > $1.probability }).prefix(6))
        // Upsampled, range-normalised activation of each candidate.
        let scale = 4, fh = gh * scale, fw = gw * scale, n = candidates.count
        var picked = [Float](repeating: 0, count: cells * n)
        for cell in 0..<cells { for (k, cand) in candidates.enumerated() { picked[cell * n + k] = logits[cell * c + cand.index] } }
        let upsampled = CellRegions.upsampleBilinear(picked, channels: n, width: gw, height: gh, scale: scale)
        var maps: [[Float]] = []
        for k in 0..<n {
            let fine = (0..<(fh * fw)).map { upsampled[$0 * n + k] }
            let lo = fine.min() ?? 0, hi = fine.max() ?? 1
            let range = max(hi - lo, 1e-6)
            maps.append(fine.map { ($0 - lo) / range })
        }
        var owner = [Int](repeating: -1, count: fh * fw)
        for p in 0..<(fh * fw) {
            var best = -1, bestValue = maps.count == 1 ? calibration.singleFoodCellThreshold : calibration.cellThreshold
            for k in maps.indices where maps[k][p] >= bestValue { best = k; bestValue = maps[k][p] }
            owner[p] = best
        }
        var foods: [RecognizedFood] = []
        var largest = [[Int]](repeating: [], count: maps.count)
        for region in CellRegions.regions(owner: owner, width: fw, height: fh) where region.members.count > largest[region.owner].count {
            largest[region.owner] = region.members
        }
        var present = largest.indices.filter { !largest[$0].isEmpty && (largest[$0].count >= scale * scale || $0 == 0) }
        // The coin is never a food: a region lying mostly on it is dropped.
        if let coin = reference?.box {
            present.removeAll { k in
                let r = largest[k]
                let onCoin = r.filter { p in
                    let x = (Double(p % fw) + 0.5) / Double(fw), y = (Double(p / fw) + 0.5) / Double(fh)
                    return x >= coin.x && x <= coin.x + coin.w && y >= coin.y && y <= coin.y + coin.h
                }.count
                return Double(onCoin) >= 0.5 * Double(r.count)
            }
        }
        for k in present {
            let box = CellRegions.box(of: largest[k], width: fw, height: fh)
            let label = head.classes[candidates[k].index]
            let (grams, source) = GramsEstimator.estimate(label: label, portionGrams: portions.grams(for: label), box: box,
                                                          multipleFoods: present.count > 1, reference: reference,
                                                          scaleModel: coinFinder?.model, photo: photoPortions, imageSize: imageSize)
            foods.append(RecognizedFood(label: label, confidence: (Double(candidates[k].probability) * 1000).rounded() / 1000,
                                        box: box, grams: grams, gramsSource: source, source: .model))
        }
        return foods.sorted { $0.confidence > $1.confidence }
    }

    /// Adds a user-taught food from a few photos' embeddings and returns the updated matcher (callers persist it).
    public func learn(label: String, embeddings: [[Float]]) throws -> PrototypeMatcher {
        try matcher.add(label: label, examples: embeddings)
        return matcher
    }
}

/// How the whole-photo answer and the regions are combined where they disagree.
public enum RegionRules {
    /// The plate head's judgement, unless the whole photo is a dish the cells cannot name and the head is at least
    /// `confidentDishProbability` sure of it.
    public static func isPlate(plateHeadSays: Bool, global: [LabelScore], model: CellHeadModel, cellLabels: [String]) -> Bool {
        guard plateHeadSays, let best = global.first, let sure = model.confidentDishProbability else { return plateHeadSays }
        return cellLabels.contains(best.label) || Double(best.probability) < sure
    }

    /// On a photo that is not a shared plate, the whole photo renames the region a person sees first (the most
    /// confident) when the head's best label is one the cells know, with at least `overruleProbability`, and the head
    /// gives the region's own label at most `ruledOutProbability` (a peach whose cells say apple). A region of the new
    /// label inside or over the renamed one is the same food and goes. Other regions keep their labels.
    public static func overrule(_ items: [FoodConsolidation.Item], global: [LabelScore], model: CellHeadModel,
                                cellLabels: [String]) -> [FoodConsolidation.Item] {
        guard let best = global.first, let overrule = model.overruleProbability, Double(best.probability) >= overrule,
              cellLabels.contains(best.label), let top = items.indices.max(by: { items[$0].confidence < items[$1].confidence }),
              items[top].label != best.label else { return items }
        let own = global.first { $0.label == items[top].label }?.probability ?? 0
        guard Double(own) <= model.ruledOutProbability else { return items }
        var out = items
        out[top].label = best.label
        let box = out[top].box
        return out.enumerated().filter { i, item in
            i == top || item.label != best.label || (box.iou(item.box) < 0.5 && CellLabeling.overlap(box, item.box) < 0.5 * item.box.area)
        }.map(\.element)
    }
}

/// Grams from a reference object's scale when one is in the photo, else from the food's share of the photo: of a
/// shared plate, or of a photo of it alone.
public enum GramsEstimator {
    /// With a coin: the box's area in cm² (box pixels × (mm per pixel)² / 100) through the label's areal-density
    /// model (`ReferenceModel.grams`), `reference_object`. Without (or for a label the model cannot size): a food
    /// alone in the photo through `photo` (`PhotoPortionModel.grams`, `box_area`) when there is one, else
    /// `estimate(portionGrams:box:multipleFoods:)`.
    public static func estimate(label: String, portionGrams: Double, box: NormalizedBox, multipleFoods: Bool,
                                reference: ReferenceObject?, scaleModel: ReferenceModel?, photo: PhotoPortionModel? = nil,
                                imageSize: (width: Int, height: Int)) -> (Double, GramsSource) {
        // A label the density model has no data for gets `fallbackK` only when the area carries information
        // (exponent > 0); with exponent 0 the fallback would be one constant weight for every food.
        guard let reference, let scaleModel, scaleModel.k[label] != nil || scaleModel.exponent > 0 else {
            if !multipleFoods, let photo {
                return (photo.grams(label: label, area: box.clipped.area, portionGrams: portionGrams), .boxArea)
            }
            return estimate(portionGrams: portionGrams, box: box, multipleFoods: multipleFoods)
        }
        let mm = reference.millimetresPerPixel
        let areaCm2 = box.w * Double(imageSize.width) * box.h * Double(imageSize.height) * mm * mm / 100
        return (scaleModel.grams(label: label, areaCm2: areaCm2, portionGrams: portionGrams), .referenceObject)
    }

    /// A food alone in the photo is one household portion; on a shared plate, its box area relative to a typical
    /// single-dish share (0.2 of the photo) scales that portion, within 0.4× … 2.5×.
    public static func estimate(portionGrams: Double, box: NormalizedBox, multipleFoods: Bool) -> (Double, GramsSource) {
        guard multipleFoods else { return (portionGrams.rounded(), .defaultPortion) }
        let factor = min(2.5, max(0.4, box.area / 0.2))
        return ((portionGrams * factor).rounded(), .boxArea)
    }
}
