/// A stride-1 MBConv block of the backbone as plain parameters (BatchNorm folded), so it can be fine-tuned and
/// run outside the network: 1×1 expand + ReLU6, k×k depthwise (SAME) + ReLU6, 1×1 project, + the input when
/// `shape.residual`. `FoodTop` runs a few of these (the backbone's last blocks, fine-tuned on food) before its head
/// conv.
package struct TailBlock: Sendable, Equatable {
    package let shape: EfficientNetLite0.BlockShape
    /// `[mid][in]`, `[mid]`, `[k*k][mid]` (tap-major: the runtime's depthwise layout), `[mid]`, `[out][mid]`, `[out]`.
    package var arrays: [[Float]]

    package var expandW: [Float] { arrays[0] }
    package var expandB: [Float] { arrays[1] }
    package var depthW: [Float] { arrays[2] }
    package var depthB: [Float] { arrays[3] }
    package var projectW: [Float] { arrays[4] }
    package var projectB: [Float] { arrays[5] }

    /// Element counts of the six arrays for `shape`.
    package static func arrayCounts(_ s: EfficientNetLite0.BlockShape) -> [Int] {
        [s.midChannels * s.inChannels, s.midChannels, s.kernel * s.kernel * s.midChannels, s.midChannels,
         s.outChannels * s.midChannels, s.outChannels]
    }

    package init(shape: EfficientNetLite0.BlockShape, arrays: [[Float]]) throws(FoodVisionError) {
        guard shape.stride == 1, shape.kernel % 2 == 1, shape.kernel >= 1, shape.inChannels > 0, shape.midChannels > 0,
              shape.outChannels > 0, !shape.residual || shape.inChannels == shape.outChannels else {
            throw .invalidInput(reason: "a tail block must be stride 1 with an odd kernel (and in == out for a residual): \(shape)")
        }
        guard arrays.map(\.count) == Self.arrayCounts(shape) else {
            throw .invalidInput(reason: "tail block \(shape) needs arrays of \(Self.arrayCounts(shape)) values, got \(arrays.map(\.count))")
        }
        self.shape = shape
        self.arrays = arrays
    }

    /// The runtime layers of this block (built once per `FoodTop`).
    struct Layers: Sendable {
        let expand: PointwiseConv2D, depthwise: DepthwiseConv2D, project: PointwiseConv2D, residual: Bool

        func callAsFunction(_ x: Tensor) -> Tensor {
            let e = expand(x)
            let d = depthwise(e)
            return project(d, residual: residual ? x : nil)
        }
    }

    func layers(precision: InferencePrecision) -> Layers {
        let s = shape, kk = s.kernel * s.kernel
        var ckk = [Float](repeating: 0, count: depthW.count)
        for t in 0..<kk { for c in 0..<s.midChannels { ckk[c * kk + t] = depthW[t * s.midChannels + c] } }
        return Layers(
            expand: PointwiseConv2D(weightsOI: expandW, bias: expandB, inChannels: s.inChannels, outChannels: s.midChannels,
                                    activation: .relu6, precision: precision),
            depthwise: DepthwiseConv2D(weightsCKK: ckk, bias: depthB, channels: s.midChannels, kernel: s.kernel, stride: 1,
                                       activation: .relu6),
            project: PointwiseConv2D(weightsOI: projectW, bias: projectB, inChannels: s.midChannels, outChannels: s.outChannels,
                                     activation: .none, precision: precision),
            residual: s.residual)
    }

    /// Block `index` of a converted EfficientNet-Lite0 (`_blocks.<index>.*`, its three BatchNorms folded).
    static func imageNet(index: Int, tensors t: WeightTable, epsilon: Float) throws(FoodVisionError) -> TailBlock {
        guard EfficientNetLite0.blockShapes.indices.contains(index) else { throw .invalidInput(reason: "no block \(index)") }
        let s = EfficientNetLite0.blockShapes[index]
        let p = "_blocks.\(index)."
        func bn(_ name: String) throws(FoodVisionError) -> BatchNorm {
            guard let g = t[p + name + ".weight"], let b = t[p + name + ".bias"], let m = t[p + name + ".running_mean"],
                  let v = t[p + name + ".running_var"] else { throw .invalidInput(reason: "block \(index) has no \(name)") }
            return BatchNorm(gamma: g, beta: b, mean: m, variance: v, epsilon: epsilon)
        }
        guard let ew = t[p + "_expand_conv.weight"], let dw = t[p + "_depthwise_conv.weight"],
              let pw = t[p + "_project_conv.weight"] else { throw .invalidInput(reason: "block \(index) has no expand conv") }
        let e = try bn("_bn0").fold(weights: ew, outChannels: s.midChannels)
        let d = try bn("_bn1").fold(weights: dw, outChannels: s.midChannels)
        let pr = try bn("_bn2").fold(weights: pw, outChannels: s.outChannels)
        let kk = s.kernel * s.kernel
        var tapMajor = [Float](repeating: 0, count: d.weights.count)
        for c in 0..<s.midChannels { for k in 0..<kk { tapMajor[k * s.midChannels + c] = d.weights[c * kk + k] } }
        return try TailBlock(shape: s, arrays: [e.weights, e.bias, tapMajor, d.bias, pr.weights, pr.bias])
    }
}
