import FoodCore
import Foundation
@testable import FoodVision

/// Paths relative to this file: the repository root and the shared data folder beside it.
enum TestPaths {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let sharedData = repoRoot.deletingLastPathComponent().appendingPathComponent("shared/data")
    static let weights = sharedData.appendingPathComponent("weights")
    static let reference = weights.appendingPathComponent("reference")
    static let model = repoRoot.appendingPathComponent("models/efficientnet-lite0")

    static var hasReference: Bool {
        FileManager.default.fileExists(atPath: reference.appendingPathComponent("logits.f32").path)
    }
    static var hasSafetensors: Bool {
        FileManager.default.fileExists(atPath: weights.appendingPathComponent("efficientnet_lite0.safetensors").path)
    }
}

func readFloats(_ url: URL) throws -> [Float] {
    let data = try Data(contentsOf: url)
    return littleEndianFloats(data, from: data.startIndex, count: data.count / 4)
}

// Naive reference layers written plainly (Double accumulation, PyTorch weight layouts, NHWC tensors).

func samePad(_ n: Int, _ k: Int, _ s: Int) -> (out: Int, before: Int) {
    let out = (n + s - 1) / s
    let total = max((out - 1) * s + k - n, 0)
    return (out, total / 2)
}

func naiveConv(_ x: Tensor, weightsOIHW w: [Float], bias: [Float], outChannels co: Int, kernel k: Int, stride s: Int,
               relu6: Bool) -> Tensor {
    let (oh, pt) = samePad(x.height, k, s), (ow, pl) = samePad(x.width, k, s)
    let ci = x.channels
    var out = Tensor(zerosBatch: x.batch, height: oh, width: ow, channels: co)
    for b in 0..<x.batch { for oy in 0..<oh { for ox in 0..<ow { for o in 0..<co {
        var acc = Double(bias[o])
        for ky in 0..<k { for kx in 0..<k {
            let iy = oy * s - pt + ky, ix = ox * s - pl + kx
            if iy < 0 || iy >= x.height || ix < 0 || ix >= x.width { continue }
            for i in 0..<ci {
                acc += Double(x.values[((b * x.height + iy) * x.width + ix) * ci + i]) * Double(w[((o * ci + i) * k + ky) * k + kx])
            }
        } }
        if relu6 { acc = min(max(acc, 0), 6) }
        out.values[((b * oh + oy) * ow + ox) * co + o] = Float(acc)
    } } } }
    return out
}

func naiveDepthwise(_ x: Tensor, weightsCKK w: [Float], bias: [Float], kernel k: Int, stride s: Int, relu6: Bool) -> Tensor {
    let (oh, pt) = samePad(x.height, k, s), (ow, pl) = samePad(x.width, k, s)
    let c = x.channels
    var out = Tensor(zerosBatch: x.batch, height: oh, width: ow, channels: c)
    for b in 0..<x.batch { for oy in 0..<oh { for ox in 0..<ow { for ch in 0..<c {
        var acc = Double(bias[ch])
        for ky in 0..<k { for kx in 0..<k {
            let iy = oy * s - pt + ky, ix = ox * s - pl + kx
            if iy < 0 || iy >= x.height || ix < 0 || ix >= x.width { continue }
            acc += Double(x.values[((b * x.height + iy) * x.width + ix) * c + ch]) * Double(w[(ch * k + ky) * k + kx])
        } }
        if relu6 { acc = min(max(acc, 0), 6) }
        out.values[((b * oh + oy) * ow + ox) * c + ch] = Float(acc)
    } } } }
    return out
}

func naivePointwise(_ x: Tensor, weightsOI w: [Float], bias: [Float], outChannels co: Int, residual: Tensor?, relu6: Bool) -> Tensor {
    let ci = x.channels
    let m = x.batch * x.height * x.width
    var out = Tensor(zerosBatch: x.batch, height: x.height, width: x.width, channels: co)
    for p in 0..<m { for o in 0..<co {
        var acc = Double(bias[o])
        for i in 0..<ci { acc += Double(x.values[p * ci + i]) * Double(w[o * ci + i]) }
        if let residual { acc += Double(residual.values[p * co + o]) }
        if relu6 { acc = min(max(acc, 0), 6) }
        out.values[p * co + o] = Float(acc)
    } }
    return out
}
