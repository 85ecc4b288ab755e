import Foundation

/// Few-shot labels by nearest prototype: each label is the normalised mean of its L2-normalised example
/// embeddings; a query goes to the label with the highest cosine similarity, or is `unknown` when even
/// that is below `threshold`. Adding a label from three photos needs no training.
public struct PrototypeMatcher: Sendable, Codable, Equatable {
    public struct Prototype: Sendable, Codable, Equatable {
        public var label: String
        /// Sum of the L2-normalised examples (kept so more examples can be added later).
        public var sum: [Float]
        public var count: Int
    }

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

    /// Adds examples to `label` (creating it when new).
    public mutating func add(label: String, examples: [[Float]]) throws(FoodVisionError) {
        guard !examples.isEmpty else { throw .invalidTrainingData(reason: "no examples for \(label)") }
        var sum = [Float](repeating: 0, count: dimension)
        for e in examples {
            guard e.count == dimension else {
                throw .invalidInput(reason: "example for \(label) has \(e.count) values, the matcher uses \(dimension)")
            }
            guard let u = Self.normalized(e) else { throw .invalidInput(reason: "an example for \(label) is all zeros") }
            for j in 0..<dimension { sum[j] += u[j] }
        }
        if let i = prototypes.firstIndex(where: { $0.label == label }) {
            for j in 0..<dimension { prototypes[i].sum[j] += sum[j] }
            prototypes[i].count += examples.count
        } else {
            prototypes.append(Prototype(label: label, sum: sum, count: examples.count))
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
            guard let c = Self.normalized(p.sum) else { return nil }
            var dot: Float = 0
            for j in 0..<dimension { dot += q[j] * c[j] }
            return LabelScore(label: p.label, probability: dot)
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
        guard m.prototypes.allSatisfy({ $0.sum.count == m.dimension }) else {
            throw .invalidFormat(path: path, reason: "a prototype's length differs from dimension \(m.dimension)")
        }
        return m
    }

    static func normalized(_ v: [Float]) -> [Float]? {
        let norm = v.reduce(Float(0)) { $0 + $1 * $1 }.squareRoot()
        guard norm > 0, norm.isFinite else { return nil }
        return v.map { $0 / norm }
    }
}
