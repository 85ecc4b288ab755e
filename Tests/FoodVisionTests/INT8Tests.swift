import FoodCore
import FoodMomentTestSupport
import Foundation
import Testing
@testable import FoodVision

/// The INT8 1x1 convolutions: the row quantisation, the kernel against an exact integer product of the same
/// quantised values, which layers run in INT8, and the network against the NumPy reference. Skipped (with the
/// reason) on a CPU without AVX-512 VNNI.
@Suite struct INT8Tests {
    static let vnni = InferencePrecision.int8Supported

    @Test func rowQuantisationKeepsZeroExactAndSpansTheRange() {
        let q = int8QuantizedRow([-1, 0, 0.5, 3])
        #expect(q.scale == 4 / 255 && q.zero == 64)  // the range [-1, 3] in 255 steps; -1 / scale = -63.75 → zero 64
        #expect(q.bytes == [0, 64, 96, 255])
        #expect(int8QuantizedRow([0, 0, 0]).bytes == [0, 0, 0] && int8QuantizedRow([0, 0]).scale == 1)
        let relu = int8QuantizedRow([0, 6, 3])  // ReLU6 outputs: zero point 0, all 256 levels for [0, 6]
        #expect(relu.zero == 0 && relu.bytes == [0, 255, 128])
    }

    @Test func onlyWideLayersRunInINT8() {
        #expect(InferencePrecision.int8Runs(inChannels: 1152, outChannels: 192))
        #expect(!InferencePrecision.int8Runs(inChannels: 144, outChannels: 24))
        #expect(!InferencePrecision.int8Runs(inChannels: 16, outChannels: 96))
        let narrow = PointwiseConv2D(weightsOI: [Float](repeating: 0.1, count: 24 * 144), bias: nil, inChannels: 144, outChannels: 24,
                                     activation: .none, precision: .int8)
        #expect(narrow.precision == (InferencePrecision.bf16Supported ? .bf16 : .fp32))
        let wide = PointwiseConv2D(weightsOI: [Float](repeating: 0.1, count: 64 * 128), bias: nil, inChannels: 128, outChannels: 64,
                                   activation: .none, precision: .int8)
        #expect(wide.precision == InferencePrecision.int8.available)
    }

    /// Rows, columns and K that are not multiples of the tile or of four, K beyond one quantised block, with and
    /// without residual and ReLU6: equal to `s_i * w_j * (Σ q·w - z_i Σ w) + b` computed exactly in integers.
    @Test(.enabled(if: vnni, "this CPU has no AVX-512 VNNI"))
    func matchesAnExactIntegerProduct() {
        let shapes = [(1, 5, 7, 130, 65), (2, 3, 5, 129, 64), (1, 1, 1, 1280, 1000), (1, 13, 11, 240, 80), (1, 7, 7, 1152, 320),
                      (1, 14, 14, 672, 112), (1, 3, 5, 131, 95), (2, 1, 7, 4093, 70), (1, 9, 9, 320, 1280)]
        var rng = TestRandom(seed: 99)
        for (n, h, w, ci, co) in shapes {
            let x = Tensor(batch: n, height: h, width: w, channels: ci, values: rng.floats(n * h * w * ci).map { $0 * 3 + 0.7 })
            let weights = rng.floats(co * ci).map { $0 * 0.2 }, bias = rng.floats(co)
            let residual = Tensor(batch: n, height: h, width: w, channels: co, values: rng.floats(n * h * w * co))
            // The weights' quantisation: per output channel, symmetric over ±127.
            var wq = [Int](repeating: 0, count: co * ci), ws = [Float](repeating: 0, count: co), wsum = [Int](repeating: 0, count: co)
            for j in 0..<co {
                let m = (0..<ci).reduce(Float(0)) { max($0, abs(weights[j * ci + $1])) }
                ws[j] = m > 0 ? m / 127 : 1
                for k in 0..<ci {
                    wq[j * ci + k] = max(-127, min(127, Int((weights[j * ci + k] / ws[j]).rounded(.toNearestOrEven))))
                    wsum[j] += wq[j * ci + k]
                }
            }
            for (relu6, useResidual) in [(false, false), (true, true)] {
                let layer = PointwiseConv2D(weightsOI: weights, bias: bias, inChannels: ci, outChannels: co,
                                            activation: relu6 ? .relu6 : .none, precision: .int8)
                #expect(layer.precision == .int8)
                let got = layer(x, residual: useResidual ? residual : nil).values
                var worst: Float = 0
                for p in 0..<(n * h * w) {
                    let q = int8QuantizedRow(Array(x.values[(p * ci)..<((p + 1) * ci)]))
                    for j in 0..<co {
                        var acc = 0
                        for k in 0..<ci { acc += Int(q.bytes[k]) * wq[j * ci + k] }
                        var want = Double(q.scale) * Double(ws[j]) * Double(acc - q.zero * wsum[j]) + Double(bias[j])
                        if useResidual { want += Double(residual.values[p * co + j]) }
                        if relu6 { want = min(max(want, 0), 6) }
                        worst = max(worst, abs(Float(want) - got[p * co + j]))
                    }
                }
                #expect(worst < 1e-4, "int8 \(n)x\(h)x\(w)x\(ci)->\(co) relu6=\(relu6) residual=\(useResidual): \(worst)")
            }
        }
    }

    /// The whole network with its wide layers in INT8 against the NumPy reference (FP32): same top-5, the hot
    /// dog's probability within two points, the logits within 0.3 (0.139 measured).
    @Test(.enabled(if: vnni && TestPaths.hasReference, "no AVX-512 VNNI, or shared/data/weights/reference missing"))
    func networkStaysWithTheReference() throws {
        let model = try EfficientNetLite0(modelDirectory: TestPaths.model.path, precision: .int8)
        #expect(model.precision == .int8)
        let input = try readFloats(TestPaths.reference.appendingPathComponent("input_224.f32"))
        let wantLogits = try readFloats(TestPaths.reference.appendingPathComponent("logits.f32"))
        let got = try model.forward([FloatImage(width: 224, height: 224, channels: 3, values: input)])[0]
        let logitDiff = maxAbsDiff(got.logits, wantLogits)
        #expect(logitDiff <= 0.3 && logitDiff > 0, "max |logit diff| \(logitDiff)")
        let top5 = model.topClasses(logits: got.logits, k: 5)
        #expect(top5.map(\.index) == Array(wantLogits.indices.sorted { wantLogits[$0] > wantLogits[$1] }.prefix(5)))
        #expect(abs(top5[0].probability - 0.9849) < 2e-2)
    }
}
