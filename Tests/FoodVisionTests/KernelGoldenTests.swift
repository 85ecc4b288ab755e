import FoodMomentTestSupport
import FoodCore
import Testing
@testable import FoodVision

@Suite struct KernelGoldenTests {
    @Test(arguments: [
        (224, 3, 2, 112, 0, 1), (112, 5, 2, 56, 1, 2), (7, 3, 2, 4, 1, 1), (14, 5, 1, 14, 2, 2), (9, 5, 2, 5, 2, 2),
        (1, 3, 2, 1, 1, 1),
    ])
    func samePaddingMatchesTensorFlow(_ c: (Int, Int, Int, Int, Int, Int)) {
        let p = samePadding(inputSize: c.0, kernel: c.1, stride: c.2)
        #expect(p.output == c.3 && p.before == c.4 && p.after == c.5, "n=\(c.0) k=\(c.1) s=\(c.2): \(p)")
    }

    /// Depthwise k3/k5, stride 1/2, odd and even sizes, channel counts that exercise the SIMD16, SIMD8
    /// and scalar paths, batch 1 and 2.
    @Test(arguments: [
        (1, 8, 8, 16, 3, 2), (1, 7, 9, 16, 3, 2), (2, 8, 8, 24, 5, 2), (1, 9, 7, 19, 5, 2), (2, 11, 12, 37, 3, 1),
        (1, 6, 13, 32, 5, 1), (1, 1, 1, 8, 3, 1), (2, 2, 3, 48, 5, 2), (1, 14, 14, 40, 5, 1), (2, 17, 15, 35, 5, 1),
        (1, 30, 31, 48, 3, 2), (2, 5, 5, 32, 5, 1),
    ])
    func depthwiseMatchesNaive(_ c: (Int, Int, Int, Int, Int, Int)) {
        let (n, h, w, ch, k, s) = c
        var rng = TestRandom(seed: UInt64(n * 1000 + h * 100 + w * 10 + ch + k + s))
        let x = Tensor(batch: n, height: h, width: w, channels: ch, values: rng.floats(n * h * w * ch).map { $0 * 4 })
        let weights = rng.floats(ch * k * k), bias = rng.floats(ch)
        for relu6 in [false, true] {
            let layer = DepthwiseConv2D(weightsCKK: weights, bias: bias, channels: ch, kernel: k, stride: s,
                                        activation: relu6 ? .relu6 : .none)
            let want = naiveDepthwise(x, weightsCKK: weights, bias: bias, kernel: k, stride: s, relu6: relu6)
            let direct = layer(x, paddedCopy: false), padded = layer(x, paddedCopy: true)
            #expect(direct.height == want.height && direct.width == want.width)
            #expect(maxAbsDiff(direct.values, want.values) < 1e-5, "depthwise \(c) relu6=\(relu6)")
            // The zero-padded path adds the same products in the same order.
            #expect(padded.values == direct.values, "padded depthwise \(c) relu6=\(relu6)")
        }
    }

    /// The stem: 3x3 stride 2, 3 -> 32 channels, plus odd output-channel counts (SIMD tail).
    /// Maps wide enough for the 8-output x 32-channel interior tile (odd widths, batch 2, 64 channels) too.
    @Test(arguments: [(1, 16, 16, 3, 32, 3, 2), (2, 9, 7, 3, 32, 3, 2), (1, 10, 11, 5, 21, 3, 1), (1, 8, 8, 2, 7, 5, 2),
                      (1, 34, 40, 3, 32, 3, 2), (2, 19, 37, 3, 64, 3, 2), (1, 7, 29, 3, 32, 3, 2), (1, 12, 21, 4, 32, 3, 1)])
    func denseConvMatchesNaive(_ c: (Int, Int, Int, Int, Int, Int, Int)) {
        let (n, h, w, ci, co, k, s) = c
        var rng = TestRandom(seed: UInt64(h * w + ci * co + k))
        let x = Tensor(batch: n, height: h, width: w, channels: ci, values: rng.floats(n * h * w * ci))
        let weights = rng.floats(co * ci * k * k), bias = rng.floats(co)
        let layer = Conv2D(weightsOIHW: weights, bias: bias, inChannels: ci, outChannels: co, kernel: k, stride: s,
                           activation: .relu6)
        let got = layer(x)
        let want = naiveConv(x, weightsOIHW: weights, bias: bias, outChannels: co, kernel: k, stride: s, relu6: true)
        #expect(got.values.count == want.values.count)
        #expect(maxAbsDiff(got.values, want.values) < 1e-5, "conv \(c)")
    }

    /// Pointwise GEMM on shapes that are not multiples of any tile (rows, columns) and K beyond the
    /// 256 block, with and without residual and ReLU6, for every micro-kernel.
    @Test(arguments: GemmKernel.allCases)
    func pointwiseMatchesNaive(_ kernel: GemmKernel) {
        let shapes = [(1, 5, 7, 3, 33), (2, 3, 5, 17, 45), (1, 1, 1, 300, 7), (1, 13, 11, 96, 24), (1, 10, 10, 257, 40),
                      (2, 4, 4, 64, 64), (1, 7, 7, 320, 128), (1, 9, 9, 32, 16), (1, 5, 6, 48, 80), (1, 1, 1, 1280, 1000), (1, 14, 14, 112, 672), (1, 3, 5, 20, 48),
                      (1, 1, 9, 24, 40), (1, 1, 10, 24, 40), (2, 1, 7, 24, 48), (1, 7, 7, 600, 48)]
        var rng = TestRandom(seed: 42)
        for (n, h, w, ci, co) in shapes {
            let x = Tensor(batch: n, height: h, width: w, channels: ci, values: rng.floats(n * h * w * ci))
            let weights = rng.floats(co * ci), bias = rng.floats(co)
            let residual = Tensor(batch: n, height: h, width: w, channels: co, values: rng.floats(n * h * w * co))
            for (relu6, useResidual) in [(false, false), (true, false), (false, true), (true, true)] {
                let layer = PointwiseConv2D(weightsOI: weights, bias: bias, inChannels: ci, outChannels: co,
                                            activation: relu6 ? .relu6 : .none, kernel: kernel, precision: .fp32)
                let got = layer(x, residual: useResidual ? residual : nil)
                let want = naivePointwise(x, weightsOI: weights, bias: bias, outChannels: co,
                                          residual: useResidual ? residual : nil, relu6: relu6)
                let tolerance = Float(ci).squareRoot() * 2e-6 + 1e-6
                #expect(maxAbsDiff(got.values, want.values) < tolerance,
                        "\(kernel) \(n)x\(h)x\(w)x\(ci)->\(co) relu6=\(relu6) residual=\(useResidual)")
            }
        }
    }

    @Test func everyKernelGivesTheSameBits() {
        var rng = TestRandom(seed: 7)
        let (m, ci, co) = (45, 130, 45)
        let x = Tensor(batch: 1, height: 1, width: m, channels: ci, values: rng.floats(m * ci))
        let weights = rng.floats(co * ci), bias = rng.floats(co)
        // The multiply-then-add kernels agree bit for bit, and so do the fused ones (one rounding per multiply-add, the
        // same products in the same order), which differ from the first group in the last bits.
        for group in [GemmKernel.allCases.filter { !$0.fused }, GemmKernel.allCases.filter(\.fused)] {
            let outputs = group.map {
                PointwiseConv2D(weightsOI: weights, bias: bias, inChannels: ci, outChannels: co, activation: .none, kernel: $0,
                                precision: .fp32)(x).values
            }
            #expect(group.count == 3)
            for (kernel, o) in zip(group, outputs).dropFirst() { #expect(o == outputs[0], "\(kernel) against \(group[0])") }
        }
    }

    @Test func fullyConnectedMatchesNaive() {
        var rng = TestRandom(seed: 3)
        let (inF, outF) = (1280, 1000)
        let weights = rng.floats(outF * inF), bias = rng.floats(outF)
        let inputs = [rng.floats(inF), rng.floats(inF)]
        let fc = FullyConnected(weightsOI: weights, bias: bias, inFeatures: inF, outFeatures: outF, precision: .fp32)
        let got = fc(inputs)
        for (v, y) in zip(inputs, got) {
            let want = (0..<outF).map { o in
                Float((0..<inF).reduce(Double(bias[o])) { $0 + Double(weights[o * inF + $1]) * Double(v[$1]) })
            }
            #expect(maxAbsDiff(y, want) < 1e-4)
        }
    }

    @Test func globalAveragePoolMatchesNaive() {
        var rng = TestRandom(seed: 5)
        let x = Tensor(batch: 2, height: 7, width: 5, channels: 37, values: rng.floats(2 * 7 * 5 * 37))
        let got = globalAveragePool(x)
        #expect(got.batch == 2 && got.height == 1 && got.width == 1 && got.channels == 37)
        for b in 0..<2 {
            for c in 0..<37 {
                var s = 0.0
                for p in 0..<35 { s += Double(x.values[(b * 35 + p) * 37 + c]) }
                #expect(abs(got.values[b * 37 + c] - Float(s / 35)) < 1e-6)
            }
        }
    }

    @Test func batchNormFoldingEqualsConvThenBatchNorm() {
        var rng = TestRandom(seed: 11)
        let (ci, co, k) = (3, 8, 3)
        let x = Tensor(batch: 1, height: 6, width: 6, channels: ci, values: rng.floats(36 * ci))
        let weights = rng.floats(co * ci * k * k)
        let bn = BatchNorm(gamma: rng.floats(co), beta: rng.floats(co), mean: rng.floats(co),
                           variance: rng.floats(co).map { abs($0) + 0.1 }, epsilon: 1e-3)
        let folded = bn.fold(weights: weights, outChannels: co)
        let got = Conv2D(weightsOIHW: folded.weights, bias: folded.bias, inChannels: ci, outChannels: co, kernel: k,
                         stride: 2, activation: .none)(x)
        var want = naiveConv(x, weightsOIHW: weights, bias: [Float](repeating: 0, count: co), outChannels: co, kernel: k,
                             stride: 2, relu6: false)
        for i in want.values.indices {
            let c = i % co
            want.values[i] = bn.gamma[c] * (want.values[i] - bn.mean[c]) / (bn.variance[c] + 1e-3).squareRoot() + bn.beta[c]
        }
        #expect(maxAbsDiff(got.values, want.values) < 1e-5)
    }

    @Test func sha256KnownAnswers() {
        #expect(SHA256.hexDigest(of: []) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hexDigest(of: Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(SHA256.hexDigest(of: long) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // Split updates at awkward boundaries give the same digest.
        var rng = TestRandom(seed: 1)
        let bytes = (0..<1000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        var h = SHA256()
        var i = 0
        for step in [1, 63, 64, 65, 7, 300, 500] { h.update(Array(bytes[i..<min(i + step, bytes.count)])); i = min(i + step, bytes.count) }
        #expect(h.finalizeHex() == SHA256.hexDigest(of: bytes))
    }
}
