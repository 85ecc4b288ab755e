import FoodCore
import Foundation
import FoodMomentTestSupport
import Testing
@testable import FoodVision

/// Gaussian clusters in `d` dimensions around random centres.
func clusters(classes: Int, perClass: Int, dimension d: Int, spread: Float, seed: UInt64) -> (x: [[Float]], y: [Int], centres: [[Float]]) {
    var rng = TestRandom(seed: seed)
    let centres = (0..<classes).map { _ in rng.floats(d).map { $0 * 2 } }
    var x = [[Float]](), y = [Int]()
    for c in 0..<classes {
        for _ in 0..<perClass {
            // Sum of uniforms: close enough to Gaussian for this purpose.
            x.append(centres[c].map { $0 + spread * (rng.float() + rng.float() + rng.float()) })
            y.append(c)
        }
    }
    return (x, y, centres)
}

@Suite struct HeadAndMatcherTests {
    @Test func softmaxHeadSeparatesClusters() throws {
        let names = ["apple", "bread", "curry", "dumpling"]
        let train = clusters(classes: 4, perClass: 40, dimension: 24, spread: 0.6, seed: 9)
        let head = try SoftmaxHead.train(embeddings: train.x, labels: train.y, classes: names, l2: 1e-3,
                                         holdOutFraction: 0.25, maxEpochs: 60, seed: 3)
        let report = try #require(head.report)
        #expect(report.holdOutCount == 40 && report.trainCount == 120)
        #expect(report.trainAccuracy > 0.95)
        #expect((report.holdOutAccuracy ?? 0) > 0.9)
        // Fresh samples from the same clusters.
        var rng = TestRandom(seed: 77)
        var right = 0
        for c in 0..<4 {
            for _ in 0..<25 {
                let e = train.centres[c].map { $0 + 0.6 * (rng.float() + rng.float() + rng.float()) }
                let p = try head.predict(e)
                if p[0].label == names[c] { right += 1 }
                #expect(abs(p.reduce(0) { $0 + $1.probability } - 1) < 1e-4)
            }
        }
        #expect(right >= 95, "\(right)/100 fresh samples right")
    }

    @Test func headActivationMapPointsAtTheClass() throws {
        let data = clusters(classes: 2, perClass: 30, dimension: 16, spread: 0.4, seed: 12)
        let head = try SoftmaxHead.train(embeddings: data.x, labels: data.y, classes: ["rice", "egg"], maxEpochs: 30, seed: 2)
        // A 1 x 2 "feature map": class 0's centre on the left, class 1's on the right.
        let map = FloatImage(width: 2, height: 1, channels: 16, values: data.centres[0] + data.centres[1])
        let rice = try head.activationMap(featureMap: map, classIndex: 0)
        let egg = try head.activationMap(featureMap: map, classIndex: 1)
        #expect(rice[0] > rice[1] && egg[1] > egg[0])
        #expect(throws: FoodVisionError.self) { try head.activationMap(featureMap: map, classIndex: 2) }
    }

    @Test func trainingIsDeterministicForASeed() throws {
        let data = clusters(classes: 3, perClass: 20, dimension: 8, spread: 1.2, seed: 4)
        let a = try SoftmaxHead.train(embeddings: data.x, labels: data.y, classes: ["a", "b", "c"], maxEpochs: 15, seed: 5)
        let b = try SoftmaxHead.train(embeddings: data.x, labels: data.y, classes: ["a", "b", "c"], maxEpochs: 15, seed: 5)
        let c = try SoftmaxHead.train(embeddings: data.x, labels: data.y, classes: ["a", "b", "c"], maxEpochs: 15, seed: 6)
        #expect(a == b)
        #expect(a.weights != c.weights)
    }

    @Test func strongerL2GivesSmallerWeights() throws {
        let data = clusters(classes: 3, perClass: 20, dimension: 8, spread: 0.5, seed: 8)
        let weak = try SoftmaxHead.train(embeddings: data.x, labels: data.y, classes: ["a", "b", "c"], l2: 0,
                                         holdOutFraction: 0, maxEpochs: 40, seed: 1)
        let strong = try SoftmaxHead.train(embeddings: data.x, labels: data.y, classes: ["a", "b", "c"], l2: 1,
                                           holdOutFraction: 0, maxEpochs: 40, seed: 1)
        let norm = { (h: SoftmaxHead) in h.weights.reduce(Float(0)) { $0 + $1 * $1 } }
        #expect(norm(strong) < norm(weak) * 0.5)
    }

    @Test func headSavesAndLoads() throws {
        let data = clusters(classes: 2, perClass: 10, dimension: 6, spread: 0.5, seed: 2)
        let head = try SoftmaxHead.train(embeddings: data.x, labels: data.y, classes: ["x", "y"], maxEpochs: 10, seed: 1)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("head-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try head.save(to: path)
        let loaded = try SoftmaxHead.load(from: path)
        #expect(loaded == head)
        #expect(try loaded.predict(data.x[0]) == head.predict(data.x[0]))
    }

    /// Long arrays are written packed (`{"f32le": base64}`), short ones as numbers; both read back bit for bit, and a
    /// file with numbers everywhere (older, or written by hand) reads the same.
    @Test func longArraysArePackedAndReadBackExactly() throws {
        var rng = TestRandom(seed: 5)
        let d = 600
        let head = SoftmaxHead(classes: ["a", "b", "c"], dimension: d, weights: rng.floats(3 * d).map { $0 * 1e-3 },
                               bias: [0.1, -2.5e-7, 3e20], featureMean: rng.floats(d), featureScale: rng.floats(d).map { $0 + 2 },
                               report: nil)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("head-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try head.save(to: path)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        #expect((json["weights"] as? [String: Any])?["f32le"] is String && (json["featureMean"] as? [String: Any])?["f32le"] is String)
        #expect((json["bias"] as? [Double])?.count == 3, "a short array stays numbers")
        let loaded = try SoftmaxHead.load(from: path)
        #expect(loaded.weights.map(\.bitPattern) == head.weights.map(\.bitPattern) && loaded == head)
        // The same head with every array as numbers.
        var plain = json
        plain["weights"] = head.weights.map(Double.init); plain["featureMean"] = head.featureMean.map(Double.init)
        plain["featureScale"] = head.featureScale.map(Double.init)
        try JSONSerialization.data(withJSONObject: plain).write(to: URL(fileURLWithPath: path))
        #expect(try SoftmaxHead.load(from: path) == head)
    }

    @Test(arguments: [
        (#"{"f32le": "not base64!"}"#, "base64"),
        (#"{"f32le": "AAAAAAA="}"#, "base64"),             // 5 bytes: not whole float32s
        (#"{"f32le": "AADAfw=="}"#, "NaN"),                // 0x7fc00000
        (#"{"f32le": "AACAfw=="}"#, "NaN"),                // +infinity
        (#"{"f32": "AAAAAA=="}"#, "f32le"),
    ])
    func badPackedArraysAreRefusedByName(packed: String, says: String) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("packed-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let json = #"{"classes":["a","b"],"dimension":1,"weights":[0,0],"bias":[0,0],"featureMean":"# + packed + #","featureScale":[1]}"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: dir + "/head.json"))
        do {
            _ = try SoftmaxHead.load(from: dir + "/head.json")
            Issue.record("loaded")
        } catch {
            #expect(error.description.contains(says), "\(error.description)")
        }
    }

    /// The bundled heads are packed: decoding their numbers one by one cost `analyze` 44 ms at every start.
    @Test func theBundledHeadsArePacked() throws {
        for name in ["head.json", "cell-head.json", "coin-head.json", "plate-head.json"] {
            let text = try String(contentsOfFile: TestPaths.repoRoot.appendingPathComponent("models/food-head/" + name).path, encoding: .utf8)
            #expect(text.contains(#""weights":{"f32le":"#) || text.contains(#""featureMean":{"f32le":"#), "\(name) is not packed: tools/models/pack-floats")
        }
    }

    @Test func headRejectsBadData() {
        #expect(throws: FoodVisionError.self) {
            try SoftmaxHead.train(embeddings: [[1, 2]], labels: [0, 1], classes: ["a", "b"])
        }
        #expect(throws: FoodVisionError.self) {
            try SoftmaxHead.train(embeddings: [[1, 2], [3]], labels: [0, 1], classes: ["a", "b"])
        }
        #expect(throws: FoodVisionError.self) {
            try SoftmaxHead.train(embeddings: [[1, 2], [3, 4]], labels: [0, 2], classes: ["a", "b"])
        }
        #expect(throws: FoodVisionError.self) {
            try SoftmaxHead.train(embeddings: [[1, 2], [3, 4]], labels: [0, 0], classes: ["a"])
        }
    }

    @Test func matcherLearnsANewLabelFromThreeExamples() throws {
        let data = clusters(classes: 4, perClass: 6, dimension: 32, spread: 0.3, seed: 21)
        var matcher = PrototypeMatcher(dimension: 32, threshold: 0.8)
        let names = ["soup", "salad", "steak"]
        for c in 0..<3 { try matcher.add(label: names[c], examples: Array(data.x[(c * 6)..<(c * 6 + 3)])) }
        // Class 3 is not known yet: its held-back examples are unknown.
        for e in data.x[21..<24] { #expect(try matcher.match(e).isUnknown) }
        try matcher.add(label: "sushi", examples: Array(data.x[18..<21]))
        for e in data.x[21..<24] {
            let m = try matcher.match(e)
            #expect(m.label == "sushi", "similarity \(m.similarity)")
        }
        for c in 0..<3 { for e in data.x[(c * 6 + 3)..<(c * 6 + 6)] { #expect(try matcher.match(e).label == names[c]) } }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("matcher-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try matcher.save(to: path)
        #expect(try PrototypeMatcher.load(from: path) == matcher)
    }

    /// A dish photographed twice in two settings: the nearest example names a later photo of either setting, where
    /// the label's mean lies between the two and reaches neither (the reason the matcher keeps examples).
    @Test func theNearestExampleNamesWhatTheMeanMisses() throws {
        var matcher = PrototypeMatcher(dimension: 3, threshold: 0.9)
        try matcher.add(label: "home_stew", examples: [[1, 0, 0.05], [0, 1, 0.05]])
        try matcher.add(label: "rice", examples: [[0, 0, 1]])
        let later = try matcher.match([0.98, 0.05, 0.1])
        #expect(later.label == "home_stew" && later.similarity > 0.99, "\(later)")
        let mean = PrototypeMatcher.normalized([1, 1, 0.1])!
        #expect(PrototypeMatcher.dot(mean, PrototypeMatcher.normalized([0.98, 0.05, 0.1])!) < 0.9, "the mean alone would say unknown")
        // Only the newest examples are kept; the sum keeps counting them all.
        for i in 0..<(PrototypeMatcher.maxExamples + 5) { try matcher.add(label: "rice", examples: [[0, Float(i) * 0.01, 1]]) }
        let rice = try #require(matcher.prototypes.first { $0.label == "rice" })
        #expect(rice.examples?.count == PrototypeMatcher.maxExamples && rice.count == PrototypeMatcher.maxExamples + 6)
    }

    /// A file written before examples were kept (a label's sum and count only) still matches, by its mean; teaching
    /// the label again keeps that mean as one example.
    @Test func anOlderFileMatchesByItsMean() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("old-matcher-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(#"{"dimension": 3, "threshold": 0.8, "prototypes": [{"label": "soup", "sum": [2, 0, 0], "count": 2}]}"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        var matcher = try PrototypeMatcher.load(from: path)
        #expect(try matcher.match([1, 0.1, 0]).label == "soup")
        try matcher.add(label: "soup", examples: [[0, 1, 0]])
        #expect(matcher.prototypes[0].examples?.count == 2 && matcher.prototypes[0].count == 3)
        #expect(try matcher.match([0.05, 1, 0]).label == "soup" && matcher.match([1, 0.05, 0]).label == "soup")
        try matcher.save(to: path)
        #expect(try PrototypeMatcher.load(from: path) == matcher, "examples round-trip through their base64 form")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try Data(text.replacingOccurrences(of: "\"examples\":[{\"f32le\":\"", with: "\"examples\":[{\"f32le\":\"!!").utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: FoodVisionError.self) { try PrototypeMatcher.load(from: path) }
    }

    @Test func matcherRejectsWrongDimension() {
        var matcher = PrototypeMatcher(dimension: 4)
        #expect(throws: FoodVisionError.self) { try matcher.add(label: "a", examples: [[1, 2, 3]]) }
        #expect(throws: FoodVisionError.self) { try matcher.match([1, 2]) }
        #expect(throws: FoodVisionError.self) { try matcher.add(label: "a", examples: [[0, 0, 0, 0]]) }
    }
}
