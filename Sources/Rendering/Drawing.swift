public import FoodCore

/// Drawing on an `RGBImage`. Every operation clips to the image, so any rectangle (partly or wholly outside,
/// empty, negative) is safe; loops run over the clipped span with unsafe buffers (12 MP photos).
extension RGBImage {
    /// The whole image as a pixel rectangle.
    public var bounds: PixelRect { PixelRect(x: 0, y: 0, width: width, height: height) }

    /// Fills `rect` with `color`; `opacity` 0…1 blends it over what is there.
    public mutating func fill(_ rect: PixelRect, color: RGBColor, opacity: Double = 1) {
        let clip = rect.intersection(bounds)
        let a = alpha255(opacity)
        guard !clip.isEmpty, a > 0 else { return }
        let w = width
        pixels.withUnsafeMutableBufferPointer { px in
            for row in clip.y..<clip.maxY {
                var i = (row * w + clip.x) * 3
                if a == 255 {
                    for _ in 0..<clip.width {
                        px[i] = color.r; px[i + 1] = color.g; px[i + 2] = color.b
                        i += 3
                    }
                } else {
                    for _ in 0..<clip.width {
                        px[i] = blend(px[i], color.r, a); px[i + 1] = blend(px[i + 1], color.g, a)
                        px[i + 2] = blend(px[i + 2], color.b, a)
                        i += 3
                    }
                }
            }
        }
    }

    /// Draws the outline of `rect`, `thickness` pixels wide, inside the rectangle (so the outline's outer edge is
    /// the rectangle's edge). A thickness of half the shorter side or more fills it.
    public mutating func stroke(_ rect: PixelRect, color: RGBColor, thickness: Int, opacity: Double = 1) {
        guard !rect.isEmpty, thickness > 0 else { return }
        let t = min(thickness, (rect.width + 1) / 2, (rect.height + 1) / 2)
        fill(PixelRect(x: rect.x, y: rect.y, width: rect.width, height: t), color: color, opacity: opacity)
        fill(PixelRect(x: rect.x, y: rect.maxY - t, width: rect.width, height: t), color: color, opacity: opacity)
        let inner = rect.height - 2 * t
        guard inner > 0 else { return }
        fill(PixelRect(x: rect.x, y: rect.y + t, width: t, height: inner), color: color, opacity: opacity)
        fill(PixelRect(x: rect.maxX - t, y: rect.y + t, width: t, height: inner), color: color, opacity: opacity)
    }

    /// Fills `rect` with rounded corners of `radius` pixels (antialiased by pixel coverage).
    public mutating func fillRoundedRect(_ rect: PixelRect, radius: Double, color: RGBColor, opacity: Double = 1) {
        let clip = rect.intersection(bounds)
        let a = alpha255(opacity)
        guard !clip.isEmpty, a > 0 else { return }
        let r = max(0, min(radius, Double(min(rect.width, rect.height)) / 2))
        let ri = Int(r.rounded(.up))
        guard ri > 0 else { fill(rect, color: color, opacity: opacity); return }
        let w = width
        // Corner circle centres.
        let left = Double(rect.x) + r, right = Double(rect.maxX) - r
        let top = Double(rect.y) + r, bottom = Double(rect.maxY) - r
        pixels.withUnsafeMutableBufferPointer { px in
            for row in clip.y..<clip.maxY {
                let cy = Double(row) + 0.5
                let inCornerRows = row < rect.y + ri || row >= rect.maxY - ri
                var i = (row * w + clip.x) * 3
                for col in clip.x..<clip.maxX {
                    var pa = a
                    if inCornerRows && (col < rect.x + ri || col >= rect.maxX - ri) {
                        let cx = Double(col) + 0.5
                        let dx = cx < left ? left - cx : (cx > right ? cx - right : 0)
                        let dy = cy < top ? top - cy : (cy > bottom ? cy - bottom : 0)
                        let coverage = min(1, max(0, r + 0.5 - (dx * dx + dy * dy).squareRoot()))
                        pa = UInt32((Double(a) * coverage).rounded())
                    }
                    if pa == 255 {
                        px[i] = color.r; px[i + 1] = color.g; px[i + 2] = color.b
                    } else if pa > 0 {
                        px[i] = blend(px[i], color.r, pa); px[i + 1] = blend(px[i + 1], color.g, pa)
                        px[i + 2] = blend(px[i + 2], color.b, pa)
                    }
                    i += 3
                }
            }
        }
    }

    /// Blends an 8-bit coverage mask (`maskWidth × maskHeight`, row-major) in `color` with its top-left at `x, y`.
    mutating func blendMask(_ mask: UnsafeBufferPointer<UInt8>, maskWidth: Int, maskHeight: Int, x: Int, y: Int,
                            color: RGBColor) {
        let clip = PixelRect(x: x, y: y, width: maskWidth, height: maskHeight).intersection(bounds)
        guard !clip.isEmpty else { return }
        let w = width
        pixels.withUnsafeMutableBufferPointer { px in
            for row in clip.y..<clip.maxY {
                var m = (row - y) * maskWidth + (clip.x - x)
                var i = (row * w + clip.x) * 3
                for _ in 0..<clip.width {
                    let a = UInt32(mask[m])
                    if a == 255 {
                        px[i] = color.r; px[i + 1] = color.g; px[i + 2] = color.b
                    } else if a > 0 {
                        px[i] = blend(px[i], color.r, a); px[i + 1] = blend(px[i + 1], color.g, a)
                        px[i + 2] = blend(px[i + 2], color.b, a)
                    }
                    m += 1; i += 3
                }
            }
        }
    }

    /// Composites premultiplied RGBA (`src + dst · (1 − α)`) with its top-left at `x, y`.
    mutating func blendPremultiplied(_ rgba: UnsafeBufferPointer<UInt8>, sourceWidth: Int, sourceHeight: Int,
                                     x: Int, y: Int) {
        let clip = PixelRect(x: x, y: y, width: sourceWidth, height: sourceHeight).intersection(bounds)
        guard !clip.isEmpty else { return }
        let w = width
        pixels.withUnsafeMutableBufferPointer { px in
            for row in clip.y..<clip.maxY {
                var s = ((row - y) * sourceWidth + (clip.x - x)) * 4
                var i = (row * w + clip.x) * 3
                for _ in 0..<clip.width {
                    let a = UInt32(rgba[s + 3])
                    if a > 0 {
                        let keep = 255 - a
                        for c in 0..<3 {
                            let v = UInt32(rgba[s + c]) + (UInt32(px[i + c]) * keep + 127) / 255
                            px[i + c] = UInt8(min(255, v))
                        }
                    }
                    s += 4; i += 3
                }
            }
        }
    }
}

@inline(__always)
func alpha255(_ opacity: Double) -> UInt32 {
    guard opacity.isFinite else { return 0 }
    return UInt32((min(1, max(0, opacity)) * 255).rounded())
}

/// `dst · (1 − a) + src · a` for `a` in 0…255, rounded.
@inline(__always)
func blend(_ dst: UInt8, _ src: UInt8, _ a: UInt32) -> UInt8 {
    UInt8((UInt32(dst) * (255 - a) + UInt32(src) * a + 127) / 255)
}
