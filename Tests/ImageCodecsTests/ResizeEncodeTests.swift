import FoodCore
import FoodMomentTestSupport
import FoodVision
import ImageCodecs
import Testing

@Suite("Resize, crops, tensors and encoding")
struct ResizeEncodeTests {
    @Test func areaAveragingDoesNotAlias() {
        // One-pixel black/white stripes shrunk 10x must become flat grey, not stripes or a solid colour.
        var img = RGBImage(width: 100, height: 100)
        for y in 0..<100 { for x in 0..<100 where x % 2 == 0 { img[x, y] = (255, 255, 255) } }
        let small = img.resized(width: 10, height: 10)
        for v in small.pixels { #expect(abs(Int(v) - 128) <= 1) }
    }

    @Test func fractionalAreaWeights() {
        // 3 -> 2 pixels: each output covers 1.5 source pixels.
        let img = RGBImage(width: 3, height: 1, pixels: [0, 0, 0, 90, 90, 90, 180, 180, 180])
        let out = img.resized(width: 2, height: 1)
        #expect(out.pixels == [30, 30, 30, 150, 150, 150]) // (0 + 0.5*90)/1.5, (0.5*90 + 180)/1.5
    }

    @Test func enlargingIsBilinear() {
        let img = RGBImage(width: 2, height: 1, pixels: [0, 0, 0, 200, 200, 200])
        let out = img.resized(width: 4, height: 1)
        #expect(out.pixels.enumerated().filter { $0.offset % 3 == 0 }.map(\.element) == [0, 50, 150, 200])
    }

    @Test func centreCropTensorIsNormalised() {
        var img = RGBImage(width: 300, height: 200, fill: (127, 127, 127))
        for y in 0..<200 { for x in 0..<50 { img[x, y] = (255, 0, 0) } } // left strip is cropped away
        let t = ImageResampler.tensor(from: img, mode: .center, size: 224)
        #expect(t.width == 224 && t.height == 224 && t.channels == 3)
        #expect(t.values.allSatisfy { abs($0) < 1e-6 })
        let fit = ImageResampler.tensor(from: img, mode: .fit(fill: 127), size: 224)
        #expect(fit.values[0] == 0) // padding row
    }

    /// The resampler filters source rows into a small ring as output rows need them and normalises each row as it
    /// goes: against a plain separable resampler written here (area averaging when shrinking, bilinear with half-pixel
    /// centres when enlarging, in Double), on shapes where the ring wraps, one filter spans many rows, or none.
    @Test func resamplingMatchesAPlainSeparableFilter() {
        var rng = SplitMix64(seed: 7)
        var img = RGBImage(width: 97, height: 61)
        for i in img.pixels.indices { img.pixels[i] = UInt8(truncatingIfNeeded: rng.next()) }
        /// Weights of one output index over source indices, for an axis mapping [0, n) onto `out` outputs.
        func axis(_ n: Int, _ out: Int) -> [[(Int, Double)]] {
            let scale = Double(n) / Double(out)
            return (0..<out).map { i in
                if scale > 1 {
                    let lo = Double(i) * scale, hi = lo + scale
                    let taps = (Int(lo)..<min(n, Int(hi.rounded(.up)))).map { s in (s, max(0, min(hi, Double(s + 1)) - max(lo, Double(s)))) }
                    let total = taps.reduce(0) { $0 + $1.1 }
                    return taps.filter { $0.1 > 0 }.map { ($0.0, $0.1 / total) }
                }
                let src = min(max((Double(i) + 0.5) * scale - 0.5, 0), Double(n - 1))
                let s0 = Int(src), s1 = min(s0 + 1, n - 1), f = src - Double(s0)
                return s1 == s0 ? [(s0, 1)] : [(s0, 1 - f), (s1, f)]
            }
        }
        for (w, h) in [(224, 224), (13, 7), (40, 61), (97, 200), (30, 45)] {
            let t = ImageResampler.tensor(from: img, mode: .stretch, width: w, height: h, normalization: .identity)
            let lite = ImageResampler.tensor(from: img, mode: .stretch, width: w, height: h)
            let ax = axis(97, w), ay = axis(61, h)
            var worst = 0.0
            for y in 0..<h {
                for x in 0..<w {
                    for c in 0..<3 {
                        var v = 0.0
                        for (sy, wy) in ay[y] { for (sx, wx) in ax[x] { v += wy * wx * Double(img.pixels[(sy * 97 + sx) * 3 + c]) } }
                        let got = t.values[(y * w + x) * 3 + c]
                        worst = max(worst, abs(Double(got) - v))
                        // Normalising while resampling is the same arithmetic as normalising afterwards.
                        #expect(lite.values[(y * w + x) * 3 + c] == (got - 127) * (1.0 / 128))
                    }
                }
            }
            #expect(worst < 2e-3, "\(w)x\(h): largest difference \(worst)")
        }
    }

    @Test func regionCrop() {
        var img = RGBImage(width: 100, height: 100)
        for y in 50..<100 { for x in 50..<100 { img[x, y] = (255, 255, 255) } }
        let t = ImageResampler.tensor(from: img, mode: .region(NormalizedBox(x: 0.5, y: 0.5, w: 0.5, h: 0.5)), size: 16,
                                      normalization: .identity)
        #expect(t.values.allSatisfy { abs($0 - 255) < 1e-3 })
    }

    @Test func pngRoundTripIsExact() throws {
        let img = BadInputs.syntheticPhoto(width: 33, height: 17)
        let back = try ImageDecoder.decode(try ImageEncoder.png(img))
        #expect(back.image == img)
    }

    @Test func jpegRoundTripIsClose() throws {
        let img = BadInputs.syntheticPhoto(width: 64, height: 48)
        let back = try ImageDecoder.decode(try ImageEncoder.jpeg(img, quality: 95)).image
        let meanError = zip(img.pixels, back.pixels).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) } / img.pixels.count
        #expect(meanError <= 6)
    }

    @Test func cropClipsToTheImage() {
        let img = BadInputs.syntheticPhoto(width: 20, height: 10)
        let c = img.cropped(x: 15, y: 5, width: 10, height: 10)
        #expect(c.width == 5 && c.height == 5)
        #expect(c[0, 0] == img[15, 5])
    }
}
