import Barcodes
import FoodCore
import Foundation

/// Draws barcodes into RGB images the way a camera might see them: scaled, rotated, blurred, noisy.
struct SyntheticBarcode {
    var modules: [Bool]
    /// Pixels per module.
    var moduleWidth: Double = 3
    /// Bar height in modules.
    var heightModules: Double = 40
    var quietModules: Double = 12
    /// Rotation in degrees, clockwise on screen (y down).
    var angle: Double = 0
    var blurSigma: Double = 0
    /// Uniform noise amplitude (± this many grey levels).
    var noise: Double = 0
    var seed: UInt64 = 1
    var dark: UInt8 = 20
    var light: UInt8 = 235
    /// Canvas margin around the rotated symbol, in pixels.
    var margin: Double = 10

    func render() -> RGBImage {
        let symbolW = (Double(modules.count) + 2 * quietModules) * moduleWidth
        let symbolH = heightModules * moduleWidth
        let rad = angle * .pi / 180
        let c = cos(rad), s = sin(rad)
        let bw = abs(symbolW * c) + abs(symbolH * s), bh = abs(symbolW * s) + abs(symbolH * c)
        let width = Int((bw + 2 * margin).rounded(.up)), height = Int((bh + 2 * margin).rounded(.up))
        let cx = Double(width) / 2, cy = Double(height) / 2
        var grey = [Double](repeating: Double(light), count: width * height)
        let ss = 4
        for y in 0..<height {
            for x in 0..<width {
                var acc = 0.0
                for sy in 0..<ss {
                    for sx in 0..<ss {
                        let px = Double(x) + (Double(sx) + 0.5) / Double(ss) - cx
                        let py = Double(y) + (Double(sy) + 0.5) / Double(ss) - cy
                        // Into the symbol frame (inverse rotation).
                        let u = px * c + py * s + symbolW / 2
                        let v = -px * s + py * c + symbolH / 2
                        var value = Double(light)
                        if v >= 0, v < symbolH {
                            let m = Int((u / moduleWidth - quietModules).rounded(.down))
                            if m >= 0, m < modules.count, modules[m] { value = Double(dark) }
                        }
                        acc += value
                    }
                }
                grey[y * width + x] = acc / Double(ss * ss)
            }
        }
        if blurSigma > 0 { grey = Self.gaussianBlur(grey, width: width, height: height, sigma: blurSigma) }
        var rng = SplitMix64(seed: seed)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for i in 0..<(width * height) {
            var v = grey[i]
            if noise > 0 { v += (rng.nextUnit() * 2 - 1) * noise }
            let b = UInt8(min(255, max(0, v.rounded())))
            pixels[3 * i] = b; pixels[3 * i + 1] = b; pixels[3 * i + 2] = b
        }
        return RGBImage(width: width, height: height, pixels: pixels)
    }

    static func gaussianBlur(_ src: [Double], width: Int, height: Int, sigma: Double) -> [Double] {
        let r = max(1, Int((3 * sigma).rounded(.up)))
        var kernel = (-r...r).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let sum = kernel.reduce(0, +)
        kernel = kernel.map { $0 / sum }
        var tmp = src
        for y in 0..<height {
            for x in 0..<width {
                var acc = 0.0
                for k in -r...r { acc += kernel[k + r] * src[y * width + min(width - 1, max(0, x + k))] }
                tmp[y * width + x] = acc
            }
        }
        var out = tmp
        for y in 0..<height {
            for x in 0..<width {
                var acc = 0.0
                for k in -r...r { acc += kernel[k + r] * tmp[min(height - 1, max(0, y + k)) * width + x] }
                out[y * width + x] = acc
            }
        }
        return out
    }
}

/// Test helpers on FoodCore's deterministic generator, so test images are the same on every run.
extension SplitMix64 {
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
    mutating func nextInt(_ upper: Int) -> Int { Int(next() % UInt64(upper)) }
}

/// Random valid codes of a format.
func randomCode(_ format: BarcodeFormat, _ rng: inout SplitMix64) -> GTIN {
    let payloadCount: Int
    switch format {
    case .ean13: payloadCount = 12
    case .upcA: payloadCount = 11
    case .ean8: payloadCount = 7
    case .upcE:
        // Number system 0/1 and six data digits; exactly one check digit fits the expansion.
        let body = "\(rng.nextInt(2))" + (0..<6).map { _ in String(rng.nextInt(10)) }.joined()
        let check = (0..<10).first { (try? GTIN(format: .upcE, digits: body + "\($0)")) != nil }!
        return try! GTIN(format: .upcE, digits: body + "\(check)")
    case .gtin14: payloadCount = 13
    }
    var payload = (0..<payloadCount).map { _ in rng.nextInt(10) }
    if format == .ean13, payload[0] == 0 { payload[0] = 1 + rng.nextInt(9) }  // leading 0 would be UPC-A
    payload.append(GTIN.checkDigit(forPayload: payload))
    return try! GTIN(format: format, digits: payload.map(String.init).joined())
}
