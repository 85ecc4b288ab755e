public import FoodCore

/// Where the network input comes from within a photo.
public enum CropMode: Sendable, Equatable {
    /// The largest centred square, resized to the output size (the classifier's view).
    case center
    /// The whole image scaled to fit inside the output, aspect kept, the rest filled with `fill`.
    case fit(fill: UInt8)
    /// The whole image resized to the output size, aspect not kept.
    case stretch
    /// A normalised region of the image, resized to the output size (multi-crop localisation).
    case region(NormalizedBox)
}

/// Per-channel affine normalisation `x = (v - mean) * scale` applied while writing the tensor.
public struct Normalization: Sendable, Equatable {
    public var mean: Float
    public var scale: Float
    public init(mean: Float, scale: Float) { self.mean = mean; self.scale = scale }
    /// EfficientNet-Lite: `(v - 127) / 128`.
    public static let efficientNetLite = Normalization(mean: 127, scale: 1.0 / 128)
    /// Raw 0…255 values.
    public static let identity = Normalization(mean: 0, scale: 1)
}

/// Separable resampling with precomputed weights: area averaging when shrinking (every source pixel
/// contributes in proportion to its overlap, so nothing aliases), bilinear with half-pixel centres when enlarging.
struct ResampleAxis {
    /// For output index i: contributions `weights[offsets[i]..<offsets[i+1]]` starting at source `starts[i]`.
    var starts: [Int] = []
    var offsets: [Int] = [0]
    var weights: [Float] = []

    /// Maps output positions 0..<outSize onto the source interval [origin, origin + length).
    init(origin: Double, length: Double, sourceSize: Int, outSize: Int) {
        let scale = length / Double(outSize)
        starts.reserveCapacity(outSize)
        for i in 0..<outSize {
            if scale > 1 {
                let lo = origin + Double(i) * scale, hi = lo + scale
                let first = max(0, Int(lo.rounded(.down)))
                let last = min(sourceSize - 1, Int((hi - 1e-9).rounded(.down)))
                starts.append(first)
                var total = 0.0
                var local: [Double] = []
                if last >= first {
                    for s in first...last {
                        let overlap = min(hi, Double(s + 1)) - max(lo, Double(s))
                        local.append(max(0, overlap))
                        total += max(0, overlap)
                    }
                } else {
                    local = [1]; total = 1
                }
                for wgt in local { weights.append(Float(wgt / total)) }
            } else {
                // Sample centres stay inside the crop so a crop never bleeds in pixels from outside it.
                var src = origin + (Double(i) + 0.5) * scale - 0.5
                let lowest = max(0, origin.rounded(.up)), highest = min(Double(sourceSize - 1), (origin + length).rounded(.down) - 1)
                src = min(max(src, lowest), max(lowest, highest))
                let s0 = Int(src.rounded(.down))
                let s1 = min(s0 + 1, sourceSize - 1)
                let f = src - Double(s0)
                starts.append(s0)
                if s1 == s0 { weights.append(1) } else { weights.append(Float(1 - f)); weights.append(Float(f)) }
            }
            offsets.append(weights.count)
        }
    }
}

public enum ImageResampler {
    /// Resamples the pixel rectangle `(x0, y0, w, h)` of `image` to `outWidth × outHeight`, HWC floats 0…255, or
    /// `(v - mean) * scale` of them with `normalization`.
    ///
    /// Output row by output row: the source rows a row reads are filtered horizontally when first needed, into a
    /// ring of as many rows as the widest vertical filter, so the filtered rows stay in cache (a whole filtered image
    /// would be 2 MB for the localisation pass, written and read back), and each output row is normalised while it
    /// is still in L1. Every value gets the same products and sums in the same order as a two-pass resampler.
    static func resampleFloat(_ image: RGBImage, x0: Double, y0: Double, w: Double, h: Double,
                              outWidth: Int, outHeight: Int, normalization: Normalization? = nil) -> [Float] {
        let ax = ResampleAxis(origin: x0, length: w, sourceSize: image.width, outSize: outWidth)
        let ay = ResampleAxis(origin: y0, length: h, sourceSize: image.height, outSize: outHeight)
        let rowLen = outWidth * 3
        var taps = 1
        for j in 0..<outHeight { taps = max(taps, ay.offsets[j + 1] - ay.offsets[j]) }
        var ring = [Float](repeating: 0, count: taps * rowLen)
        var ringRow = [Int](repeating: -1, count: taps)
        var out = [Float](repeating: 0, count: rowLen * outHeight)
        image.pixels.withUnsafeBufferPointer { src in
            ring.withUnsafeMutableBufferPointer { ringBuffer in
                out.withUnsafeMutableBufferPointer { dst in
                    ax.starts.withUnsafeBufferPointer { starts in
                        ax.offsets.withUnsafeBufferPointer { offs in
                            ax.weights.withUnsafeBufferPointer { wts in
                                let tmpBase = ringBuffer.baseAddress!, dstBase = dst.baseAddress!
                                for j in 0..<outHeight {
                                    let d = dstBase + j * rowLen
                                    var r = ay.starts[j]
                                    for k in ay.offsets[j]..<ay.offsets[j + 1] {
                                        let slot = r % taps
                                        let tmp = tmpBase + slot * rowLen
                                        if ringRow[slot] != r {
                                            ringRow[slot] = r
                                            let srow = r * image.width * 3
                                            for i in 0..<outWidth {
                                                var accR: Float = 0, accG: Float = 0, accB: Float = 0
                                                var s = srow + starts[i] * 3
                                                for t in offs[i]..<offs[i + 1] {
                                                    let wt = wts[t]
                                                    accR += wt * Float(src[s]); accG += wt * Float(src[s + 1]); accB += wt * Float(src[s + 2])
                                                    s += 3
                                                }
                                                tmp[i * 3] = accR; tmp[i * 3 + 1] = accG; tmp[i * 3 + 2] = accB
                                            }
                                        }
                                        let wk = ay.weights[k]
                                        for c in 0..<rowLen { d[c] += wk * tmp[c] }
                                        r += 1
                                    }
                                    if let n = normalization {
                                        let mean = n.mean, scale = n.scale
                                        for c in 0..<rowLen { d[c] = (d[c] - mean) * scale }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        return out
    }

    /// The pixel rectangle a crop mode reads, and (for `.fit`) where it lands in the output.
    static func sourceRect(_ image: RGBImage, mode: CropMode) -> (x: Double, y: Double, w: Double, h: Double) {
        let W = Double(image.width), H = Double(image.height)
        switch mode {
        case .center:
            let side = min(W, H)
            return (((W - side) / 2).rounded(.down), ((H - side) / 2).rounded(.down), side, side)
        case .fit, .stretch:
            return (0, 0, W, H)
        case .region(let box):
            let b = box.clipped
            return (b.x * W, b.y * H, max(1, b.w * W), max(1, b.h * H))
        }
    }

    /// A normalised `width × height × 3` tensor (`.stretch` / `.center` / `.region`; `.fit` is square only) — e.g. a
    /// localisation pass that keeps the photo's aspect.
    public static func tensor(from image: RGBImage, mode: CropMode, width: Int, height: Int,
                              normalization: Normalization = .efficientNetLite) -> FloatImage {
        if width == height { return tensor(from: image, mode: mode, size: width, normalization: normalization) }
        precondition(width > 0 && height > 0 && image.width > 0 && image.height > 0, "tensor: empty image or size")
        let r = sourceRect(image, mode: mode == .fit(fill: 0) ? .stretch : mode)
        let values = resampleFloat(image, x0: r.x, y0: r.y, w: r.w, h: r.h, outWidth: width, outHeight: height,
                                   normalization: normalization)
        return FloatImage(width: width, height: height, channels: 3, values: values)
    }

    /// A normalised `size × size × 3` tensor for the CNN from a crop of the image.
    public static func tensor(from image: RGBImage, mode: CropMode, size: Int,
                              normalization: Normalization = .efficientNetLite) -> FloatImage {
        precondition(size > 0 && image.width > 0 && image.height > 0, "tensor: empty image or size")
        guard case .fit(let fill) = mode else {
            let r = sourceRect(image, mode: mode)
            let values = resampleFloat(image, x0: r.x, y0: r.y, w: r.w, h: r.h, outWidth: size, outHeight: size,
                                       normalization: normalization)
            return FloatImage(width: size, height: size, channels: 3, values: values)
        }
        let fitScale = min(Double(size) / Double(image.width), Double(size) / Double(image.height))
        let fw = max(1, Int((Double(image.width) * fitScale).rounded())), fh = max(1, Int((Double(image.height) * fitScale).rounded()))
        let inner = resampleFloat(image, x0: 0, y0: 0, w: Double(image.width), h: Double(image.height), outWidth: fw, outHeight: fh)
        var values = [Float](repeating: Float(fill), count: size * size * 3)
        let ox = (size - fw) / 2, oy = (size - fh) / 2
        for y in 0..<fh {
            for x in 0..<(fw * 3) { values[((oy + y) * size + ox) * 3 + x] = inner[y * fw * 3 + x] }
        }
        let mean = normalization.mean, scale = normalization.scale
        values.withUnsafeMutableBufferPointer { v in
            for i in 0..<v.count { v[i] = (v[i] - mean) * scale }
        }
        return FloatImage(width: size, height: size, channels: 3, values: values)
    }
}

extension RGBImage {
    /// This image resized to `width × height` (area averaging when shrinking).
    public func resized(width: Int, height: Int) -> RGBImage {
        precondition(width > 0 && height > 0, "resized: empty output")
        let f = ImageResampler.resampleFloat(self, x0: 0, y0: 0, w: Double(self.width), h: Double(self.height),
                                             outWidth: width, outHeight: height)
        return RGBImage(width: width, height: height, pixels: f.map { UInt8(min(255, max(0, $0.rounded()))) })
    }

    /// This image scaled so that its longer side is at most `maxSide` (unchanged when already smaller).
    public func downscaled(maxSide: Int) -> RGBImage {
        let longest = max(width, height)
        guard longest > maxSide else { return self }
        let s = Double(maxSide) / Double(longest)
        return resized(width: max(1, Int((Double(width) * s).rounded())), height: max(1, Int((Double(height) * s).rounded())))
    }

    /// The pixel rectangle `x, y, w, h` (clipped to the image).
    public func cropped(x: Int, y: Int, width w: Int, height h: Int) -> RGBImage {
        let x0 = max(0, min(x, width)), y0 = max(0, min(y, height))
        let x1 = max(x0, min(x + w, width)), y1 = max(y0, min(y + h, height))
        let cw = x1 - x0, ch = y1 - y0
        var out = [UInt8](repeating: 0, count: cw * ch * 3)
        for row in 0..<ch {
            let s = ((y0 + row) * width + x0) * 3
            out[(row * cw * 3)..<((row + 1) * cw * 3)] = pixels[s..<(s + cw * 3)]
        }
        return RGBImage(width: cw, height: ch, pixels: out)
    }
}
