public import FoodCore

/// The pixels a line of text occupies relative to its pen origin (x = 0 at the start, y = 0 on the baseline):
/// the union of the line box (advance × ascent…descent) and every glyph's ink.
public struct TextExtent: Sendable, Hashable {
    public var minX: Int
    public var maxX: Int
    public var minY: Int
    public var maxY: Int
    /// The summed advances, for placing what follows.
    public var advance: Double

    public var width: Int { maxX - minX }
    public var height: Int { maxY - minY }

    /// This extent placed with its pen origin at `x`, baseline at `baseline`.
    public func rect(x: Int, baseline: Int) -> PixelRect {
        PixelRect(x: x + minX, y: baseline + minY, width: width, height: height)
    }
}

/// Measures and draws single lines of text from a `GlyphAtlas` at any pixel size: glyphs are resampled from the
/// master size (area averaging when smaller, bilinear when larger) and alpha-blended by coverage.
public struct TextRenderer: Sendable {
    public let atlas: GlyphAtlas

    public init(atlas: GlyphAtlas = .embedded) {
        self.atlas = atlas
    }

    /// Where `text` at `size` (em, in pixels) would draw.
    public func measure(_ text: String, size: Double) -> TextExtent {
        let s = scale(size)
        var extent = TextExtent(minX: 0, maxX: 0, minY: -Int((Double(atlas.ascent) * s).rounded(.up)),
                                maxY: Int((Double(atlas.descent) * s).rounded(.up)), advance: 0)
        var pen = 0.0
        for character in text {
            let g = atlas.glyph(character)
            let origin = Int(pen.rounded())
            let r = Self.placement(g, scale: s)
            if r.width > 0 && r.height > 0 {
                extent.minX = min(extent.minX, origin + r.x); extent.maxX = max(extent.maxX, origin + r.maxX)
                extent.minY = min(extent.minY, r.y); extent.maxY = max(extent.maxY, r.maxY)
            }
            pen += g.advance * s
        }
        extent.advance = pen
        extent.maxX = max(extent.maxX, Int(pen.rounded(.up)))
        return extent
    }

    /// Draws `text` with its pen origin at `x` and its baseline at `baseline`; emoji keep their own colours.
    /// Returns where it drew (the same rectangle `measure(…).rect(x:baseline:)` gives).
    @discardableResult
    public func draw(_ text: String, into image: inout RGBImage, x: Int, baseline: Int, size: Double,
                     color: RGBColor) -> PixelRect {
        var cache = ScaledGlyphCache()
        return draw(text, into: &image, x: x, baseline: baseline, size: size, color: color, cache: &cache)
    }

    func draw(_ text: String, into image: inout RGBImage, x: Int, baseline: Int, size: Double, color: RGBColor,
              cache: inout ScaledGlyphCache) -> PixelRect {
        let s = scale(size)
        var pen = 0.0
        for character in text {
            let g = atlas.glyph(character)
            let origin = x + Int(pen.rounded())
            let scaled = cache.scaled(character, g, scale: s)
            if !scaled.rect.isEmpty {
                let dx = origin + scaled.rect.x, dy = baseline + scaled.rect.y
                scaled.pixels.withUnsafeBufferPointer { px in
                    if g.isColor {
                        image.blendPremultiplied(px, sourceWidth: scaled.rect.width, sourceHeight: scaled.rect.height,
                                                 x: dx, y: dy)
                    } else {
                        image.blendMask(px, maskWidth: scaled.rect.width, maskHeight: scaled.rect.height, x: dx, y: dy,
                                        color: color)
                    }
                }
            }
            pen += g.advance * s
        }
        return measure(text, size: size).rect(x: x, baseline: baseline)
    }

    /// Line height (ascent + descent) at `size`, in pixels.
    public func lineHeight(size: Double) -> Int {
        let s = scale(size)
        return Int((Double(atlas.ascent) * s).rounded(.up)) + Int((Double(atlas.descent) * s).rounded(.up))
    }

    func scale(_ size: Double) -> Double {
        guard size.isFinite, size > 0 else { return 0 }
        return min(size, 4096) / Double(atlas.emSize)
    }

    /// The destination pixels of a glyph scaled by `s`, relative to the pen origin and baseline.
    static func placement(_ g: GlyphAtlas.Glyph, scale s: Double) -> PixelRect {
        guard g.width > 0, g.height > 0, s > 0 else { return PixelRect(x: 0, y: 0, width: 0, height: 0) }
        let x0 = Int((Double(g.left) * s).rounded(.down)), x1 = Int((Double(g.left + g.width) * s).rounded(.up))
        let y0 = Int((Double(g.top) * s).rounded(.down)), y1 = Int((Double(g.top + g.height) * s).rounded(.up))
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}

/// Glyph bitmaps resampled to one scale, reused while a label is drawn.
struct ScaledGlyphCache {
    struct Entry { var rect: PixelRect; var pixels: [UInt8] }
    private var entries: [Character: Entry] = [:]
    private var entriesScale = 0.0

    mutating func scaled(_ character: Character, _ g: GlyphAtlas.Glyph, scale s: Double) -> Entry {
        if s != entriesScale { entries = [:]; entriesScale = s }
        if let e = entries[character] { return e }
        let rect = TextRenderer.placement(g, scale: s)
        let e = Entry(rect: rect, pixels: rect.isEmpty ? [] : Self.resample(g, to: rect, scale: s))
        entries[character] = e
        return e
    }

    /// Separable resampling of the glyph onto `rect` (in scaled pixels relative to the pen/baseline). Outside the
    /// source bitmap counts as transparent, so edges fade instead of smearing.
    static func resample(_ g: GlyphAtlas.Glyph, to rect: PixelRect, scale s: Double) -> [UInt8] {
        let channels = g.isColor ? 4 : 1
        let ax = Axis(sourceSize: g.width, sourceOrigin: Double(g.left), destOrigin: rect.x, destCount: rect.width, scale: s)
        let ay = Axis(sourceSize: g.height, sourceOrigin: Double(g.top), destOrigin: rect.y, destCount: rect.height, scale: s)
        let rowLength = rect.width * channels
        var temp = [Float](repeating: 0, count: g.height * rowLength)
        var out = [UInt8](repeating: 0, count: rect.height * rowLength)
        g.pixels.withUnsafeBufferPointer { src in
            temp.withUnsafeMutableBufferPointer { tmp in
                for row in 0..<g.height {
                    let srow = row * g.width * channels, trow = row * rowLength
                    for i in 0..<rect.width {
                        for k in ax.offsets[i]..<ax.offsets[i + 1] {
                            let w = ax.weights[k], sp = srow + ax.indices[k] * channels
                            for c in 0..<channels { tmp[trow + i * channels + c] += w * Float(src[sp + c]) }
                        }
                    }
                }
            }
        }
        temp.withUnsafeBufferPointer { tmp in
            out.withUnsafeMutableBufferPointer { dst in
                var acc = [Float](repeating: 0, count: rowLength)
                for j in 0..<rect.height {
                    for c in 0..<rowLength { acc[c] = 0 }
                    for k in ay.offsets[j]..<ay.offsets[j + 1] {
                        let w = ay.weights[k], trow = ay.indices[k] * rowLength
                        for c in 0..<rowLength { acc[c] += w * tmp[trow + c] }
                    }
                    for c in 0..<rowLength { dst[j * rowLength + c] = UInt8(min(255, max(0, acc[c].rounded()))) }
                }
            }
        }
        return out
    }

    /// Source taps and weights for each destination pixel along one axis.
    struct Axis {
        var indices: [Int] = []
        var weights: [Float] = []
        var offsets: [Int] = [0]

        init(sourceSize: Int, sourceOrigin: Double, destOrigin: Int, destCount: Int, scale s: Double) {
            for i in 0..<destCount {
                // The destination pixel's footprint in source pixels.
                let lo = Double(destOrigin + i) / s - sourceOrigin, hi = Double(destOrigin + i + 1) / s - sourceOrigin
                if s <= 1 {
                    let first = max(0, Int(lo.rounded(.down))), last = min(sourceSize - 1, Int(hi.rounded(.up)) - 1)
                    if first <= last {
                        for k in first...last {
                            let overlap = min(hi, Double(k + 1)) - max(lo, Double(k))
                            if overlap > 0 { indices.append(k); weights.append(Float(overlap / (hi - lo))) }
                        }
                    }
                } else {
                    let centre = (lo + hi) / 2 - 0.5
                    let k0 = Int(centre.rounded(.down)), f = centre - Double(k0)
                    if k0 >= 0 && k0 < sourceSize { indices.append(k0); weights.append(Float(1 - f)) }
                    if k0 + 1 >= 0 && k0 + 1 < sourceSize && f > 0 { indices.append(k0 + 1); weights.append(Float(f)) }
                }
                offsets.append(indices.count)
            }
        }
    }
}
