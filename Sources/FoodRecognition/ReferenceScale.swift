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

    public init(kind: String, box: NormalizedBox, diameterPixels: Double, millimetresPerPixel: Double, confidence: Double, edgeSupport: Double) {
        self.kind = kind; self.box = box; self.diameterPixels = diameterPixels
        self.millimetresPerPixel = millimetresPerPixel; self.confidence = confidence; self.edgeSupport = edgeSupport
    }

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
    /// Per-label exponents (the log-log slope of grams on area, within 0…1.5) where a label has enough data;
    /// `exponent` otherwise.
    public var exponents: [String: Double] = [:]
    /// k for labels without data (geometric mean over the fitted labels).
    public var fallbackK: Double = 1
    /// The estimate stays within [minFactor, maxFactor] × the label's household portion (guards a wrong scale).
    public var minFactor: Double = 0.2
    public var maxFactor: Double = 5
    public var note: String = ""

    public init() {}

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        coinDiameterMM = try c.decodeIfPresent(Double.self, forKey: .coinDiameterMM) ?? 25
        cellThreshold = try c.decodeIfPresent(Float.self, forKey: .cellThreshold) ?? 0.8
        minEdgeSupport = try c.decodeIfPresent(Double.self, forKey: .minEdgeSupport) ?? 0.4
        exponent = try c.decodeIfPresent(Double.self, forKey: .exponent) ?? 1.5
        exponents = try c.decodeIfPresent([String: Double].self, forKey: .exponents) ?? [:]
        k = try c.decodeIfPresent([String: Double].self, forKey: .k) ?? [:]
        fallbackK = try c.decodeIfPresent(Double.self, forKey: .fallbackK) ?? 1
        minFactor = try c.decodeIfPresent(Double.self, forKey: .minFactor) ?? 0.2
        maxFactor = try c.decodeIfPresent(Double.self, forKey: .maxFactor) ?? 5
        note = try c.decodeIfPresent(String.self, forKey: .note) ?? ""
    }

    enum CodingKeys: String, CodingKey {
        case coinDiameterMM = "coin_diameter_mm", cellThreshold = "cell_threshold", minEdgeSupport = "min_edge_support"
        case exponent, exponents, k, fallbackK = "fallback_k", minFactor = "min_factor", maxFactor = "max_factor", note
    }

    /// Grams of a food whose box covers `areaCm2` at the reference's scale, kept within the portion guard.
    public func grams(label: String, areaCm2: Double, portionGrams: Double) -> Double {
        let raw = (k[label] ?? fallbackK) * pow(max(areaCm2, 0), exponents[label] ?? exponent)
        return min(portionGrams * maxFactor, max(portionGrams * minFactor, raw)).rounded()
    }

    /// Fits k per label as the geometric mean of grams / area^exponent (least squares in log space, i.e. on the
    /// relative error the product is judged by). Labels with fewer than `minCount` samples use the fallback (the
    /// geometric mean over all). The candidates are each exponent of `exponents` (one for all labels) and, with
    /// `perLabelMinCount` > 0, a least-squares slope per label with that many samples (the best single exponent for
    /// the others). Without `groups` the candidate with the lowest in-sample mean absolute % error is kept. With
    /// `groups` (one per sample: what was photographed, e.g. the weighed portion) and `folds` ≥ 2, each candidate is
    /// judged on samples it was not fitted on — the groups split into `folds` by a hash, every fold predicted by the
    /// candidate fitted on the others — since the in-sample error always favours the per-label slopes' extra
    /// parameters; the chosen candidate is then fitted on all samples. `trial` reports every candidate's error (exponent −1: per label).
    public static func fit(samples: [(label: String, areaCm2: Double, grams: Double)], exponents: [Double] = [1.5],
                           minCount: Int = 3, perLabelMinCount: Int = 0, groups: [String]? = nil,
                           folds: Int = 5) -> (model: ReferenceModel, trial: [(exponent: Double, maePercent: Double)]) {
        precondition(groups == nil || groups!.count == samples.count, "one group per sample")
        let keep = samples.indices.filter { samples[$0].areaCm2 > 0 && samples[$0].grams > 0 }
        let usable = keep.map { samples[$0] }
        let candidates = exponents + (perLabelMinCount > 0 ? [-1] : [])
        func make(_ candidate: Double, _ data: [(label: String, areaCm2: Double, grams: Double)]) -> ReferenceModel {
            if candidate >= 0 { return fitted(data, exponent: candidate, minCount: minCount) }
            let base = exponents.map { fitted(data, exponent: $0, minCount: minCount) }
                .map { ($0, meanError($0, data)) }.min { $0.1 < $1.1 }?.0 ?? ReferenceModel()
            return withPerLabelSlopes(base, data, minCount: perLabelMinCount)
        }
        let errors: [Double]
        if let groups, folds >= 2 {
            let fold = keep.map { Int(SplitMix64.fnv1a(groups[$0]) % UInt64(folds)) }
            // Each fold: its samples, and the others' to fit on.
            let splits = (0..<folds).map { f in
                (held: usable.indices.filter { fold[$0] == f }.map { usable[$0] }, rest: usable.indices.filter { fold[$0] != f }.map { usable[$0] })
            }.filter { !$0.held.isEmpty }
            errors = candidates.map { candidate in
                splits.reduce(0.0) { sum, split in
                    let model = make(candidate, split.rest)
                    return sum + split.held.reduce(0) { $0 + model.percentError($1) }
                } / Double(max(usable.count, 1))
            }
        } else {
            errors = candidates.map { meanError(make($0, usable), usable) }
        }
        let trial = zip(candidates, errors).map { ($0, ($1 * 10).rounded() / 10) }
        guard let best = errors.indices.min(by: { errors[$0] < errors[$1] }) else { return (ReferenceModel(), trial) }
        return (make(candidates[best], usable), trial)
    }

    /// One exponent for all labels; k per label with at least `minCount` samples, `fallbackK` for the rest.
    private static func fitted(_ data: [(label: String, areaCm2: Double, grams: Double)], exponent: Double, minCount: Int) -> ReferenceModel {
        var model = ReferenceModel()
        model.exponent = exponent
        var logs: [String: [Double]] = [:]
        for s in data { logs[s.label, default: []].append(log(s.grams) - exponent * log(s.areaCm2)) }
        let all = logs.values.flatMap { $0 }
        model.fallbackK = ((all.isEmpty ? 1 : exp(all.reduce(0, +) / Double(all.count))) * 1e5).rounded() / 1e5
        for (label, v) in logs where v.count >= minCount {
            model.k[label] = (exp(v.reduce(0, +) / Double(v.count)) * 1e5).rounded() / 1e5
        }
        return model
    }

    /// `base` with a least-squares slope of log grams on log area (clamped to 0…1.5) and its intercept for every
    /// label with at least `minCount` samples.
    private static func withPerLabelSlopes(_ base: ReferenceModel, _ data: [(label: String, areaCm2: Double, grams: Double)],
                                           minCount: Int) -> ReferenceModel {
        var byLabel: [String: [(x: Double, y: Double)]] = [:]
        for s in data { byLabel[s.label, default: []].append((log(s.areaCm2), log(s.grams))) }
        var model = base
        for (label, v) in byLabel where v.count >= minCount {
            let mx = v.map(\.x).reduce(0, +) / Double(v.count), my = v.map(\.y).reduce(0, +) / Double(v.count)
            let sxx = v.reduce(0) { $0 + ($1.x - mx) * ($1.x - mx) }, sxy = v.reduce(0) { $0 + ($1.x - mx) * ($1.y - my) }
            let slope = min(1.5, max(0, sxx > 0 ? sxy / sxx : 0))
            model.exponents[label] = (slope * 1000).rounded() / 1000
            model.k[label] = (exp(my - slope * mx) * 1e5).rounded() / 1e5
        }
        return model
    }

    /// Absolute % error of the unguarded estimate on one sample.
    private func percentError(_ s: (label: String, areaCm2: Double, grams: Double)) -> Double {
        abs((k[s.label] ?? fallbackK) * pow(s.areaCm2, exponents[s.label] ?? exponent) - s.grams) / s.grams * 100
    }

    private static func meanError(_ model: ReferenceModel, _ data: [(label: String, areaCm2: Double, grams: Double)]) -> Double {
        data.reduce(0) { $0 + model.percentError($1) } / Double(max(data.count, 1))
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

    /// Coin probability per cell of `features`' grid (row-major); a fused map is read part by part.
    public func cellProbabilities(_ features: CellFeatures) -> [Float] {
        guard case .fused(let parts) = features, let grid = parts.first, features.channels == direction.count else {
            return cellProbabilities(features.materialised())
        }
        var total = [Float](repeating: 0, count: grid.width * grid.height)
        var start = 0
        for part in parts {
            FusedCellMap.addSampled(FloatImage(width: part.width, height: part.height, channels: 1,
                                               values: scores(part, directionFrom: start, plus: 0)),
                                    toGridOfWidth: grid.width, height: grid.height, into: &total)
            start += part.channels
        }
        return total.map { 1 / (1 + expf(-($0 + offset))) }
    }

    /// Coin probability per cell of a feature map (row-major).
    public func cellProbabilities(_ map: FloatImage) -> [Float] {
        precondition(map.channels == direction.count, "feature map has \(map.channels) channels, the coin head \(direction.count)")
        return scores(map, directionFrom: 0, plus: offset).map { 1 / (1 + expf(-$0)) }
    }

    /// Per cell of `map`: `initial` + its channels · `direction[start...]`.
    private func scores(_ map: FloatImage, directionFrom start: Int, plus initial: Float) -> [Float] {
        let d = map.channels, cells = map.width * map.height
        var out = [Float](repeating: 0, count: cells)
        map.values.withUnsafeBufferPointer { v in
            direction.withUnsafeBufferPointer { w in
                for cell in 0..<cells {
                    var s = initial
                    let base = cell * d
                    for k in 0..<d { s += v[base + k] * w[start + k] }
                    out[cell] = s
                }
            }
        }
        return out
    }

    /// The coin in `image` given the backbone's feature map of it, or nil.
    public func find(in image: RGBImage, featureMap map: FloatImage) -> ReferenceObject? {
        find(in: image, features: .map(map))
    }

    /// The coin in `image` given what the cell heads read of it (a map, or a fused map's parts), or nil.
    public func find(in image: RGBImage, features: CellFeatures) -> ReferenceObject? {
        let probs = cellProbabilities(features)
        guard let best = probs.indices.max(by: { probs[$0] < probs[$1] }), probs[best] >= model.cellThreshold else { return nil }
        let gw = features.width, gh = features.height
        let cellW = Double(image.width) / Double(gw), cellH = Double(image.height) / Double(gh)
        let cx = (Double(best % gw) + 0.5) * cellW, cy = (Double(best / gw) + 0.5) * cellH
        let cell = (cellW * cellH).squareRoot()
        guard let circle = CircleFinder.find(in: image, near: (cx, cy), searchRadius: cell * 1.0,
                                             radii: max(3, Int(cell * 0.35))...max(4, Int(cell * 1.6))),
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
                            radii: ClosedRange<Int>, tieMargin: Double = 0.05) -> Circle? {
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
        var edges: [(x: Int, y: Int, ux: Float, uy: Float, m: Float)] = []
        for i in 0..<(w * h) where mag[i] >= edgeThreshold {
            edges.append((i % w, i / w, gx[i] / mag[i], gy[i] / mag[i], mag[i]))
        }
        var acc = [Float](repeating: 0, count: w * h)
        for e in edges {
            for sign: Float in [-1, 1] {
                for r in rMin...rMax {
                    let cx = Int((Float(e.x) + sign * Float(r) * e.ux).rounded()), cy = Int((Float(e.y) + sign * Float(r) * e.uy).rounded())
                    guard cx >= 0, cx < w, cy >= 0, cy < h else { break }
                    acc[cy * w + cx] += 1
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
        // Centre ±3 px × radius: the share of 36 angular sectors holding an edge at distance r ± 1 whose gradient
        // points at the centre. Sector coverage does not grow with edge thickness and penalises tiny circles; among
        // near-ties the larger circle wins (a coin's embossing makes smaller concentric rings).
        let sectors = 36
        var circles: [Circle] = []
        for oy in -3...3 {
            for ox in -3...3 {
                let bx = best % w + ox, by = best / w + oy
                var bits = [UInt64](repeating: 0, count: rMax + 3)
                for e in edges {
                    let dx = Float(e.x - bx), dy = Float(e.y - by)
                    let d = (dx * dx + dy * dy).squareRoot()
                    let ri = Int(d.rounded())
                    guard d >= 1, ri < bits.count, abs((dx * e.ux + dy * e.uy) / d) >= 0.85 else { continue }
                    var angle = atan2f(dy, dx) / (2 * .pi)
                    if angle < 0 { angle += 1 }
                    bits[ri] |= 1 << UInt64(min(sectors - 1, Int(angle * Float(sectors))))
                }
                for r in rMin...rMax {
                    let coverage = Double((bits[r - 1] | bits[r] | bits[r + 1]).nonzeroBitCount) / Double(sectors)
                    circles.append(Circle(x: Double(bx + x0) + 0.5, y: Double(by + y0) + 0.5, r: Double(r) + 0.5, support: coverage))
                }
            }
        }
        guard let top = circles.map(\.support).max(),
              var chosen = circles.filter({ $0.support >= top - tieMargin }).max(by: { ($0.r, $0.support) < ($1.r, $1.support) })
        else { return nil }
        // Sub-pixel radius: the gradient-weighted mean distance of the aligned edges in the ring (both the pixel just
        // inside and the one just outside the rim are edges; their weighted mean is the rim).
        var sum: Float = 0, weight: Float = 0
        let cx = Float(chosen.x) - 0.5 - Float(x0), cy = Float(chosen.y) - 0.5 - Float(y0), r = Float(chosen.r) - 0.5
        for e in edges {
            let dx = Float(e.x) - cx, dy = Float(e.y) - cy
            let d = (dx * dx + dy * dy).squareRoot()
            guard d >= 1, abs(d - r) <= 2.5, abs((dx * e.ux + dy * e.uy) / d) >= 0.85 else { continue }
            sum += e.m * d; weight += e.m
        }
        if weight > 0 { chosen.r = Double(sum / weight) }
        return chosen
    }
}
