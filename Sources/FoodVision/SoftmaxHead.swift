public import FoodCore
import Foundation

/// A label with its probability (or similarity), best first in every ranked list FoodVision returns.
public struct LabelScore: Sendable, Equatable, Codable {
    public var label: String
    public var probability: Float

    public init(label: String, probability: Float) {
        self.label = label; self.probability = probability
    }
}

/// A multinomial logistic-regression food head over backbone embeddings.
///
/// Features are standardised with the training split's mean and deviation, then `softmax(W x + b)`.
/// Training is mini-batch Adam on cross-entropy + `l2 * |W|^2 / 2`, with early stopping on a stratified
/// held-out part (the weights of the best held-out loss are kept). Everything random comes from `seed`,
/// so the same data and seed give the same head.
public struct SoftmaxHead: Sendable, Codable, Equatable {
    public struct TrainingReport: Sendable, Codable, Equatable {
        public var epochs: Int
        public var bestEpoch: Int
        public var trainCount: Int
        public var holdOutCount: Int
        public var trainAccuracy: Float
        /// nil when nothing was held out.
        public var holdOutAccuracy: Float?
        public var holdOutLoss: Float?
    }

    public var classes: [String]
    public var dimension: Int
    /// `classes.count x dimension`, row-major.
    public var weights: [Float]
    public var bias: [Float]
    public var featureMean: [Float]
    public var featureScale: [Float]
    public var report: TrainingReport?
    /// Set by `finetune` on the head it trains with a food top; nil (absent in the file) for a linear head from
    /// `train`, the only starting point `finetune` accepts.
    public var fineTuned: Bool? = nil

    public static func train(embeddings: [[Float]], labels: [Int], classes: [String], l2: Float = 1e-3,
                             holdOutFraction: Double = 0.2, maxEpochs: Int = 100, seed: UInt64 = 1,
                             learningRate: Float = 0.01, batchSize: Int = 32, patience: Int = 8,
                             groupSize: Int = 1, photoGroups: [Int]? = nil) throws(FoodVisionError) -> SoftmaxHead {
        guard !embeddings.isEmpty, embeddings.count == labels.count else {
            throw .invalidTrainingData(reason: "\(embeddings.count) embeddings for \(labels.count) labels; pass one label per embedding")
        }
        guard classes.count >= 2 else { throw .invalidTrainingData(reason: "\(classes.count) class(es); a softmax head needs at least 2") }
        let d = embeddings[0].count
        guard d > 0, embeddings.allSatisfy({ $0.count == d }) else {
            throw .invalidTrainingData(reason: "embeddings differ in length (first has \(d)); use one backbone for all")
        }
        if let bad = labels.first(where: { $0 < 0 || $0 >= classes.count }) {
            throw .invalidTrainingData(reason: "label \(bad) is outside 0..<\(classes.count)")
        }
        guard (0..<1).contains(holdOutFraction), maxEpochs >= 1, batchSize >= 1, l2 >= 0, learningRate > 0 else {
            throw .invalidTrainingData(reason: "holdOutFraction must be in 0..<1, maxEpochs and batchSize >= 1, l2 >= 0, learningRate > 0")
        }
        var rng = SplitMix64(seed: seed)
        // Stratified split by photo (`HoldOutSplit`): with `groupSize` > 1, consecutive runs of that many embeddings
        // (augmented views of one photo) stay together on one side, so the held-out part never contains a view of a
        // training photo; with `photoGroups`, photos of one group (shots of one weighed portion) do too.
        guard groupSize >= 1, labels.count % groupSize == 0 else {
            throw .invalidTrainingData(reason: "\(labels.count) embeddings are not whole groups of \(groupSize)")
        }
        let photoLabels = stride(from: 0, to: labels.count, by: groupSize).map { labels[$0] }
        if let photoGroups, photoGroups.count != photoLabels.count {
            throw .invalidTrainingData(reason: "\(photoGroups.count) photo groups for \(photoLabels.count) photos")
        }
        let held = HoldOutSplit.photos(labels: photoLabels, classes: classes.count, fraction: holdOutFraction, rng: &rng,
                                       groups: photoGroups)
        var trainIdx = [Int](), holdIdx = [Int]()
        for p in photoLabels.indices {
            if held.contains(p) { holdIdx += (p * groupSize)..<((p + 1) * groupSize) } else { trainIdx += (p * groupSize)..<((p + 1) * groupSize) }
        }
        guard !trainIdx.isEmpty else { throw .invalidTrainingData(reason: "no training examples left after the hold-out split") }
        // Standardisation from the training split.
        var mean = [Double](repeating: 0, count: d), sq = [Double](repeating: 0, count: d)
        for i in trainIdx { for j in 0..<d { let v = Double(embeddings[i][j]); mean[j] += v; sq[j] += v * v } }
        let n = Double(trainIdx.count)
        let featureMean = mean.map { Float($0 / n) }
        let featureScale = (0..<d).map { j -> Float in
            let variance = max(sq[j] / n - (mean[j] / n) * (mean[j] / n), 0)
            return Float(1 / max(variance.squareRoot(), 1e-6))
        }
        let k = classes.count
        var head = SoftmaxHead(classes: classes, dimension: d, weights: [Float](repeating: 0, count: k * d),
                               bias: [Float](repeating: 0, count: k), featureMean: featureMean, featureScale: featureScale,
                               report: nil)
        let x = embeddings.map { head.standardize($0) }
        // Adam state.
        var mW = [Float](repeating: 0, count: k * d), vW = mW, mB = [Float](repeating: 0, count: k), vB = mB
        let beta1: Float = 0.9, beta2: Float = 0.999, epsAdam: Float = 1e-8
        var step = 0
        var best = head, bestLoss = Float.infinity, bestEpoch = 0, epochsRun = 0, sinceBest = 0
        var order = trainIdx
        var gW = [Float](repeating: 0, count: k * d), gB = [Float](repeating: 0, count: k)
        var probs = [Float](repeating: 0, count: k)
        for epoch in 1...maxEpochs {
            epochsRun = epoch
            rng.shuffle(&order)
            var start = 0
            while start < order.count {
                let batch = order[start..<min(start + batchSize, order.count)]
                start += batchSize
                for i in gW.indices { gW[i] = 0 }
                for i in gB.indices { gB[i] = 0 }
                for i in batch {
                    head.standardizedProbabilities(x[i], into: &probs)
                    probs[labels[i]] -= 1
                    x[i].withUnsafeBufferPointer { xi in
                        gW.withUnsafeMutableBufferPointer { g in
                            for c in 0..<k {
                                let p = probs[c]
                                gB[c] += p
                                let row = c * d
                                for j in 0..<d { g[row + j] += p * xi[j] }
                            }
                        }
                    }
                }
                let scale = 1 / Float(batch.count)
                step += 1
                let c1 = 1 - pow(beta1, Float(step)), c2 = 1 - pow(beta2, Float(step))
                for i in 0..<(k * d) {
                    let g = gW[i] * scale + l2 * head.weights[i]
                    mW[i] = beta1 * mW[i] + (1 - beta1) * g
                    vW[i] = beta2 * vW[i] + (1 - beta2) * g * g
                    head.weights[i] -= learningRate * (mW[i] / c1) / ((vW[i] / c2).squareRoot() + epsAdam)
                }
                for c in 0..<k {
                    let g = gB[c] * scale
                    mB[c] = beta1 * mB[c] + (1 - beta1) * g
                    vB[c] = beta2 * vB[c] + (1 - beta2) * g * g
                    head.bias[c] -= learningRate * (mB[c] / c1) / ((vB[c] / c2).squareRoot() + epsAdam)
                }
            }
            guard !holdIdx.isEmpty else { best = head; bestEpoch = epoch; continue }
            let loss = head.meanLoss(x: x, labels: labels, indices: holdIdx)
            if loss < bestLoss - 1e-6 {
                bestLoss = loss; best = head; bestEpoch = epoch; sinceBest = 0
            } else {
                sinceBest += 1
                if sinceBest >= patience { break }
            }
        }
        best.report = TrainingReport(
            epochs: epochsRun, bestEpoch: bestEpoch, trainCount: trainIdx.count, holdOutCount: holdIdx.count,
            trainAccuracy: best.accuracy(x: x, labels: labels, indices: trainIdx),
            holdOutAccuracy: holdIdx.isEmpty ? nil : best.accuracy(x: x, labels: labels, indices: holdIdx),
            holdOutLoss: holdIdx.isEmpty ? nil : bestLoss)
        return best
    }

    /// Class probabilities for one embedding, best first.
    public func predict(_ embedding: [Float]) throws(FoodVisionError) -> [LabelScore] {
        guard embedding.count == dimension else {
            throw .invalidInput(reason: "embedding has \(embedding.count) values, the head was trained on \(dimension)")
        }
        var p = [Float](repeating: 0, count: classes.count)
        standardizedProbabilities(standardize(embedding), into: &p)
        return classes.indices.sorted { p[$0] > p[$1] || (p[$0] == p[$1] && $0 < $1) }
            .map { LabelScore(label: classes[$0], probability: p[$0]) }
    }

    /// Class activation map of class `classIndex` over a backbone feature map whose mean over positions is
    /// the embedding (`BackboneOutput.featureMap`): the head's standardised weights applied at every
    /// position (the constant part of the logit left out). High values show where the class is.
    public func activationMap(featureMap: FloatImage, classIndex: Int) throws(FoodVisionError) -> [Float] {
        guard featureMap.channels == dimension else {
            throw .invalidInput(reason: "feature map has \(featureMap.channels) channels, the head was trained on \(dimension)")
        }
        guard classes.indices.contains(classIndex) else {
            throw .invalidInput(reason: "class index \(classIndex) is outside 0..<\(classes.count)")
        }
        let w = (0..<dimension).map { weights[classIndex * dimension + $0] * featureScale[$0] }
        return FoodVision.activationMap(featureMap, weights: w)
    }

    public func save(to path: String) throws(FoodVisionError) {
        try writeModelFile(self, to: path, what: "head")
    }

    public static func load(from path: String) throws(FoodVisionError) -> SoftmaxHead {
        guard FileManager.default.fileExists(atPath: path) else { throw .missingFile(path: path) }
        let head = try decodeModelFile(SoftmaxHead.self, from: path, what: "softmax head")
        try head.checkSizes(path: path)
        return head
    }

    /// The arrays agree with the classes and the dimension (a decoded head is not checked by its decoder; `predict`
    /// reads the weights unchecked).
    package func checkSizes(path: String) throws(FoodVisionError) {
        // Checked multiplication: a head whose dimension times its class count overflows trapped here (seen while
        // writing the food-head fuzz target and reproduced through it).
        let (cells, overflow) = classes.count.multipliedReportingOverflow(by: dimension)
        guard !overflow, dimension >= 0, weights.count == cells, bias.count == classes.count,
              featureMean.count == dimension, featureScale.count == dimension else {
            throw .invalidFormat(path: path, reason: "array sizes do not match \(classes.count) classes x \(dimension)")
        }
    }

    func standardize(_ e: [Float]) -> [Float] {
        (0..<dimension).map { (e[$0] - featureMean[$0]) * featureScale[$0] }
    }

    func standardizedProbabilities(_ x: [Float], into p: inout [Float]) {
        let d = dimension
        weights.withUnsafeBufferPointer { w in
            x.withUnsafeBufferPointer { xv in
                for c in 0..<classes.count {
                    var acc = bias[c]
                    let row = c * d
                    for j in 0..<d { acc += w[row + j] * xv[j] }
                    p[c] = acc
                }
            }
        }
        let m = p.max() ?? 0
        var s: Float = 0
        for c in p.indices { p[c] = Foundation.exp(p[c] - m); s += p[c] }
        for c in p.indices { p[c] /= s }
    }

    func meanLoss(x: [[Float]], labels: [Int], indices: [Int]) -> Float {
        var p = [Float](repeating: 0, count: classes.count)
        var loss: Float = 0
        for i in indices {
            standardizedProbabilities(x[i], into: &p)
            loss -= Foundation.log(max(p[labels[i]], 1e-12))
        }
        return loss / Float(indices.count)
    }

    func accuracy(x: [[Float]], labels: [Int], indices: [Int]) -> Float {
        guard !indices.isEmpty else { return 0 }
        var p = [Float](repeating: 0, count: classes.count)
        var right = 0
        for i in indices {
            standardizedProbabilities(x[i], into: &p)
            if p.indices.max(by: { p[$0] < p[$1] }) == labels[i] { right += 1 }
        }
        return Float(right) / Float(indices.count)
    }
}

/// The seeded, stratified hold-out split `SoftmaxHead.train` and `finetune` share.
public enum HoldOutSplit {
    /// Per class, a seeded shuffle of its photos — or, with `groups` (one id per photo), of its groups — and the first
    /// `fraction` held out (at least one when the class has two or more). A held-out group takes all its photos
    /// along, whatever their label (crops of one photo, shots of one portion). Without groups every photo is its
    /// own group. Returns the held-out photo indices.
    public static func photos(labels: [Int], classes: Int, fraction: Double, seed: UInt64, groups: [Int]? = nil) -> Set<Int> {
        var rng = SplitMix64(seed: seed)
        return photos(labels: labels, classes: classes, fraction: fraction, rng: &rng, groups: groups)
    }

    /// The same, drawing from `rng` (`SoftmaxHead.train` goes on to shuffle its batches with it).
    public static func photos(labels: [Int], classes: Int, fraction: Double, rng: inout SplitMix64, groups: [Int]? = nil) -> Set<Int> {
        let group = groups ?? Array(labels.indices)
        var heldGroups = Set<Int>()
        for c in 0..<classes {
            var seen = Set<Int>(), members = [Int]()
            for p in labels.indices where labels[p] == c && seen.insert(group[p]).inserted { members.append(group[p]) }
            rng.shuffle(&members)
            var hold = Int((Double(members.count) * fraction).rounded())
            if fraction > 0 && hold == 0 && members.count >= 2 { hold = 1 }
            heldGroups.formUnion(members.prefix(hold))
        }
        return Set(labels.indices.filter { heldGroups.contains(group[$0]) })
    }
}

// In an extension, so the memberwise initialiser stays.
extension SoftmaxHead {
    enum CodingKeys: String, CodingKey {
        case classes, dimension, weights, bias, featureMean, featureScale, report, fineTuned
    }

    /// The weights and the standardisation come packed (`PackedFloats`) or as numbers.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        classes = try c.decode([String].self, forKey: .classes)
        dimension = try c.decode(Int.self, forKey: .dimension)
        weights = try c.decodeFloats(forKey: .weights)
        bias = try c.decodeFloats(forKey: .bias)
        featureMean = try c.decodeFloats(forKey: .featureMean)
        featureScale = try c.decodeFloats(forKey: .featureScale)
        report = try c.decodeIfPresent(TrainingReport.self, forKey: .report)
        fineTuned = try c.decodeIfPresent(Bool.self, forKey: .fineTuned)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(classes, forKey: .classes)
        try c.encode(dimension, forKey: .dimension)
        try c.encodeFloats(weights, forKey: .weights)
        try c.encodeFloats(bias, forKey: .bias)
        try c.encodeFloats(featureMean, forKey: .featureMean)
        try c.encodeFloats(featureScale, forKey: .featureScale)
        try c.encodeIfPresent(report, forKey: .report)
        try c.encodeIfPresent(fineTuned, forKey: .fineTuned)
    }
}
