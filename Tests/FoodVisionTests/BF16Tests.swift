import FoodCore
import FoodMomentTestSupport
import Foundation
import Testing
@testable import FoodVision

/// The BF16 1x1 convolutions: rounding, the kernel against a naive product of the same rounded values, and the
/// whole network against the NumPy reference. Skipped (with the reason) on a CPU without AVX-512 BF16, where
/// `precision: .bf16` falls back to FP32 (checked below on every CPU).
@Suite struct BF16Tests {
    static let bf16 = InferencePrecision.bf16Supported

    @Test func roundsToNearestEven() {
        func r(_ bits: UInt32) -> UInt32 { bf16Rounded(Float(bitPattern: bits)).bitPattern }
        #expect(r(0x3F80_0000) == 0x3F80_0000)
        #expect(r(0x3F80_7FFF) == 0x3F80_0000)  // below half: down
        #expect(r(0x3F80_8000) == 0x3F80_0000)  // a tie: to the even 0x3F80
        #expect(r(0x3F81_8000) == 0x3F82_0000)  // a tie: to the even 0x3F82
        #expect(r(0x3F80_8001) == 0x3F81_0000)  // above half: up
        #expect(r(0xBF80_8001) == 0xBF81_0000)  // the sign is kept
        #expect(r(0x7F7F_FFFF) == 0x7F80_0000)  // the largest float rounds to infinity, as IEEE rounding does
        #expect(r(0x7F80_0000) == 0x7F80_0000 && r(0xFF80_0000) == 0xFF80_0000)
        #expect(bf16Rounded(.nan).isNaN && bf16Rounded(Float(bitPattern: 0x7F80_0001)).isNaN)  // a NaN never becomes infinity
        #expect(r(0x0000_0001) == 0 && r(0x8040_0000) == 0x8000_0000)  // subnormals flush to signed zero
    }

    @Test func fallsBackToFP32WhereTheCPUHasNoBF16() {
        let layer = PointwiseConv2D(weightsOI: [1, 2], bias: nil, inChannels: 2, outChannels: 1, activation: .none, precision: .bf16)
        #expect(layer.precision == (Self.bf16 ? .bf16 : .fp32))
        #expect(InferencePrecision.bf16.available == (Self.bf16 ? .bf16 : .fp32))
        #expect(InferencePrecision.fp32.available == .fp32)
        // Inputs wider than the kernel's row scratch stay FP32.
        let wide = PointwiseConv2D(weightsOI: [Float](repeating: 0.5, count: 2049), bias: nil, inChannels: 2049, outChannels: 1,
                                   activation: .none, precision: .bf16)
        #expect(wide.precision == .fp32)
    }

    /// Shapes that are not multiples of the tile (rows, 16- and 32-column panels), odd K (a half pair), K beyond
    /// one converted block of rows, with and without residual and ReLU6: the same as a Double product of the rounded
    /// values, up to the float accumulation order.
    @Test(.enabled(if: bf16, "this CPU has no AVX-512 BF16"))
    func matchesANaiveProductOfRoundedValues() {
        let shapes = [(1, 5, 7, 3, 33), (2, 3, 5, 17, 45), (1, 1, 1, 300, 7), (1, 13, 11, 96, 24), (1, 10, 10, 257, 40),
                      (2, 4, 4, 64, 64), (1, 7, 7, 320, 128), (1, 9, 9, 32, 16), (1, 5, 6, 48, 80), (1, 1, 1, 1280, 1000),
                      (1, 14, 14, 112, 672), (1, 3, 5, 20, 48), (1, 1, 9, 24, 40), (2, 1, 7, 24, 48), (1, 7, 7, 600, 48),
                      (1, 40, 40, 16, 96), (1, 3, 3, 2048, 17), (1, 2, 2, 1, 1)]
        var rng = TestRandom(seed: 77)
        for (n, h, w, ci, co) in shapes {
            let x = Tensor(batch: n, height: h, width: w, channels: ci, values: rng.floats(n * h * w * ci).map { $0 * 3 })
            let weights = rng.floats(co * ci), bias = rng.floats(co)
            let residual = Tensor(batch: n, height: h, width: w, channels: co, values: rng.floats(n * h * w * co))
            let rounded = Tensor(batch: n, height: h, width: w, channels: ci, values: x.values.map(bf16Rounded))
            let layerRelu = PointwiseConv2D(weightsOI: weights, bias: bias, inChannels: ci, outChannels: co, activation: .relu6,
                                            precision: .bf16)
            let layerNone = PointwiseConv2D(weightsOI: weights, bias: bias, inChannels: ci, outChannels: co, activation: .none,
                                            precision: .bf16)
            #expect(layerRelu.precision == .bf16)
            for (relu6, useResidual) in [(false, false), (true, false), (false, true), (true, true)] {
                let got = (relu6 ? layerRelu : layerNone)(x, residual: useResidual ? residual : nil)
                let want = naivePointwise(rounded, weightsOI: weights.map(bf16Rounded), bias: bias, outChannels: co,
                                          residual: useResidual ? residual : nil, relu6: relu6)
                let tolerance = Float(ci).squareRoot() * 6e-6 + 2e-6
                #expect(maxAbsDiff(got.values, want.values) < tolerance,
                        "bf16 \(n)x\(h)x\(w)x\(ci)->\(co) relu6=\(relu6) residual=\(useResidual)")
            }
        }
    }

    /// Each image's rows are converted and multiplied alike whatever else is in the batch.
    @Test(.enabled(if: bf16, "this CPU has no AVX-512 BF16"))
    func aBatchEqualsSingleImages() {
        var rng = TestRandom(seed: 5)
        let (ci, co) = (96, 40)
        let layer = PointwiseConv2D(weightsOI: rng.floats(co * ci), bias: rng.floats(co), inChannels: ci, outChannels: co,
                                    activation: .relu6, precision: .bf16)
        let a = rng.floats(9 * ci), b = rng.floats(9 * ci)
        let both = layer(Tensor(batch: 2, height: 3, width: 3, channels: ci, values: a + b)).values
        let one = layer(Tensor(batch: 1, height: 3, width: 3, channels: ci, values: a)).values
        let two = layer(Tensor(batch: 1, height: 3, width: 3, channels: ci, values: b)).values
        #expect(both == one + two)
    }

    /// The whole network in BF16 against the NumPy reference (FP32): same top-5 and the hot dog's probability
    /// within a point; the logits within 0.15 (0.072 measured) and the embedding within 0.05.
    @Test(.enabled(if: bf16 && TestPaths.hasReference, "no AVX-512 BF16, or shared/data/weights/reference missing"))
    func networkStaysWithTheReference() throws {
        let model = try EfficientNetLite0(modelDirectory: TestPaths.model.path, precision: .bf16)
        #expect(model.precision == .bf16)
        let input = try readFloats(TestPaths.reference.appendingPathComponent("input_224.f32"))
        let wantLogits = try readFloats(TestPaths.reference.appendingPathComponent("logits.f32"))
        let wantFeatures = try readFloats(TestPaths.reference.appendingPathComponent("features.f32"))
        let got = try model.forward([FloatImage(width: 224, height: 224, channels: 3, values: input)])[0]
        let logitDiff = maxAbsDiff(got.logits, wantLogits), featureDiff = maxAbsDiff(got.embedding, wantFeatures)
        #expect(logitDiff <= 0.15, "max |logit diff| \(logitDiff)")
        #expect(featureDiff <= 0.05, "max |feature diff| \(featureDiff)")
        #expect(logitDiff > 0, "BF16 rounding must show in the logits; identical logits mean the FP32 kernel ran")
        let top5 = model.topClasses(logits: got.logits, k: 5)
        let wantTop5 = Array(wantLogits.indices.sorted { wantLogits[$0] > wantLogits[$1] }.prefix(5))
        #expect(top5.map(\.index) == wantTop5)
        #expect(abs(top5[0].probability - 0.9849) < 1e-2)
    }
}
