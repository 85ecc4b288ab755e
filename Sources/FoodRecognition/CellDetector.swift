public import FoodCore
public import FoodVision
import Foundation

/// What one cell of the backbone's feature map is trained to say, derived from a photo's annotated boxes.
public enum CellTarget: Sendable, Equatable {
    case background
    case label(Int)
    /// Partly covered by a box: too ambiguous to train on either way.
    case ignore
}

/// Cell labels from annotated boxes, for training the per-cell food detector.
public enum CellLabeling {
    /// For a `gridWidth × gridHeight` map over the photo: a cell at least `minOverlap` covered by a box takes that
    /// box's label (the box covering it most; on a tie the smaller box, the more specific one); a cell no box touches
    /// is background; anything in between is ignored. Boxes in `background` (the reference coin) count as background.
    public static func targets(boxes: [(label: Int, box: NormalizedBox)], background: [NormalizedBox] = [],
                               gridWidth: Int, gridHeight: Int, minOverlap: Double = 0.5, backgroundBelow: Double = 0) -> [CellTarget] {
        var out = [CellTarget](repeating: .background, count: gridWidth * gridHeight)
        let cw = 1 / Double(gridWidth), ch = 1 / Double(gridHeight)
        for gy in 0..<gridHeight {
            for gx in 0..<gridWidth {
                let cell = NormalizedBox(x: Double(gx) * cw, y: Double(gy) * ch, w: cw, h: ch)
                var best: (label: Int, cover: Double, area: Double)?
                var touched = false
                for b in boxes {
                    let cover = overlap(cell, b.box) / cell.area
                    guard cover > 1e-9 else { continue }
                    touched = true
                    if best == nil || cover > best!.cover + 1e-9 || (abs(cover - best!.cover) <= 1e-9 && b.box.area < best!.area) {
                        best = (b.label, cover, b.box.area)
                    }
                }
                if let best, best.cover >= minOverlap {
                    out[gy * gridWidth + gx] = .label(best.label)
                } else if touched && (best?.cover ?? 0) >= backgroundBelow {
                    out[gy * gridWidth + gx] = .ignore
                }
            }
        }
        return out
    }

    /// The area two boxes share.
    static func overlap(_ a: NormalizedBox, _ b: NormalizedBox) -> Double {
        a.intersectionArea(b)
    }

    /// The same boxes mirrored left-right (for the mirrored photo).
    public static func mirrored(_ box: NormalizedBox) -> NormalizedBox {
        NormalizedBox(x: 1 - box.x - box.w, y: box.y, w: box.w, h: box.h)
    }
}

/// One food region found by the cell detector.
public struct CellDetection: Sendable, Equatable {
    public var classIndex: Int
    public var confidence: Double
    public var box: NormalizedBox
    /// Fine-grid cells in the region.
    public var size: Int

    public init(classIndex: Int, confidence: Double, box: NormalizedBox, size: Int) {
        self.classIndex = classIndex; self.confidence = confidence; self.box = box; self.size = size
    }
}

/// Regions of a per-cell class map → boxes, and non-maximum suppression.
public enum CellRegions {
    /// 4-connected regions of equal owner (owner < 0 = nobody) on a `width × height` grid, in scan order.
    public static func regions(owner: [Int], width: Int, height: Int) -> [(owner: Int, members: [Int])] {
        precondition(owner.count == width * height, "owner map has \(owner.count) cells, expected \(width)×\(height)")
        var seen = [Bool](repeating: false, count: owner.count)
        var out: [(Int, [Int])] = []
        for start in owner.indices where owner[start] >= 0 && !seen[start] {
            var stack = [start], members: [Int] = []
            seen[start] = true
            while let p = stack.popLast() {
                members.append(p)
                let y = p / width, x = p % width
                for (dy, dx) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
                    let ny = y + dy, nx = x + dx
                    guard ny >= 0, ny < height, nx >= 0, nx < width else { continue }
                    let n = ny * width + nx
                    if !seen[n] && owner[n] == owner[start] { seen[n] = true; stack.append(n) }
                }
            }
            out.append((owner[start], members))
        }
        return out
    }

    /// Each of `channels` maps on a `width × height` grid (cell-major: `values[cell * channels + k]`) upsampled
    /// `scale`× bilinearly with half-pixel centres (edges clamped), in the same layout on the fine grid.
    public static func upsampleBilinear(_ values: [Float], channels c: Int, width gw: Int, height gh: Int, scale s: Int) -> [Float] {
        precondition(values.count == gw * gh * c, "\(values.count) values for \(gw)×\(gh) cells × \(c) channels")
        let fw = gw * s, fh = gh * s
        var out = [Float](repeating: 0, count: fw * fh * c)
        for fy in 0..<fh {
            let v = min(max((Float(fy) + 0.5) / Float(s) - 0.5, 0), Float(gh - 1))
            let y0 = Int(v), y1 = min(y0 + 1, gh - 1), ty = v - Float(y0)
            for fx in 0..<fw {
                let u = min(max((Float(fx) + 0.5) / Float(s) - 0.5, 0), Float(gw - 1))
                let x0 = Int(u), x1 = min(x0 + 1, gw - 1), tx = u - Float(x0)
                let a = (y0 * gw + x0) * c, b = (y0 * gw + x1) * c, cc = (y1 * gw + x0) * c, d = (y1 * gw + x1) * c
                let wa = (1 - tx) * (1 - ty), wb = tx * (1 - ty), wc = (1 - tx) * ty, wd = tx * ty
                let o = (fy * fw + fx) * c
                for k in 0..<c { out[o + k] = values[a + k] * wa + values[b + k] * wb + values[cc + k] * wc + values[d + k] * wd }
            }
        }
        return out
    }

    /// The normalised bounding box of a region's cells.
    public static func box(of members: [Int], width: Int, height: Int) -> NormalizedBox {
        guard !members.isEmpty else { return NormalizedBox(x: 0, y: 0, w: 0, h: 0) }
        var x0 = width, y0 = height, x1 = -1, y1 = -1
        for p in members {
            let x = p % width, y = p / width
            x0 = min(x0, x); x1 = max(x1, x); y0 = min(y0, y); y1 = max(y1, y)
        }
        return NormalizedBox(x: Double(x0) / Double(width), y: Double(y0) / Double(height),
                             w: Double(x1 - x0 + 1) / Double(width), h: Double(y1 - y0 + 1) / Double(height))
    }

    /// Greedy NMS: best first; a detection is dropped when it overlaps a kept one of the same class by more than
    /// `iou`, or any kept one by more than `crossClassIoU`.
    public static func nms(_ detections: [CellDetection], iou: Double, crossClassIoU: Double = 1) -> [CellDetection] {
        var kept: [CellDetection] = []
        for d in detections.sorted(by: { $0.confidence > $1.confidence }) {
            let clash = kept.contains { k in
                let o = k.box.iou(d.box)
                return (k.classIndex == d.classIndex && o > iou) || o > crossClassIoU
            }
            if !clash { kept.append(d) }
        }
        return kept
    }
}

/// How the cell detector's probability thresholds make regions.
public enum ThresholdMode: String, Sendable, Codable, Equatable {
    /// Regions at every threshold pooled, then non-maximum suppression.
    case pool
    /// A region replaced by its parts at the next threshold only when it falls apart into two or more there.
    case split
}

/// `models/food-head/cell-head.json`: a softmax over (background + food labels) for every cell of the localisation
/// pass's feature map, with the thresholds that turn its argmax into boxes and how it was trained.
public struct CellHeadModel: Sendable, Codable, Equatable {
    /// Classes: `background` first, then the food labels.
    public var head: SoftmaxHead
    /// A fine cell belongs to its argmax food when that food's probability reaches this.
    public var minProbability: Float = 0.4
    /// When set, regions are taken at each of these thresholds and pooled before NMS (high thresholds split
    /// touching fruits, low ones keep whole dishes); `minProbability` otherwise.
    public var minProbabilities: [Float]?
    /// How regions at several thresholds combine: `pool` (all of them, then NMS) or `split` (a region is replaced
    /// by its parts at the next threshold only when it falls apart into two or more there).
    public var thresholdMode: ThresholdMode = .pool
    /// Regions smaller than this many map cells are dropped.
    public var minCells: Double = 0.5
    /// Probability maps are upsampled this many times (bilinear) before regions are taken.
    public var upsample: Int = 4
    public var nmsIoU: Double = 0.5
    public var crossClassIoU: Double = 0.8
    /// confidence = region probability^(1−w) · whole-photo probability of the label^w (labels the whole-photo head
    /// knows); 0 = the cells alone.
    public var globalWeight: Double = 0
    /// What a photo's answer keeps: regions with at least this confidence …
    public var minConfidence: Double = 0
    /// … that do not lie this much (share of their area) inside a better region of the same label …
    public var containedFraction: Double = 1
    /// … and, when the whole-photo head gives a label the cell head knows at least this probability and the photo
    /// is not a shared plate (`PlateHeadModel`), that label for every region (one kind of food); nil = never.
    public var dominantProbability: Double?
    /// A region's label = argmax over foods of (its cells' mean probability)^(1−w) · (whole-photo probability)^w;
    /// 0 = the cells' own argmax.
    public var labelWeight: Double = 0
    /// A photo whose whole-photo best label is one the cell head cannot name (a dish, most vegetables) is that one
    /// food, over the union of the regions, when the head gives it at least this probability and the photo is not a
    /// shared plate (`PlateHeadModel`).
    public var singleDishProbability: Double = 0.6
    /// The whole photo overrules the most confident region's label (a peach whose cells say apple) when its best
    /// label is one the cell head knows, with at least `overruleProbability`, the photo is not a shared plate, and it
    /// gives the region's label at most `ruledOutProbability`; nil = never. Only the region a person sees first is
    /// renamed, so a second food on the photo keeps its own label.
    public var overruleProbability: Double?
    public var ruledOutProbability: Double = 0.05
    /// A photo whose whole-photo best label is a dish the cell head cannot name, with at least this probability, is
    /// that dish even when the plate head calls it a shared plate (on a thali the head is rarely this sure of one
    /// dish); nil = the plate head decides alone.
    public var confidentDishProbability: Double?
    public var note: String = ""

    public init(head: SoftmaxHead) { self.head = head }

    enum CodingKeys: String, CodingKey {
        case head, note, upsample
        case minProbability = "min_probability", minProbabilities = "min_probabilities", thresholdMode = "threshold_mode", minCells = "min_cells", nmsIoU = "nms_iou", crossClassIoU = "cross_class_iou"
        case globalWeight = "global_weight", minConfidence = "min_confidence", containedFraction = "contained_fraction"
        case dominantProbability = "dominant_probability", labelWeight = "label_weight"
        case singleDishProbability = "single_dish_probability"
        case overruleProbability = "overrule_probability", ruledOutProbability = "ruled_out_probability"
        case confidentDishProbability = "confident_dish_probability"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        head = try c.decode(SoftmaxHead.self, forKey: .head)
        // Missing keys take the property defaults above (one place for them).
        let d = CellHeadModel(head: head)
        minProbability = try c.decodeIfPresent(Float.self, forKey: .minProbability) ?? d.minProbability
        minProbabilities = try c.decodeIfPresent([Float].self, forKey: .minProbabilities)
        thresholdMode = try c.decodeIfPresent(ThresholdMode.self, forKey: .thresholdMode) ?? d.thresholdMode
        minCells = try c.decodeIfPresent(Double.self, forKey: .minCells) ?? d.minCells
        upsample = try c.decodeIfPresent(Int.self, forKey: .upsample) ?? d.upsample
        nmsIoU = try c.decodeIfPresent(Double.self, forKey: .nmsIoU) ?? d.nmsIoU
        crossClassIoU = try c.decodeIfPresent(Double.self, forKey: .crossClassIoU) ?? d.crossClassIoU
        globalWeight = try c.decodeIfPresent(Double.self, forKey: .globalWeight) ?? d.globalWeight
        minConfidence = try c.decodeIfPresent(Double.self, forKey: .minConfidence) ?? d.minConfidence
        containedFraction = try c.decodeIfPresent(Double.self, forKey: .containedFraction) ?? d.containedFraction
        dominantProbability = try c.decodeIfPresent(Double.self, forKey: .dominantProbability)
        labelWeight = try c.decodeIfPresent(Double.self, forKey: .labelWeight) ?? d.labelWeight
        singleDishProbability = try c.decodeIfPresent(Double.self, forKey: .singleDishProbability) ?? d.singleDishProbability
        overruleProbability = try c.decodeIfPresent(Double.self, forKey: .overruleProbability)
        ruledOutProbability = try c.decodeIfPresent(Double.self, forKey: .ruledOutProbability) ?? d.ruledOutProbability
        confidentDishProbability = try c.decodeIfPresent(Double.self, forKey: .confidentDishProbability)
        note = try c.decodeIfPresent(String.self, forKey: .note) ?? d.note
    }
}

/// The per-cell food detector: the cell head as a 1×1 convolution over the feature map, a softmax per cell, and
/// connected regions of the (upsampled) per-cell argmax as boxes.
public struct CellDetector: Sendable {
    public let model: CellHeadModel
    private let conv: PointwiseConv2D
    /// The folded head cut by input channels for the parts of a fused map (`splitting(channels:)`); the bias is in
    /// the first part's.
    private var partConvs: [PointwiseConv2D] = []
    private var partChannels: [Int] = []
    private let folded: (weights: [Float], bias: [Float])
    /// The arithmetic of its convolutions (the recogniser's).
    private let precision: InferencePrecision

    public var classes: [String] { model.head.classes }

    public init(model: CellHeadModel, precision: InferencePrecision = .preferred) throws {
        self.precision = precision
        let head = model.head
        guard head.classes.first == "background", head.classes.count >= 2 else {
            throw FoodVisionError.invalidInput(reason: "cell head classes start with \(head.classes.first ?? "nothing"); expected background first and at least one food")
        }
        guard model.upsample >= 1 else { throw FoodVisionError.invalidInput(reason: "cell head upsample is \(model.upsample); use 1 or more") }
        let c = head.classes.count, d = head.dimension
        var w = [Float](repeating: 0, count: c * d), b = head.bias
        for i in 0..<c {
            var shift: Float = 0
            for k in 0..<d {
                let wk = head.weights[i * d + k] * head.featureScale[k]
                w[i * d + k] = wk
                shift += wk * head.featureMean[k]
            }
            b[i] -= shift
        }
        self.model = model
        folded = (w, b)
        conv = PointwiseConv2D(weightsOI: w, bias: b, inChannels: d, outChannels: c, activation: .none, precision: precision)
    }

    /// This head ready to read a fused map of parts with these channel counts part by part (finest first). They must
    /// add up to the head's width.
    public func splitting(channels: [Int]) throws -> CellDetector {
        let c = classes.count, d = model.head.dimension
        guard channels.reduce(0, +) == d, channels.allSatisfy({ $0 > 0 }) else {
            throw FoodVisionError.invalidInput(reason: "parts of \(channels) channels for a cell head of \(d)")
        }
        var copy = self
        var start = 0
        copy.partConvs = channels.enumerated().map { i, n in
            defer { start += n }
            let w = (0..<c).flatMap { k in folded.weights[(k * d + start)..<(k * d + start + n)] }
            return PointwiseConv2D(weightsOI: w, bias: i == 0 ? folded.bias : [Float](repeating: 0, count: c),
                                   inChannels: n, outChannels: c, activation: .none, precision: precision)
        }
        copy.partChannels = channels
        return copy
    }

    /// `models/food-head/cell-head.json` (or another `file` there), or nil when absent.
    public static func load(modelsDirectory: String, file: String = "cell-head.json",
                            precision: InferencePrecision = .preferred) throws -> CellDetector? {
        let path = modelsDirectory + "/food-head/" + file
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        do {
            return try CellDetector(model: JSONDecoder().decode(CellHeadModel.self, from: data), precision: precision)
        } catch {
            throw FoodVisionError.invalidInput(reason: "cannot read \(path): \(error); retrain it with `foodmoment dev train-cells`")
        }
    }

    /// Per-cell class probabilities (row-major cells × classes) over `features`' grid. A fused map is read part by
    /// part when this head was split for its parts (`splitting(channels:)`), else built first.
    public func probabilities(_ features: CellFeatures) -> [Float] {
        guard case .fused(let parts) = features, parts.map(\.channels) == partChannels, let grid = parts.first else {
            return probabilities(features.materialised())
        }
        var logits = [Float](repeating: 0, count: grid.width * grid.height * classes.count)
        for (part, conv) in zip(parts, partConvs) {
            let own = conv(Tensor(batch: 1, height: part.height, width: part.width, channels: part.channels, values: part.values))
            FusedCellMap.addSampled(FloatImage(width: part.width, height: part.height, channels: classes.count, values: own.values),
                                    toGridOfWidth: grid.width, height: grid.height, into: &logits)
        }
        Self.softmaxInPlace(&logits, classes: classes.count)
        return logits
    }

    /// Per-cell class probabilities (row-major cells × classes).
    public func probabilities(_ map: FloatImage) -> [Float] {
        precondition(map.channels == model.head.dimension, "feature map has \(map.channels) channels, the cell head \(model.head.dimension)")
        var p = conv(Tensor(batch: 1, height: map.height, width: map.width, channels: map.channels, values: map.values)).values
        Self.softmaxInPlace(&p, classes: classes.count)
        return p
    }

    /// Softmax of each cell's logits (cells × `classes`, row-major).
    static func softmaxInPlace(_ p: inout [Float], classes c: Int) {
        let cells = p.count / c
        p.withUnsafeMutableBufferPointer { v in
            for cell in 0..<cells {
                let base = cell * c
                var m = -Float.infinity
                for i in 0..<c { m = max(m, v[base + i]) }
                var s: Float = 0
                for i in 0..<c { let e = expf(v[base + i] - m); v[base + i] = e; s += e }
                let inv = 1 / s
                for i in 0..<c { v[base + i] *= inv }
            }
        }
    }

    /// Mean class probabilities over the cells whose centres lie in `box` (the nearest cell when none does).
    public static func meanProbabilities(_ p: [Float], classes c: Int, width gw: Int, height gh: Int, in box: NormalizedBox) -> [Float] {
        var sum = [Float](repeating: 0, count: c), n = 0
        for y in 0..<gh {
            let cy = (Double(y) + 0.5) / Double(gh)
            guard cy >= box.y, cy <= box.y + box.h else { continue }
            for x in 0..<gw {
                let cx = (Double(x) + 0.5) / Double(gw)
                guard cx >= box.x, cx <= box.x + box.w else { continue }
                for k in 0..<c { sum[k] += p[(y * gw + x) * c + k] }
                n += 1
            }
        }
        if n == 0 {
            let x = min(gw - 1, Int((box.x + box.w / 2) * Double(gw))), y = min(gh - 1, Int((box.y + box.h / 2) * Double(gh)))
            return Array(p[((y * gw + x) * c)..<((y * gw + x + 1) * c)])
        }
        return sum.map { $0 / Float(n) }
    }

    /// Boxes from per-cell probabilities on a `width × height` grid (see `probabilities`).
    public func detect(probabilities p: [Float], width gw: Int, height gh: Int) -> [CellDetection] {
        Self.detect(probabilities: p, classes: classes.count, width: gw, height: gh, upsample: model.upsample,
                    thresholds: model.minProbabilities ?? [model.minProbability], split: model.thresholdMode == .split,
                    minCells: model.minCells, nmsIoU: model.nmsIoU,
                    crossClassIoU: model.crossClassIoU)
    }

    /// The detection rule on its own (class 0 = background): upsample every class map bilinearly, give each fine
    /// cell to its argmax class when that is a food with probability ≥ a threshold, take connected regions (at every
    /// threshold of `thresholds`), drop those under `minCells` map cells, box each, score it by its mean probability,
    /// NMS over all. With `split`, thresholds are a hierarchy instead: a region at one threshold is replaced by its
    /// parts at the next only when it falls apart into two or more there (touching fruits), else kept whole (a dish
    /// with uneven confidence).
    public static func detect(probabilities p: [Float], classes c: Int, width gw: Int, height gh: Int, upsample s: Int,
                              thresholds: [Float], split: Bool = false, minCells: Double, nmsIoU: Double, crossClassIoU: Double) -> [CellDetection] {
        precondition(p.count == gw * gh * c, "probabilities: \(p.count) values for \(gw)×\(gh) cells × \(c) classes")
        let fw = gw * s, fh = gh * s
        let fine = CellRegions.upsampleBilinear(p, channels: c, width: gw, height: gh, scale: s)
        var argmax = [Int](repeating: 0, count: fw * fh)
        var ownerP = [Float](repeating: 0, count: fw * fh)
        for f in 0..<(fw * fh) {
            var best = 0, bestP = -Float.infinity
            for k in 0..<c where fine[f * c + k] > bestP { bestP = fine[f * c + k]; best = k }
            argmax[f] = best; ownerP[f] = bestP
        }
        var found: [CellDetection] = []
        let minFine = max(1, Int((minCells * Double(s * s)).rounded(.up)))
        let levels = split ? thresholds.sorted() : thresholds
        var regions: [[(owner: Int, members: [Int])]] = []
        var regionAt: [[Int]] = []
        for threshold in levels {
            let owner = argmax.indices.map { argmax[$0] != 0 && ownerP[$0] >= threshold ? argmax[$0] : -1 }
            let level = CellRegions.regions(owner: owner, width: fw, height: fh).filter { $0.members.count >= minFine }
            var at = [Int](repeating: -1, count: fw * fh)
            for (k, r) in level.enumerated() { for m in r.members { at[m] = k } }
            regions.append(level); regionAt.append(at)
        }
        func add(_ region: (owner: Int, members: [Int])) {
            let mean = region.members.reduce(Float(0)) { $0 + ownerP[$1] } / Float(region.members.count)
            let d = CellDetection(classIndex: region.owner, confidence: Double(mean),
                                  box: CellRegions.box(of: region.members, width: fw, height: fh), size: region.members.count)
            if !found.contains(d) { found.append(d) }
        }
        func emit(_ level: Int, _ k: Int) {
            if level + 1 < levels.count {
                let parts = regions[level + 1].indices.filter { regionAt[level][regions[level + 1][$0].members[0]] == k }
                if parts.count >= 2 { for part in parts { emit(level + 1, part) }; return }
            }
            add(regions[level][k])
        }
        if split, !levels.isEmpty {
            for k in regions[0].indices { emit(0, k) }
        } else {
            for level in regions { for r in level { add(r) } }
        }
        return CellRegions.nms(found, iou: nmsIoU, crossClassIoU: crossClassIoU)
    }
}
