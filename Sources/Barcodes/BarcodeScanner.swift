public import FoodCore
import Foundation

/// A point in image pixel coordinates (x right, y down).
public struct PixelPoint: Sendable, Hashable, Codable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) { self.x = x; self.y = y }
}

/// One barcode found in an image.
public struct DecodedBarcode: Sendable, Hashable, Codable {
    /// The validated code (check digit verified), in the symbology it was printed in.
    public let code: GTIN
    /// Where one representative scan line entered the start guard and left the end guard.
    public let start: PixelPoint
    public let end: PixelPoint
    /// Reading direction (start guard → end guard) in degrees, clockwise from the +x axis, in 0..<360.
    /// 0 is an upright symbol, 180 an upside-down one.
    public let angleDegrees: Double
    /// The region covered by all scan lines that read this code, normalised to the image.
    public let bounds: NormalizedBox
    /// How many distinct scan lines read exactly this code.
    public let scanLines: Int

    public var format: BarcodeFormat { code.format }
    public var digits: String { code.digits }
    public var gtin14: String { code.gtin14 }
    public var center: PixelPoint { PixelPoint(x: (start.x + end.x) / 2, y: (start.y + end.y) / 2) }
}

/// Finds and decodes EAN-13, UPC-A, EAN-8 and UPC-E symbols at any rotation.
///
/// The image is read along parallel scan lines at many angles; each line's luminance profile is turned into
/// sub-pixel edges (extrema of the derivative, which stay put under symmetric blur, unlike a fixed threshold),
/// the edges into bar/space widths, and the widths into characters with guard, quiet-zone, parity and check
/// digit tests. A code is reported only when several scan lines agree and no better-supported different code
/// was read at the same place: a wrong code is worse than none.
public struct BarcodeScanner: Sendable {
    public struct Options: Sendable {
        /// Angle between scan-line families, in degrees (each line is read both ways).
        public var angleStep: Double = 6
        /// Distance between parallel scan lines, in pixels.
        public var lineSpacing: Double = 3
        /// Distance between samples along a scan line, in pixels (below 1 helps modules under 2 pixels wide).
        public var sampleStep: Double = 0.5
        /// Scan lines that must read the same code before it is reported (UPC-E, whose check digit is only in
        /// its parity pattern, needs twice this and twice `minEvidence`).
        public var minAgreement: Int = 2
        /// Quality-weighted agreement a code needs: each line counts 1 when its worst character is within
        /// 0.3 module of the ideal edge distances, falling to 0 at 0.6 (the acceptance limit). Two marginal reads
        /// of the same wrong code (it happens, at T-class boundaries, with the check digit passing by chance)
        /// are not enough; two clean ones are.
        public var minEvidence: Double = 1
        /// When the first pass finds nothing, read every line again with a smoother edge detector.
        public var tryHarder = true
        /// Symbologies to report.
        public var formats: Set<BarcodeFormat> = [.ean13, .upcA, .ean8, .upcE]
        public init() {}
    }

    public var options: Options

    public init(options: Options = Options()) {
        self.options = options
    }

    /// Scans `image` with default options.
    public static func scan(_ image: RGBImage) -> [DecodedBarcode] {
        BarcodeScanner().scan(image)
    }

    /// Every code read consistently in `image`, best supported first.
    public func scan(_ image: RGBImage) -> [DecodedBarcode] {
        guard image.width >= 16, image.height >= 4 else { return [] }
        let luma = Luminance(image)
        var hits: [LineHit] = []
        luma.values.withUnsafeBufferPointer { lum in
            collectHits(lum, width: image.width, height: image.height, wideDerivative: false, into: &hits)
        }
        let found = Self.vote(hits, width: image.width, height: image.height, options: options)
        guard found.isEmpty, options.tryHarder else { return found }
        // Nothing yet: read the same lines again with a smoother derivative, pooling the evidence per line.
        luma.values.withUnsafeBufferPointer { lum in
            collectHits(lum, width: image.width, height: image.height, wideDerivative: true, into: &hits)
        }
        return Self.vote(hits, width: image.width, height: image.height, options: options)
    }

    // MARK: - Scan lines

    static let smallModulePixels = 1.25
    static let smallModuleMaxError: Float = 0.3

    private func collectHits(_ lum: UnsafeBufferPointer<Float>, width w: Int, height h: Int, wideDerivative: Bool,
                             into hits: inout [LineHit]) {
        let angleCount = max(1, Int((180.0 / max(0.5, options.angleStep)).rounded()))
        let spacing = max(1.0, options.lineSpacing)
        let cx = Double(w - 1) / 2, cy = Double(h - 1) / 2
        let step = min(1, max(0.25, options.sampleStep))
        let maxLen = Int((Double(w * w + h * h)).squareRoot() / step) + 2
        var profile = [Float](repeating: 0, count: maxLen)
        var decoder = LineDecoder(capacity: maxLen, formats: options.formats, sampleStep: Float(step))
        decoder.wideDerivative = wideDerivative
        var lineID = 0
        for a in 0..<angleCount {
            let theta = Double(a) * Double.pi / Double(angleCount)
            var dx = cos(theta), dy = sin(theta)
            if abs(dx) < 1e-12 { dx = 0 }
            if abs(dy) < 1e-12 { dy = 0 }
            let nx = -dy, ny = dx
            let reach = 0.5 * (abs(nx) * Double(w - 1) + abs(ny) * Double(h - 1))
            var off = -reach + (reach.truncatingRemainder(dividingBy: spacing)) / 2
            while off <= reach {
                defer { off += spacing; lineID += 1 }
                let ox = cx + off * nx, oy = cy + off * ny
                guard let (t0, t1) = Self.clip(ox, oy, dx, dy, Double(w - 1), Double(h - 1)) else { continue }
                let n = Int((t1 - t0) / step) + 1
                guard n >= 30 else { continue }
                profile.withUnsafeMutableBufferPointer { p in
                    Self.sample(lum, width: w, height: h, x0: ox + t0 * dx, y0: oy + t0 * dy, dx: dx * step, dy: dy * step, count: n, into: p)
                }
                let found = profile.withUnsafeBufferPointer { p in decoder.decode(UnsafeBufferPointer(rebasing: p[0..<n])) }
                for f in found {
                    let ts = t0 + Double(f.start) * step, te = t0 + Double(f.end) * step
                    let start = (ox + ts * dx, oy + ts * dy)
                    let end = (ox + te * dx, oy + te * dy)
                    guard Self.quietZonesAreClean(lum, width: w, height: h, start: start, end: end, format: f.format,
                                                  rightModules: f.rightQuietModules, threshold: f.threshold) else { continue }
                    // Under about 1.25 pixels per module blur merges narrow elements and pulls neighbouring
                    // characters towards each other; only near-perfect reads count there.
                    let modules: Double = f.format == .ean8 ? 67 : f.format == .upcE ? 51 : 95
                    let modulePixels = hypot(end.0 - start.0, end.1 - start.1) / modules
                    if modulePixels < Self.smallModulePixels, f.worstError > Self.smallModuleMaxError { continue }
                    hits.append(LineHit(format: f.format, digits: f.digits, start: PixelPoint(x: start.0, y: start.1),
                                        end: PixelPoint(x: end.0, y: end.1), lineID: lineID, worstError: f.worstError))
                }
            }
        }
    }

    /// Checks both quiet zones on the image, not only along the line: points 1…Q modules beyond each outer guard
    /// edge, on the line and offset across it by ±3 modules, must all be lighter than the bar/space midpoint.
    ///
    /// A slanted line that leaves a symbol through the bottom of its bars sees white where bars continue a few
    /// modules higher; that is how the left half of an EAN-13 can pass for a UPC-E, or a part of any symbol
    /// for a shorter one. The offsets catch it.
    private static func quietZonesAreClean(_ lum: UnsafeBufferPointer<Float>, width w: Int, height h: Int,
                                           start: (Double, Double), end: (Double, Double), format: BarcodeFormat,
                                           rightModules: Float, threshold: Float) -> Bool {
        let vx = end.0 - start.0, vy = end.1 - start.1
        let length = (vx * vx + vy * vy).squareRoot()
        guard length > 0 else { return false }
        let modules: Double = format == .ean8 ? 67 : format == .upcE ? 51 : 95
        let module = length / modules
        let ux = vx / length, uy = vy / length  // reading direction
        let px = -uy, py = ux                   // across the line
        func isLight(_ x: Double, _ y: Double) -> Bool {
            guard x >= 0, y >= 0, x <= Double(w - 1), y <= Double(h - 1) else { return false }
            let ix = min(Int(x), max(0, w - 2)), iy = min(Int(y), max(0, h - 2))
            let fx = Float(x - Double(ix)), fy = Float(y - Double(iy))
            let base = iy * w + ix
            let top = lum[base] + (lum[base + 1] - lum[base]) * fx
            let bottom = lum[base + w] + (lum[base + w + 1] - lum[base + w]) * fx
            return top + (bottom - top) * fy >= threshold
        }
        func clean(_ ox: Double, _ oy: Double, direction: Double, modules q: Double) -> Bool {
            for across in [-3.0, 0, 3.0] {
                var along = 1.0
                while along <= q {
                    let d = along * module * direction, a = across * module
                    if !isLight(ox + ux * d + px * a, oy + uy * d + py * a) { return false }
                    along += 0.5
                }
            }
            return true
        }
        return clean(start.0, start.1, direction: -1, modules: Double(LineDecoder.quietZoneModules))
            && clean(end.0, end.1, direction: 1, modules: Double(rightModules))
    }

    /// The parameter range [t0, t1] for which (ox + t dx, oy + t dy) lies inside [0, maxX] × [0, maxY].
    private static func clip(_ ox: Double, _ oy: Double, _ dx: Double, _ dy: Double, _ maxX: Double, _ maxY: Double) -> (Double, Double)? {
        var lo = -Double.infinity, hi = Double.infinity
        if dx == 0 {
            if ox < 0 || ox > maxX { return nil }
        } else {
            let a = (0 - ox) / dx, b = (maxX - ox) / dx
            lo = max(lo, min(a, b)); hi = min(hi, max(a, b))
        }
        if dy == 0 {
            if oy < 0 || oy > maxY { return nil }
        } else {
            let a = (0 - oy) / dy, b = (maxY - oy) / dy
            lo = max(lo, min(a, b)); hi = min(hi, max(a, b))
        }
        // Stay a hair inside so bilinear taps never leave the image.
        lo += 1e-6; hi -= 1e-6
        return hi > lo ? (lo, hi) : nil
    }

    /// Bilinear samples at unit steps along a line that `clip` kept inside the image.
    private static func sample(_ lum: UnsafeBufferPointer<Float>, width w: Int, height h: Int,
                               x0: Double, y0: Double, dx: Double, dy: Double, count: Int,
                               into out: UnsafeMutableBufferPointer<Float>) {
        let maxX = w - 2, maxY = h - 2
        for i in 0..<count {
            let x = x0 + Double(i) * dx, y = y0 + Double(i) * dy
            let ix = min(Int(x), maxX), iy = min(Int(y), maxY)
            let fx = Float(x - Double(ix)), fy = Float(y - Double(iy))
            let base = iy * w + ix
            let a = lum[base], b = lum[base + 1], c = lum[base + w], d = lum[base + w + 1]
            let top = a + (b - a) * fx, bottom = c + (d - c) * fx
            out[i] = top + (bottom - top) * fy
        }
    }

    // MARK: - Voting

    private static func vote(_ hits: [LineHit], width: Int, height: Int, options: Options) -> [DecodedBarcode] {
        struct Key: Hashable { let format: BarcodeFormat; let digits: String }
        var groups: [Key: [LineHit]] = [:]
        for h in hits { groups[Key(format: h.format, digits: h.digits), default: []].append(h) }

        struct Candidate { let key: Key; let hits: [LineHit]; let center: PixelPoint; let length: Double }
        var candidates: [Candidate] = groups.map { key, hs in
            let cx = hs.map { ($0.start.x + $0.end.x) / 2 }.reduce(0, +) / Double(hs.count)
            let cy = hs.map { ($0.start.y + $0.end.y) / 2 }.reduce(0, +) / Double(hs.count)
            let len = hs.map { hypot($0.end.x - $0.start.x, $0.end.y - $0.start.y) }.reduce(0, +) / Double(hs.count)
            return Candidate(key: key, hits: hs, center: PixelPoint(x: cx, y: cy), length: len)
        }
        candidates.sort { a, b in a.hits.count != b.hits.count ? a.hits.count > b.hits.count : a.key.digits < b.key.digits }

        var results: [DecodedBarcode] = []
        for (i, c) in candidates.enumerated() {
            let support = Set(c.hits.map(\.lineID)).count
            // UPC-E carries its check digit only in the parity of six characters: it needs twice the agreement.
            let strictness = c.key.format == .upcE ? 2.0 : 1.0
            guard Double(support) >= Double(options.minAgreement) * strictness,
                  Self.evidence(c.hits) >= options.minEvidence * strictness else { continue }
            // A different code read at the same place means at least one of them is a misread. Keep a code only
            // when it clearly dominates every overlapping rival (3× the lines); otherwise report neither.
            var contested = false
            for (j, o) in candidates.enumerated() where j != i {
                let dist = hypot(o.center.x - c.center.x, o.center.y - c.center.y)
                guard dist < 0.5 * max(c.length, o.length) else { continue }
                let rival = Set(o.hits.map(\.lineID)).count
                if rival * 3 > support { contested = true; break }
            }
            if contested { continue }
            let code: GTIN
            do { code = try GTIN(format: c.key.format, digits: c.key.digits) } catch { continue }
            // Representative line: the hit whose centre is nearest the group's centre.
            let rep = c.hits.min { a, b in
                let da = hypot((a.start.x + a.end.x) / 2 - c.center.x, (a.start.y + a.end.y) / 2 - c.center.y)
                let db = hypot((b.start.x + b.end.x) / 2 - c.center.x, (b.start.y + b.end.y) / 2 - c.center.y)
                return da < db
            }!
            var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
            for h in c.hits {
                for p in [h.start, h.end] {
                    minX = min(minX, p.x); maxX = max(maxX, p.x); minY = min(minY, p.y); maxY = max(maxY, p.y)
                }
            }
            var angle = Self.readingDirection(c.hits) * 180 / Double.pi
            if angle < 0 { angle += 360 }
            let box = NormalizedBox(x: minX / Double(width), y: minY / Double(height),
                                    w: (maxX - minX) / Double(width), h: (maxY - minY) / Double(height)).clipped
            results.append(DecodedBarcode(code: code, start: rep.start, end: rep.end, angleDegrees: angle,
                                          bounds: box, scanLines: support))
        }
        return results
    }
}

extension BarcodeScanner {
    /// Sum over distinct scan lines of the line's weight (1 for a clean read, down to 0 for a marginal one).
    static func evidence(_ hits: [LineHit]) -> Double {
        var best: [Int: Float] = [:]
        for h in hits { best[h.lineID] = min(best[h.lineID] ?? .infinity, h.worstError) }
        let limit = LineDecoder.maxEdgeDistanceError
        return best.values.reduce(0) { acc, e in acc + Double(min(1, max(0, (limit - e) / (limit - 0.3)))) }
    }

    /// The symbol's reading direction in radians. Scan lines cross a symbol at up to ±35° from square, so one
    /// line's direction is a poor estimate; the guards are better: every line's start point lies on the start
    /// guard and every end point on the end guard, so the principal axis of those points (each set about its own
    /// mean) runs along the bars, and reading is square to it.
    static func readingDirection(_ hits: [LineHit]) -> Double {
        var mx = 0.0, my = 0.0
        for h in hits { mx += h.end.x - h.start.x; my += h.end.y - h.start.y }
        let fallback = atan2(my, mx)
        guard hits.count >= 3 else { return fallback }
        let n = Double(hits.count)
        let sx = hits.map(\.start.x).reduce(0, +) / n, sy = hits.map(\.start.y).reduce(0, +) / n
        let ex = hits.map(\.end.x).reduce(0, +) / n, ey = hits.map(\.end.y).reduce(0, +) / n
        var cxx = 0.0, cxy = 0.0, cyy = 0.0
        for h in hits {
            for (x, y) in [(h.start.x - sx, h.start.y - sy), (h.end.x - ex, h.end.y - ey)] {
                cxx += x * x; cxy += x * y; cyy += y * y
            }
        }
        // Need the points spread along the guards (several offsets), not bunched in one spot.
        let spread = (cxx + cyy) / (2 * n)
        let length = hypot(ex - sx, ey - sy)
        guard spread > 4, spread.squareRoot() > 0.03 * length else { return fallback }
        let barAxis = 0.5 * atan2(2 * cxy, cxx - cyy)
        var reading = barAxis + Double.pi / 2
        // Orient along start → end.
        if cos(reading) * (ex - sx) + sin(reading) * (ey - sy) < 0 { reading += Double.pi }
        return atan2(sin(reading), cos(reading))
    }
}

struct LineHit {
    let format: BarcodeFormat
    let digits: String
    let start: PixelPoint
    let end: PixelPoint
    let lineID: Int
    let worstError: Float
}

/// Rec. 601 luma of an RGB image as Float 0…255.
struct Luminance {
    let values: [Float]

    init(_ image: RGBImage) {
        let n = image.width * image.height
        values = [Float](unsafeUninitializedCapacity: n) { out, count in
            image.pixels.withUnsafeBufferPointer { px in
                for i in 0..<n {
                    let r = Float(px[3 * i]), g = Float(px[3 * i + 1]), b = Float(px[3 * i + 2])
                    out[i] = 0.299 * r + 0.587 * g + 0.114 * b
                }
            }
            count = n
        }
    }
}
