/// The activation that follows a convolution.
package enum Activation: String, Sendable, Codable {
    case none
    case relu6
}

/// Inference batch normalisation `y = gamma * (x - mean) / sqrt(variance + epsilon) + beta`, kept only long
/// enough to be folded into the preceding bias-free convolution.
package struct BatchNorm: Sendable {
    package var gamma: [Float]
    package var beta: [Float]
    package var mean: [Float]
    package var variance: [Float]
    package var epsilon: Float

    package init(gamma: [Float], beta: [Float], mean: [Float], variance: [Float], epsilon: Float) {
        precondition(gamma.count == beta.count && beta.count == mean.count && mean.count == variance.count,
                     "BatchNorm: parameter counts differ")
        self.gamma = gamma; self.beta = beta; self.mean = mean; self.variance = variance; self.epsilon = epsilon
    }

    /// Folds into weights laid out with the output channel first (`[out][…]`, PyTorch's layout):
    /// `w' = w * s`, `b' = beta - mean * s` with `s = gamma / sqrt(var + eps)`, computed in Double.
    package func fold(weights: [Float], outChannels: Int) -> (weights: [Float], bias: [Float]) {
        precondition(gamma.count == outChannels && weights.count % outChannels == 0, "BatchNorm.fold: shape mismatch")
        let per = weights.count / outChannels
        var w = weights
        var bias = [Float](repeating: 0, count: outChannels)
        for o in 0..<outChannels {
            let s = Double(gamma[o]) / (Double(variance[o]) + Double(epsilon)).squareRoot()
            for i in 0..<per { w[o * per + i] = Float(Double(weights[o * per + i]) * s) }
            bias[o] = Float(Double(beta[o]) - Double(mean[o]) * s)
        }
        return (w, bias)
    }
}

/// A dense k x k convolution with TF "SAME" padding (the network's stem).
package struct Conv2D: Sendable {
    package let inChannels: Int
    package let outChannels: Int
    package let kernel: Int
    package let stride: Int
    package let activation: Activation
    let weights: FloatBuffer  // [k][k][in][out]
    let bias: FloatBuffer

    /// `weightsOIHW` in PyTorch layout `[out][in][k][k]`; `bias` nil means zero.
    package init(weightsOIHW: [Float], bias: [Float]?, inChannels: Int, outChannels: Int, kernel: Int, stride: Int,
                activation: Activation) {
        precondition(weightsOIHW.count == outChannels * inChannels * kernel * kernel, "Conv2D: weight count")
        self.inChannels = inChannels; self.outChannels = outChannels; self.kernel = kernel; self.stride = stride
        self.activation = activation
        var packed = [Float](repeating: 0, count: weightsOIHW.count)
        for o in 0..<outChannels {
            for i in 0..<inChannels {
                for ky in 0..<kernel {
                    for kx in 0..<kernel {
                        packed[((ky * kernel + kx) * inChannels + i) * outChannels + o] =
                            weightsOIHW[((o * inChannels + i) * kernel + ky) * kernel + kx]
                    }
                }
            }
        }
        weights = FloatBuffer(packed)
        self.bias = FloatBuffer(bias ?? [Float](repeating: 0, count: outChannels))
    }

    package func outputSize(height: Int, width: Int) -> (height: Int, width: Int) {
        (samePadding(inputSize: height, kernel: kernel, stride: stride).output,
         samePadding(inputSize: width, kernel: kernel, stride: stride).output)
    }

    /// `rows`: only these output rows (of each image), written one after another from `output`.
    func run(input: UnsafePointer<Float>, batch: Int, height: Int, width: Int, output: UnsafeMutablePointer<Float>,
             rows: Range<Int>? = nil) {
        denseConv(input: input, batch: batch, height: height, width: width, inChannels: inChannels,
                  weights: weights.pointer, bias: bias.pointer, outChannels: outChannels, kernel: kernel,
                  stride: stride, relu6: activation == .relu6, output: output, rows: rows)
    }

    package func callAsFunction(_ x: Tensor) -> Tensor {
        precondition(x.channels == inChannels, "Conv2D: input has \(x.channels) channels, expected \(inChannels)")
        let (oh, ow) = outputSize(height: x.height, width: x.width)
        var out = Tensor(zerosBatch: x.batch, height: oh, width: ow, channels: outChannels)
        x.values.withUnsafeBufferPointer { i in
            out.values.withUnsafeMutableBufferPointer { o in
                run(input: i.baseAddress!, batch: x.batch, height: x.height, width: x.width, output: o.baseAddress!)
            }
        }
        return out
    }
}

/// A depthwise k x k convolution (one filter per channel) with TF "SAME" padding.
package struct DepthwiseConv2D: Sendable {
    package let channels: Int
    package let kernel: Int
    package let stride: Int
    package let activation: Activation
    let weights: FloatBuffer  // [k][k][C]
    let bias: FloatBuffer

    /// `weightsCKK` in PyTorch layout `[C][1][k][k]`.
    package init(weightsCKK: [Float], bias: [Float]?, channels: Int, kernel: Int, stride: Int, activation: Activation) {
        precondition(weightsCKK.count == channels * kernel * kernel, "DepthwiseConv2D: weight count")
        self.channels = channels; self.kernel = kernel; self.stride = stride; self.activation = activation
        var packed = [Float](repeating: 0, count: weightsCKK.count)
        for c in 0..<channels {
            for t in 0..<(kernel * kernel) { packed[t * channels + c] = weightsCKK[c * kernel * kernel + t] }
        }
        weights = FloatBuffer(packed)
        self.bias = FloatBuffer(bias ?? [Float](repeating: 0, count: channels))
    }

    package func outputSize(height: Int, width: Int) -> (height: Int, width: Int) {
        (samePadding(inputSize: height, kernel: kernel, stride: stride).output,
         samePadding(inputSize: width, kernel: kernel, stride: stride).output)
    }

    /// Maps up to this many rows go through the zero-padded copy (most of their outputs touch a border).
    static let paddedCopyMaxHeight = 28

    func usesPaddedCopy(height: Int) -> Bool { height <= Self.paddedCopyMaxHeight }

    func paddedScratchCount(height: Int, width: Int) -> Int {
        usesPaddedCopy(height: height)
            ? depthwisePaddedCount(height: height, width: width, channels: channels, kernel: kernel, stride: stride) : 0
    }

    /// `scratch` must hold `paddedScratchCount(height:width:)` floats when that is not zero.
    func run(input: UnsafePointer<Float>, batch: Int, height: Int, width: Int, output: UnsafeMutablePointer<Float>,
             scratch: UnsafeMutablePointer<Float>?) {
        depthwiseConv(input: input, batch: batch, height: height, width: width, channels: channels,
                      weights: weights.pointer, bias: bias.pointer, kernel: kernel, stride: stride,
                      relu6: activation == .relu6, output: output,
                      paddedScratch: usesPaddedCopy(height: height) ? scratch : nil)
    }

    /// Output rows `oy0..<oy1` of one image from a band of its input: `band` holds input rows
    /// `firstRow..<firstRow + bandRows` (all of them the window of those outputs needs); the rows are written
    /// from `output` on. Lets the network run a block band by band instead of materialising each tensor whole.
    func runBand(band: UnsafePointer<Float>, bandRows: Int, firstRow: Int, height h: Int, width w: Int,
                 outputRows oy0: Int, _ oy1: Int, output: UnsafeMutablePointer<Float>) {
        let (_, padTop, _) = samePadding(inputSize: h, kernel: kernel, stride: stride)
        let (ow, padLeft, _) = samePadding(inputSize: w, kernel: kernel, stride: stride)
        depthwiseDispatch(input: band, batch: 1, height: bandRows, width: w, channels: channels, weights: weights.pointer,
                          bias: bias.pointer, kernel: kernel, stride: stride, padTop: padTop + firstRow - oy0 * stride,
                          padLeft: padLeft, outHeight: oy1 - oy0, outWidth: ow, relu6: activation == .relu6,
                          output: output)
    }

    /// Input rows `first..<end` that output rows `oy0..<oy1` read (clipped to the image).
    func inputRows(outputRows oy0: Int, _ oy1: Int, height h: Int) -> (first: Int, end: Int) {
        let padTop = samePadding(inputSize: h, kernel: kernel, stride: stride).before
        return (max(0, oy0 * stride - padTop), min(h, (oy1 - 1) * stride - padTop + kernel))
    }

    /// The layer on a tensor; `paddedCopy` forces the zero-padded path on (true), off (false) or leaves
    /// the size-based choice (nil).
    package func callAsFunction(_ x: Tensor, paddedCopy: Bool? = nil) -> Tensor {
        precondition(x.channels == channels, "DepthwiseConv2D: input has \(x.channels) channels, expected \(channels)")
        let (oh, ow) = outputSize(height: x.height, width: x.width)
        var out = Tensor(zerosBatch: x.batch, height: oh, width: ow, channels: channels)
        let padded = paddedCopy ?? usesPaddedCopy(height: x.height)
        let scratch = FloatBuffer(count: depthwisePaddedCount(height: x.height, width: x.width, channels: channels,
                                                              kernel: kernel, stride: stride))
        x.values.withUnsafeBufferPointer { i in
            out.values.withUnsafeMutableBufferPointer { o in
                depthwiseConv(input: i.baseAddress!, batch: x.batch, height: x.height, width: x.width, channels: channels,
                              weights: weights.pointer, bias: bias.pointer, kernel: kernel, stride: stride,
                              relu6: activation == .relu6, output: o.baseAddress!, paddedScratch: padded ? scratch.pointer : nil)
            }
        }
        return out
    }
}

/// A 1x1 convolution as a blocked SIMD GEMM over all pixels of the batch, with an optional fused
/// residual add (before the activation).
package struct PointwiseConv2D: Sendable {
    package let inChannels: Int
    package let outChannels: Int
    package let activation: Activation
    let packed: PackedGemmWeights

    /// `weightsOI` in PyTorch layout `[out][in]` (a `[out][in][1][1]` conv weight is the same bytes); `kernel` nil =
    /// `GemmKernel.fastest`, measured only if the layer runs in FP32.
    package init(weightsOI: [Float], bias: [Float]?, inChannels: Int, outChannels: Int, activation: Activation,
                kernel: GemmKernel? = nil, precision: InferencePrecision = .preferred) {
        self.inChannels = inChannels; self.outChannels = outChannels; self.activation = activation
        packed = PackedGemmWeights(weightsOI: weightsOI, bias: bias, inChannels: inChannels, outChannels: outChannels,
                                   kernel: kernel, precision: precision)
    }

    package var gemmKernel: GemmKernel { packed.kernel }
    package var precision: InferencePrecision { packed.precision }

    func run(input: UnsafePointer<Float>, pixels: Int, residual: UnsafePointer<Float>?, output: UnsafeMutablePointer<Float>) {
        gemm(m: pixels, a: input, lda: inChannels, weights: packed, c: output, ldc: outChannels,
             relu6: activation == .relu6, residual: residual, ldr: outChannels)
    }

    package func callAsFunction(_ x: Tensor, residual: Tensor? = nil) -> Tensor {
        precondition(x.channels == inChannels, "PointwiseConv2D: input has \(x.channels) channels, expected \(inChannels)")
        if let residual {
            precondition(residual.count == x.batch * x.height * x.width * outChannels, "PointwiseConv2D: residual shape")
        }
        var out = Tensor(zerosBatch: x.batch, height: x.height, width: x.width, channels: outChannels)
        let pixels = x.batch * x.height * x.width
        x.values.withUnsafeBufferPointer { i in
            out.values.withUnsafeMutableBufferPointer { o in
                if let residual {
                    residual.values.withUnsafeBufferPointer { r in
                        run(input: i.baseAddress!, pixels: pixels, residual: r.baseAddress!, output: o.baseAddress!)
                    }
                } else {
                    run(input: i.baseAddress!, pixels: pixels, residual: nil, output: o.baseAddress!)
                }
            }
        }
        return out
    }
}

/// A fully connected layer `y = W x + b` (W row-major `[out][in]`), run as a GEMM over the batch.
package struct FullyConnected: Sendable {
    let gemmLayer: PointwiseConv2D
    package var inFeatures: Int { gemmLayer.inChannels }
    package var outFeatures: Int { gemmLayer.outChannels }

    package init(weightsOI: [Float], bias: [Float]?, inFeatures: Int, outFeatures: Int, kernel: GemmKernel? = nil,
                precision: InferencePrecision = .preferred) {
        gemmLayer = PointwiseConv2D(weightsOI: weightsOI, bias: bias, inChannels: inFeatures, outChannels: outFeatures,
                                    activation: .none, kernel: kernel, precision: precision)
    }

    func run(input: UnsafePointer<Float>, batch: Int, output: UnsafeMutablePointer<Float>) {
        gemmLayer.run(input: input, pixels: batch, residual: nil, output: output)
    }

    /// One output vector per input vector.
    package func callAsFunction(_ inputs: [[Float]]) -> [[Float]] {
        let flat = inputs.flatMap { v -> [Float] in
            precondition(v.count == inFeatures, "FullyConnected: input has \(v.count) features, expected \(inFeatures)")
            return v
        }
        let out = gemmLayer(Tensor(batch: inputs.count, height: 1, width: 1, channels: inFeatures, values: flat))
        return (0..<inputs.count).map { Array(out.values[($0 * outFeatures)..<(($0 + 1) * outFeatures)]) }
    }
}

/// Global average pooling: N x H x W x C -> N x 1 x 1 x C.
package func globalAveragePool(_ x: Tensor) -> Tensor {
    var out = Tensor(zerosBatch: x.batch, height: 1, width: 1, channels: x.channels)
    x.values.withUnsafeBufferPointer { i in
        out.values.withUnsafeMutableBufferPointer { o in
            globalAveragePool(input: i.baseAddress!, batch: x.batch, pixels: x.height * x.width, channels: x.channels,
                              output: o.baseAddress!)
        }
    }
    return out
}
