import Foundation

/// `models/food-head/photo-portions.json`: grams of a food alone in a photo without a coin, from the share of the
/// photo its box covers. A photo framed like the label's training photos (box area `area`) shows the label's typical
/// amount (`grams`, default its household portion); a larger or smaller share scales it by (share / area)^exponent,
/// kept within the label's bounds. Without a scale the share confounds amount with distance, so the exponent is the
/// one weighed portions support (fitted on ECUSTFD's train portions whose weights vary) and the bounds come from
/// what a photo of the label can plausibly show (a whole pizza, a platter of sushi).
public struct PhotoPortionModel: Sendable, Codable, Equatable {
    public struct Prior: Sendable, Codable, Equatable {
        /// Median box area (share of the photo) of the label's own foods in its training photos.
        public var area: Double?
        /// Grams a photo framed that way shows; nil = the household portion.
        public var grams: Double?
        /// Bounds in grams; nil = `minFactor` / `maxFactor` × the typical grams.
        public var min: Double?
        public var max: Double?
        /// Why the grams or bounds differ from the household portion.
        public var why: String?

        public init(area: Double? = nil, grams: Double? = nil, min: Double? = nil, max: Double? = nil, why: String? = nil) {
            self.area = area; self.grams = grams; self.min = min; self.max = max; self.why = why
        }
    }

    public var exponent: Double = 0.5
    /// Box area for labels without a fitted one.
    public var defaultArea: Double = 0.4
    public var minFactor: Double = 0.5
    public var maxFactor: Double = 2.5
    public var labels: [String: Prior] = [:]
    public var note: String = ""

    public init(exponent: Double = 0.5, defaultArea: Double = 0.4, minFactor: Double = 0.5, maxFactor: Double = 2.5,
                labels: [String: Prior] = [:], note: String = "") {
        self.exponent = exponent; self.defaultArea = defaultArea; self.minFactor = minFactor; self.maxFactor = maxFactor
        self.labels = labels; self.note = note
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        exponent = try c.decodeIfPresent(Double.self, forKey: .exponent) ?? 0.5
        defaultArea = try c.decodeIfPresent(Double.self, forKey: .defaultArea) ?? 0.4
        minFactor = try c.decodeIfPresent(Double.self, forKey: .minFactor) ?? 0.5
        maxFactor = try c.decodeIfPresent(Double.self, forKey: .maxFactor) ?? 2.5
        labels = try c.decodeIfPresent([String: Prior].self, forKey: .labels) ?? [:]
        note = try c.decodeIfPresent(String.self, forKey: .note) ?? ""
        guard exponent >= 0, exponent <= 2, defaultArea > 0, defaultArea <= 1, minFactor > 0, minFactor <= maxFactor else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription:
                "photo-portions: exponent must be within 0…2, default_area within (0, 1], 0 < min_factor ≤ max_factor"))
        }
    }

    enum CodingKeys: String, CodingKey {
        case exponent, labels, note
        case defaultArea = "default_area", minFactor = "min_factor", maxFactor = "max_factor"
    }

    /// Grams of a `label` food whose box covers `area` of the photo.
    public func grams(label: String, area: Double, portionGrams: Double) -> Double {
        let prior = labels[label]
        let typical = prior?.grams ?? portionGrams
        let reference = prior?.area ?? defaultArea
        let raw = typical * pow(Swift.max(area, 1e-4) / reference, exponent)
        let low = prior?.min ?? typical * minFactor, high = Swift.max(low, prior?.max ?? typical * maxFactor)
        return Swift.min(high, Swift.max(low, raw)).rounded()
    }

    /// `models/food-head/photo-portions.json`, or nil when absent.
    public static func load(modelsDirectory: String) throws -> PhotoPortionModel? {
        guard let data = FileManager.default.contents(atPath: modelsDirectory + "/food-head/photo-portions.json") else { return nil }
        return try JSONDecoder().decode(PhotoPortionModel.self, from: data)
    }

    /// The exponent weighed portions support: the pooled within-label least-squares slope of log grams on log box
    /// area, over labels whose portions weigh differently (sd of log grams ≥ `minSpread`; where every portion of a
    /// label weighs the same, the slope only fits framing noise), clamped to 0…1.
    public static func fitExponent(samples: [(label: String, area: Double, grams: Double)], minSpread: Double = 0.15,
                                   minCount: Int = 10) -> (exponent: Double, labels: [String]) {
        var byLabel: [String: [(x: Double, y: Double)]] = [:]
        for s in samples where s.area > 0 && s.grams > 0 { byLabel[s.label, default: []].append((log(s.area), log(s.grams))) }
        var sxx = 0.0, sxy = 0.0, used: [String] = []
        for (label, v) in byLabel.sorted(by: { $0.key < $1.key }) where v.count >= minCount {
            let mx = v.map(\.x).reduce(0, +) / Double(v.count), my = v.map(\.y).reduce(0, +) / Double(v.count)
            let spread = (v.reduce(0) { $0 + ($1.y - my) * ($1.y - my) } / Double(v.count)).squareRoot()
            guard spread >= minSpread else { continue }
            sxx += v.reduce(0) { $0 + ($1.x - mx) * ($1.x - mx) }
            sxy += v.reduce(0) { $0 + ($1.x - mx) * ($1.y - my) }
            used.append(label)
        }
        let slope = sxx > 0 ? Swift.min(1, Swift.max(0, sxy / sxx)) : 0
        return ((slope * 1000).rounded() / 1000, used)
    }
}
