public import FoodCore
public import FoodVision
import Foundation
import ImageCodecs

/// Display metadata for a recognition label (from `nutrition-db/labels.json`).
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
                     color: "#888888", portionGrams: 150, portion: "1 portion (assumed), 150 g")
    }
}

/// One food found in a photo.
public struct DetectedFood: Sendable, Codable, Equatable {
    public var label: String
    public var name: String
    public var nameZh: String
    public var emoji: String
    public var color: String
    public var confidence: Double
    public var box: NormalizedBox
    public var grams: Double
    /// Where the grams came from: `default_portion` (the label's household portion), `box_area` (portion scaled by
    /// the food's share of the plate), `user`.
    public var gramsSource: String
    /// `model` (the food head), `learned` (a food the user taught with `foodmoment learn`).
    public var source: String

    enum CodingKeys: String, CodingKey {
        case label, name, emoji, color, confidence, box, grams, source
        case nameZh = "name_zh", gramsSource = "grams_source"
    }
}

/// Stage 1 for one photo.
public struct Recognition: Sendable, Codable, Equatable {
    public var foods: [DetectedFood]
    /// True when the photo was judged not to show a known food (nothing forced onto a label).
    public var unknown: Bool
    /// The head's five best labels for the whole photo.
    public var top: [LabelScore]
    /// Milliseconds per step: preprocess, backbone, head, localisation.
    public var timings: [String: Double]
}

/// Thresholds chosen by `foodmoment calibrate` on dev photos and non-food photos (see README).
public struct RecognitionCalibration: Sendable, Codable, Equatable {
    /// A photo whose best head probability is below this is "unknown / not food".
    public var unknownThreshold: Float = 0.35
    /// A grid cell belongs to a food when that food's probability there is at least this.
    public var cellThreshold: Float = 0.35
    /// Labels with a whole-photo probability below this are not localised.
    public var candidateThreshold: Float = 0.03
    /// The learned-food matcher's cosine-similarity threshold.
    public var matcherThreshold: Float = 0.8
    public var note: String = "defaults"

    public init() {}
}

/// Recognises foods in an upright photo: one backbone pass at 224×224 over the whole photo gives the embedding
/// (→ food head → labels) and the 7×7×1280 feature map; the head applied at every cell of that map (a class
/// activation map — exact, because the head is linear and the embedding is the mean of the cells) gives a
/// per-cell food distribution, whose connected regions become boxes.
public final class FoodRecognizer: @unchecked Sendable {
    public let backbone: EfficientNetLite0
    public let head: SoftmaxHead
    public private(set) var matcher: PrototypeMatcher
    public let calibration: RecognitionCalibration
    public let displays: [String: LabelDisplay]
    /// Head weights with the feature standardisation `(x - mean) * scale` folded in: logit_c(x) = Σ_k w'[c,k]·x_k + b'_c.
    private let foldedWeights: [Float]
    private let foldedBias: [Float]

    public static let inputSize = 224

    public init(backbone: EfficientNetLite0, head: SoftmaxHead, matcher: PrototypeMatcher? = nil,
                calibration: RecognitionCalibration = .init(), displays: [String: LabelDisplay] = [:]) {
        self.backbone = backbone
        self.head = head
        self.calibration = calibration
        self.displays = displays
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
        foldedWeights = w
        foldedBias = b
    }

    /// Loads `models/efficientnet-lite0`, `models/food-head/head.json` (+ `calibration.json`) and the user's
    /// learned foods (`<user data>/learned-foods.json`) when present.
    public static func load(modelsDirectory: String, userDataDirectory: String?, displays: [String: LabelDisplay]) throws -> FoodRecognizer {
        let backbone = try EfficientNetLite0(modelDirectory: modelsDirectory + "/efficientnet-lite0")
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
        return FoodRecognizer(backbone: backbone, head: head, matcher: matcher, calibration: calibration, displays: displays)
    }

    public func display(_ label: String) -> LabelDisplay { displays[label] ?? .fallback(label) }

    /// The whole photo as the network sees it.
    public static func preprocess(_ image: RGBImage) -> FloatImage {
        ImageResampler.tensor(from: image, mode: .stretch, size: inputSize, normalization: .efficientNetLite)
    }

    public func recognize(_ image: RGBImage) throws -> Recognition {
        var timings: [String: Double] = [:]
        var t = ContinuousClock.now
        func lap(_ name: String) {
            let now = ContinuousClock.now
            timings[name] = PhotoDecoder.milliseconds(now - t)
            t = now
        }
        let input = Self.preprocess(image)
        lap("preprocess")
        guard let out = try backbone.forward([input], includeFeatureMap: true).first, let map = out.featureMap else {
            throw FoodVisionError.invalidInput(reason: "backbone returned nothing")
        }
        lap("backbone")
        let top = try head.predict(out.embedding)
        let learned = matcher.labels.isEmpty ? nil : try matcher.match(out.embedding)
        lap("head")
        var foods: [DetectedFood] = []
        var unknown = false
        if let learned, let label = learned.label, learned.similarity >= calibration.matcherThreshold,
           top.first.map({ $0.probability < 0.9 }) ?? true {
            let d = display(label)
            foods = [DetectedFood(label: label, name: d.name, nameZh: d.nameZh, emoji: d.emoji, color: d.color,
                                  confidence: Double(learned.similarity), box: .whole, grams: d.portionGrams,
                                  gramsSource: "default_portion", source: "learned")]
        } else if let best = top.first, best.probability >= calibration.unknownThreshold {
            foods = localise(map: map, global: top)
        } else {
            unknown = true
        }
        lap("localise")
        return Recognition(foods: foods, unknown: unknown, top: Array(top.prefix(5)), timings: timings)
    }

    /// Per-cell head probabilities → connected regions per label → boxes, confidences and grams.
    func localise(map: FloatImage, global: [LabelScore]) -> [DetectedFood] {
        let gh = map.height, gw = map.width, d = map.channels, c = head.classes.count
        let cells = gh * gw
        var probs = [Float](repeating: 0, count: cells * c)
        foldedWeights.withUnsafeBufferPointer { w in
            map.values.withUnsafeBufferPointer { f in
                probs.withUnsafeMutableBufferPointer { p in
                    for cell in 0..<cells {
                        let x = f.baseAddress! + cell * d
                        var maxLogit = -Float.infinity
                        for i in 0..<c {
                            let row = w.baseAddress! + i * d
                            var acc: Float = 0
                            for k in 0..<d { acc += row[k] * x[k] }
                            let logit = acc + foldedBias[i]
                            p[cell * c + i] = logit
                            maxLogit = max(maxLogit, logit)
                        }
                        var sum: Float = 0
                        for i in 0..<c { let e = expf(p[cell * c + i] - maxLogit); p[cell * c + i] = e; sum += e }
                        for i in 0..<c { p[cell * c + i] /= sum }
                    }
                }
            }
        }
        let globalProb = Dictionary(uniqueKeysWithValues: global.map { ($0.label, $0.probability) })
        // Each cell goes to its most probable label when that label is confident enough there.
        var owner = [Int](repeating: -1, count: cells)
        for cell in 0..<cells {
            var best = 0
            for i in 1..<c where probs[cell * c + i] > probs[cell * c + best] { best = i }
            let label = head.classes[best]
            if probs[cell * c + best] >= calibration.cellThreshold, (globalProb[label] ?? 0) >= calibration.candidateThreshold {
                owner[cell] = best
            }
        }
        struct Region { var label: Int; var cells: [Int] }
        var seen = [Bool](repeating: false, count: cells)
        var regions: [Region] = []
        for start in 0..<cells where owner[start] >= 0 && !seen[start] {
            var stack = [start], members: [Int] = []
            seen[start] = true
            while let cell = stack.popLast() {
                members.append(cell)
                let y = cell / gw, x = cell % gw
                for (dy, dx) in [(-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)] {
                    let ny = y + dy, nx = x + dx
                    guard ny >= 0, ny < gh, nx >= 0, nx < gw else { continue }
                    let n = ny * gw + nx
                    if !seen[n] && owner[n] == owner[start] { seen[n] = true; stack.append(n) }
                }
            }
            regions.append(Region(label: owner[start], cells: members))
        }
        // Keep each label's largest region; drop single cells when a label has a bigger region elsewhere.
        var bestByLabel: [Int: Region] = [:]
        for r in regions where r.cells.count > (bestByLabel[r.label]?.cells.count ?? 0) { bestByLabel[r.label] = r }
        var kept = bestByLabel.values.sorted { $0.cells.count > $1.cells.count }
        if kept.isEmpty, let first = global.first, let idx = head.classes.firstIndex(of: first.label) {
            kept = [Region(label: idx, cells: Array(0..<cells))]
        }
        kept = Array(kept.prefix(6))
        let multiple = kept.count > 1
        return kept.map { r in
            let ys = r.cells.map { $0 / gw }, xs = r.cells.map { $0 % gw }
            let box = NormalizedBox(x: Double(xs.min()!) / Double(gw), y: Double(ys.min()!) / Double(gh),
                                    w: Double(xs.max()! - xs.min()! + 1) / Double(gw), h: Double(ys.max()! - ys.min()! + 1) / Double(gh))
            let label = head.classes[r.label]
            let meanCell = r.cells.reduce(Float(0)) { $0 + probs[$1 * c + r.label] } / Float(r.cells.count)
            let confidence = Double(max(globalProb[label] ?? 0, meanCell * (globalProb[label] ?? 0).squareRoot()))
            let d = display(label)
            let (grams, source) = GramsEstimator.estimate(portionGrams: d.portionGrams, box: box, multipleFoods: multiple)
            return DetectedFood(label: label, name: d.name, nameZh: d.nameZh, emoji: d.emoji, color: d.color,
                                confidence: (confidence * 1000).rounded() / 1000, box: box, grams: grams, gramsSource: source,
                                source: "model")
        }
    }

    /// Adds a user-taught food from a few photos' embeddings and returns the updated matcher (callers persist it).
    public func learn(label: String, embeddings: [[Float]]) throws -> PrototypeMatcher {
        try matcher.add(label: label, examples: embeddings)
        return matcher
    }
}

/// Grams from the label's household portion, scaled by the food's share of a shared plate.
public enum GramsEstimator {
    /// A food alone in the photo is one household portion; on a shared plate, its box area relative to a typical
    /// single-dish share (0.2 of the photo) scales that portion, within 0.4× … 2.5×.
    public static func estimate(portionGrams: Double, box: NormalizedBox, multipleFoods: Bool) -> (Double, String) {
        guard multipleFoods else { return (portionGrams.rounded(), "default_portion") }
        let factor = min(2.5, max(0.4, box.area / 0.2))
        return ((portionGrams * factor).rounded(), "box_area")
    }
}
