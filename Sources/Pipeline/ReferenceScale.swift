public import FoodCore
public import FoodVision
import Foundation

/// A reference object of known size found in a photo (the 25 mm 1-yuan coin of the ECUSTFD photos): it gives the
/// photo's scale, from which a food's box becomes square centimetres and grams.
public struct ReferenceObject: Sendable, Codable, Equatable {
    /// `coin`.
    public var kind: String
    /// The circle's bounding box, normalised to the photo.
    public var box: NormalizedBox
    /// Measured diameter in pixels of the photo the recogniser saw.
    public var diameterPixels: Double
    public var millimetresPerPixel: Double
    /// The cell classifier's probability at the coin.
    public var confidence: Double
    /// Share of the circle's circumference backed by aligned edges (the pixel check).
    public var edgeSupport: Double

    enum CodingKeys: String, CodingKey {
        case kind, box, confidence
        case diameterPixels = "diameter_px", millimetresPerPixel = "mm_per_px", edgeSupport = "edge_support"
    }
}

/// `models/food-head/reference.json`: the coin finder's thresholds and the per-label areal-density model, with
/// how they were fitted.
public struct ReferenceModel: Sendable, Codable, Equatable {
    public var coinDiameterMM: Double = 25
    /// A cell of the 14×14 map is a coin candidate when the coin head's probability there reaches this.
    public var cellThreshold: Float = 0.5
    /// The circle found in pixels around that cell must have at least this share of its circumference on edges.
    public var minEdgeSupport: Double = 0.3
    /// grams = k[label] · area_cm²^exponent (area of the food's box at the coin's scale).
    public var exponent: Double = 1.5
    public var k: [String: Double] = [:]
    /// k for labels without data (geometric mean over the fitted labels).
    public var fallbackK: Double = 1
    /// The estimate stays within [minFactor, maxFactor] × the label's household portion (guards a wrong scale).
    public var minFactor: Double = 0.2
    public var maxFactor: Double = 5
    public var note: String = ""

    public init() {}

    enum CodingKeys: String, CodingKey {
        case coinDiameterMM = "coin_diameter_mm", cellThreshold = "cell_threshold", minEdgeSupport = "min_edge_support"
        case exponent, k, fallbackK = "fallback_k", minFactor = "min_factor", maxFactor = "max_factor", note
    }

    /// Grams of a food whose box covers `areaCm2` at the reference's scale, kept within the portion guard.
    public func grams(label: String, areaCm2: Double, portionGrams: Double) -> Double {
        let raw = (k[label] ?? fallbackK) * pow(max(areaCm2, 0), exponent)
        return min(portionGrams * maxFactor, max(portionGrams * minFactor, raw)).rounded()
    }

    /// Fits k per label as the geometric mean of grams / area^exponent (least squares in log space, i.e. on the
    /// relative error the product is judged by). Labels with fewer than `minCount` samples use the fallback.
    public static func fit(samples: [(label: String, areaCm2: Double, grams: Double)], exponent: Double = 1.5, minCount: Int = 3) -> ReferenceModel {
        var model = ReferenceModel()
        model.exponent = exponent
        var logs: [String: [Double]] = [:]
        for s in samples where s.areaCm2 > 0 && s.grams > 0 {
            logs[s.label, default: []].append(log(s.grams) - exponent * log(s.areaCm2))
        }
        let all = logs.values.flatMap { $0 }
        model.fallbackK = all.isEmpty ? 1 : exp(all.reduce(0, +) / Double(all.count))
        for (label, v) in logs where v.count >= minCount {
            model.k[label] = (exp(v.reduce(0, +) / Double(v.count)) * 1e5).rounded() / 1e5
        }
        model.fallbackK = (model.fallbackK * 1e5).rounded() / 1e5
        return model
    }
}

/// Finds the coin: a two-class head (`reference_coin` vs background) over the cells of the backbone's feature map
/// says where, then a gradient Hough circle search in the photo's pixels around that cell says how big.
public struct CoinFinder: Sendable {
    public let head: SoftmaxHead
    public let model: ReferenceModel
    /// (w_coin − w_background) with the head's standardisation folded in, and the matching bias.
    private let direction: [Float]
    private let offset: Float

    public init(head: SoftmaxHead, model: ReferenceModel) throws {
        guard let c = head.classes.firstIndex(of: "reference_coin"), head.classes.count == 2 else {
            throw FoodVisionError.invalidInput(reason: "coin head classes are \(head.classes); expected reference_coin and background")
        }
        let o = 1 - c, d = head.dimension
        var w = [Float](repeating: 0, count: d)
        var b = head.bias[c] - head.bias[o]
        for k in 0..<d {
            w[k] = (head.weights[c * d + k] - head.weights[o * d + k]) * head.featureScale[k]
            b -= w[k] * head.featureMean[k]
        }
        self.head = head; self.model = model; direction = w; offset = b
    }

    /// `models/food-head/coin-head.json` + `reference.json`, or nil when either is absent.
    public static func load(modelsDirectory: String) throws -> CoinFinder? {
        let headPath = modelsDirectory + "/food-head/coin-head.json", refPath = modelsDirectory + "/food-head/reference.json"
        guard FileManager.default.fileExists(atPath: headPath), let data = FileManager.default.contents(atPath: refPath) else { return nil }
        return try CoinFinder(head: SoftmaxHead.load(from: headPath), model: JSONDecoder().decode(ReferenceModel.self, from: data))
    }

    /// Coin probability per cell of a feature map (row-major).
    public func cellProbabilities(_ map: FloatImage) -> [Float] {
        let d = map.channels, cells = map.width * map.height
        precondition(d == direction.count, "feature map has \(d) channels, the coin head \(direction.count)")
        var out = [Float](repeating: 0, count: cells)
        map.values.withUnsafeBufferPointer { v in
            direction.withUnsafeBufferPointer { w in
                for cell in 0..<cells {
                    var s: Float = offset
                    let base = cell * d
                    for k in 0..<d { s += v[base + k] * w[k] }
                    out[cell] = 1 / (1 + expf(-s))
                }
            }
        }
        return out
    }

    /// The coin in `image` given the backbone's feature map of it, or nil.
    public func find(in image: RGBImage, featureMap map: FloatImage) -> ReferenceObject? {
        let probs = cellProbabilities(map)
        guard let best = probs.indices.max(by: { probs[$0] < probs[$1] }), probs[best] >= model.cellThreshold else { return nil }
        let gw = map.width, gh = map.height
        let cellW = Double(image.width) / Double(gw), cellH = Double(image.height) / Double(gh)
        let cx = (Double(best % gw) + 0.5) * cellW, cy = (Double(best / gw) + 0.5) * cellH
        let cell = (cellW * cellH).squareRoot()
        guard let circle = CircleFinder.find(in: image, near: (cx, cy), searchRadius: cell * 1.0,
                                             radii: max(3, Int(cell * 0.2))...max(4, Int(cell * 1.6))),
              circle.support >= model.minEdgeSupport else { return nil }
        let d = 2 * circle.r
        let box = NormalizedBox(x: (circle.x - circle.r) / Double(image.width), y: (circle.y - circle.r) / Double(image.height),
                                w: d / Double(image.width), h: d / Double(image.height)).clipped
        return ReferenceObject(kind: "coin", box: box, diameterPixels: d, millimetresPerPixel: model.coinDiameterMM / d,
                               confidence: (Double(probs[best]) * 1000).rounded() / 1000,
                               edgeSupport: (circle.support * 1000).rounded() / 1000)
    }
}

/// Gradient Hough circle search: edge pixels vote for centres along their gradient (both ways: the coin may be
/// lighter or darker than the table), the best-voted centre near the expected point is kept, and the radius is the
/// one whose circumference is best covered by edges pointing at that centre.
public enum CircleFinder {
    public struct Circle: Sendable, Equatable { public var x: Double; public var y: Double; public var r: Double; public var support: Double }

    public static func find(in image: RGBImage, near centre: (x: Double, y: Double), searchRadius: Double,
                            radii: ClosedRange<Int>) -> Circle? {
        let rMax = radii.upperBound, rMin = radii.lowerBound
        let margin = Int(searchRadius.rounded(.up)) + rMax + 2
        let x0 = max(0, Int(centre.x) - margin), x1 = min(image.width, Int(centre.x) + margin)
        let y0 = max(0, Int(centre.y) - margin), y1 = min(image.height, Int(centre.y) + margin)
        let w = x1 - x0, h = y1 - y0
        guard w >= 5, h >= 5 else { return nil }
        var gray = [Float](repeating: 0, count: w * h)
        image.pixels.withUnsafeBufferPointer { p in
            for y in 0..<h {
                for x in 0..<w {
                    let i = ((y + y0) * image.width + (x + x0)) * 3
                    gray[y * w + x] = 0.299 * Float(p[i]) + 0.587 * Float(p[i + 1]) + 0.114 * Float(p[i + 2])
                }
            }
        }
        // Sobel gradients; edges = magnitude above a quarter of the window's strongest.
        var gx = [Float](repeating: 0, count: w * h), gy = gx, mag = gx
        var maxMag: Float = 0
        for y in 1..<(h - 1) {
            for x in 1..<(w - 1) {
                func g(_ dy: Int, _ dx: Int) -> Float { gray[(y + dy) * w + x + dx] }
                let sx = (g(-1, 1) + 2 * g(0, 1) + g(1, 1)) - (g(-1, -1) + 2 * g(0, -1) + g(1, -1))
                let sy = (g(1, -1) + 2 * g(1, 0) + g(1, 1)) - (g(-1, -1) + 2 * g(-1, 0) + g(-1, 1))
                let m = (sx * sx + sy * sy).squareRoot()
                gx[y * w + x] = sx; gy[y * w + x] = sy; mag[y * w + x] = m
                maxMag = max(maxMag, m)
            }
        }
        guard maxMag > 40 else { return nil }
        let edgeThreshold = max(40, maxMag * 0.2)
        var edges: [(x: Int, y: Int, ux: Float, uy: Float)] = []
        for i in 0..<(w * h) where mag[i] >= edgeThreshold {
            edges.append((i % w, i / w, gx[i] / mag[i], gy[i] / mag[i]))
        }
        var acc = [Float](repeating: 0, count: w * h)
        for e in edges {
            for sign: Float in [-1, 1] {
                for r in rMin...rMax {
                    let cx = Int((Float(e.x) + sign * Float(r) * e.ux).rounded()), cy = Int((Float(e.y) + sign * Float(r) * e.uy).rounded())
                    guard cx >= 0, cx < w, cy >= 0, cy < h else { break }
                    acc[cy * w + cx] += 1 / Float(r)  // a small circle gets as many votes per radius as a large one
                }
            }
        }
        // Best centre (3×3 smoothed) within searchRadius of the expected point.
        let ex = centre.x - Double(x0), ey = centre.y - Double(y0)
        var best = -1, bestScore: Float = 0
        for y in 1..<(h - 1) {
            for x in 1..<(w - 1) {
                let dx = Double(x) - ex, dy = Double(y) - ey
                guard dx * dx + dy * dy <= searchRadius * searchRadius else { continue }
                var s: Float = 0
                for yy in (y - 1)...(y + 1) { for xx in (x - 1)...(x + 1) { s += acc[yy * w + xx] } }
                if s > bestScore { bestScore = s; best = y * w + x }
            }
        }
        guard best >= 0 else { return nil }
        let bx = best % w, by = best / w
        // Radius: aligned edges by distance from the centre, coverage of each circumference (±1 px).
        var hist = [Double](repeating: 0, count: rMax + 3)
        for e in edges {
            let dx = Float(e.x - bx), dy = Float(e.y - by)
            let d = (dx * dx + dy * dy).squareRoot()
            guard d >= 1, Int(d.rounded()) < hist.count else { continue }
            if abs((dx * e.ux + dy * e.uy) / d) >= 0.85 { hist[Int(d.rounded())] += 1 }
        }
        var bestR = 0, bestSupport = 0.0
        for r in rMin...rMax {
            let covered = hist[r - 1] + hist[r] + hist[r + 1]
            let support = min(1, covered / (2 * Double.pi * Double(r) * 1.5))
            if support > bestSupport + 1e-9 { bestSupport = support; bestR = r }
        }
        guard bestR > 0 else { return nil }
        return Circle(x: Double(bx + x0) + 0.5, y: Double(by + y0) + 0.5, r: Double(bestR) + 0.5, support: bestSupport)
    }
}
