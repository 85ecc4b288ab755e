import Foundation

/// Few-shot labels by nearest example: each label keeps its L2-normalised example embeddings (the newest
/// `maxExamples`); a query goes to the label of the most similar example (cosine), or is `unknown` when even that is
/// below `threshold`. Adding a label from three photos needs no training. The nearest example, not the label's mean,
/// because a corrected home dish is photographed again much as it was: on ECUSTFD items left out of training, 3
/// corrections name 97 % of the item's later photos by the nearest example and 70 % by the mean (docs/recognition.md).
/// Files written before examples were kept hold only `sum`; their labels match by that mean.
public struct PrototypeMatcher: Sendable, Codable, Equatable {
    public struct Prototype: Sendable, Codable, Equatable {
        public var label: String
        /// Sum of the L2-normalised examples (kept so more examples can be added later).
        public var sum: [Float]
        public var count: Int
        /// The newest examples, L2-normalised (nil in files written before they were kept).
        public var examples: [[Float]]?
        /// The grams of the user's last correction to this label: their own portion of a home dish.
        public var grams: Double?

        public init(label: String, sum: [Float], count: Int, examples: [[Float]]? = nil, grams: Double? = nil) {
            self.label = label; self.sum = sum; self.count = count; self.examples = examples; self.grams = grams
        }

        enum CodingKeys: String, CodingKey { case label, sum, count, examples, grams }

        // Examples and the sum are stored as `PackedFloats` (base64 of little-endian Float32): a user's file of ten foods
        // reads in milliseconds instead of the 130 ms JSON numbers took (measured at start-up of `analyze`). A sum written
        // as numbers (files from before) still reads.
        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            label = try c.decode(String.self, forKey: .label)
            sum = try c.decodeFloats(forKey: .sum)
            count = try c.decode(Int.self, forKey: .count)
            grams = try c.decodeIfPresent(Double.self, forKey: .grams)
            examples = try c.decodeIfPresent([PackedFloats].self, forKey: .examples)?.map(\.values)
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(label, forKey: .label)
            try c.encodeFloats(sum, forKey: .sum)
            try c.encode(count, forKey: .count)
            try c.encodeIfPresent(grams, forKey: .grams)
            try c.encodeIfPresent(examples?.map(PackedFloats.init), forKey: .examples)
        }
    }

    /// Examples kept per label: the nearest-example rule needs the examples, and a user's store stays small (a label
    /// of 32 examples of 1,280 values is about 0.4 MB of JSON, read once per run).
    public static let maxExamples = 32

    public struct Match: Sendable, Equatable {
        /// The best label, or nil when the best similarity is below the threshold (or there are no labels).
        public var label: String?
        public var similarity: Float
        public var isUnknown: Bool { label == nil }
        /// Every label with its cosine similarity, best first.
        public var ranked: [LabelScore]
    }

    public var dimension: Int
    public var threshold: Float
    public private(set) var prototypes: [Prototype]

    public init(dimension: Int, threshold: Float = 0.75) {
        self.dimension = dimension
        self.threshold = threshold
        prototypes = []
    }

    public var labels: [String] { prototypes.map(\.label) }

    /// Adds examples to `label` (creating it when new); `grams`, when given, becomes the label's portion.
    public mutating func add(label: String, examples: [[Float]], grams: Double? = nil) throws(FoodVisionError) {
        guard !examples.isEmpty else { throw .invalidTrainingData(reason: "no examples for \(label)") }
        var sum = [Float](repeating: 0, count: dimension)
        var units: [[Float]] = []
        for e in examples {
            guard e.count == dimension else {
                throw .invalidInput(reason: "example for \(label) has \(e.count) values, the matcher uses \(dimension)")
            }
            guard let u = Self.normalized(e) else { throw .invalidInput(reason: "an example for \(label) is all zeros") }
            for j in 0..<dimension { sum[j] += u[j] }
            units.append(u)
        }
        if let i = prototypes.firstIndex(where: { $0.label == label }) {
            for j in 0..<dimension { prototypes[i].sum[j] += sum[j] }
            prototypes[i].count += examples.count
            // A label from an old file keeps its mean as one example, so what it learnt before still counts.
            let kept = prototypes[i].examples ?? Self.normalized(prototypes[i].sum).map { [$0] } ?? []
            prototypes[i].examples = Array((kept + units).suffix(Self.maxExamples))
            if let grams { prototypes[i].grams = grams }
        } else {
            prototypes.append(Prototype(label: label, sum: sum, count: examples.count, examples: Array(units.suffix(Self.maxExamples)),
                                        grams: grams))
        }
    }

    public mutating func remove(label: String) {
        prototypes.removeAll { $0.label == label }
    }

    public func match(_ embedding: [Float]) throws(FoodVisionError) -> Match {
        guard embedding.count == dimension else {
            throw .invalidInput(reason: "embedding has \(embedding.count) values, the matcher uses \(dimension)")
        }
        guard let q = Self.normalized(embedding) else { return Match(label: nil, similarity: 0, ranked: []) }
        let ranked = prototypes.compactMap { p -> LabelScore? in
            let candidates = p.examples ?? Self.normalized(p.sum).map { [$0] } ?? []
            guard !candidates.isEmpty else { return nil }
            return LabelScore(label: p.label, probability: candidates.map { Self.dot(q, $0) }.max()!)
        }.sorted { $0.probability > $1.probability }
        guard let best = ranked.first else { return Match(label: nil, similarity: 0, ranked: []) }
        return Match(label: best.probability >= threshold ? best.label : nil, similarity: best.probability, ranked: ranked)
    }

    public func save(to path: String) throws(FoodVisionError) {
        try writeModelFile(self, to: path, what: "matcher")
    }

    public static func load(from path: String) throws(FoodVisionError) -> PrototypeMatcher {
        guard FileManager.default.fileExists(atPath: path) else { throw .missingFile(path: path) }
        let m = try decodeModelFile(PrototypeMatcher.self, from: path, what: "prototype matcher")
        guard m.prototypes.allSatisfy({ p in p.sum.count == m.dimension && (p.examples ?? []).allSatisfy { $0.count == m.dimension } }) else {
            throw .invalidFormat(path: path, reason: "a prototype's length differs from dimension \(m.dimension)")
        }
        // Floats are finite by decoding (JSON numbers, and `PackedFloats` refuses NaN and infinities); grams are bounded here.
        guard m.prototypes.allSatisfy({ p in p.grams.map { $0 >= 0 && $0 <= 20_000 } ?? true }) else {
            throw .invalidFormat(path: path, reason: "a prototype's grams are outside 0–20000")
        }
        return m
    }

    /// Σ a·b over equal-length vectors, sixteen lanes at a time.
    static func dot(_ a: [Float], _ b: [Float]) -> Float {
        a.withUnsafeBufferPointer { x in
            b.withUnsafeBufferPointer { y in
                let n = min(x.count, y.count)
                var acc = SIMD16<Float>()
                var i = 0
                while i + 16 <= n {
                    acc += SIMD16<Float>(x[i..<i + 16]) * SIMD16<Float>(y[i..<i + 16])
                    i += 16
                }
                var total = acc.sum()
                while i < n { total += x[i] * y[i]; i += 1 }
                return total
            }
        }
    }

    static func normalized(_ v: [Float]) -> [Float]? {
        let norm = v.reduce(Float(0)) { $0 + $1 * $1 }.squareRoot()
        guard norm > 0, norm.isFinite else { return nil }
        return v.map { $0 / norm }
    }
}
