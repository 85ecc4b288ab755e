public import FoodCore

/// The cell detector's map made from the whole-photo pass alone: the pass's finest tapped block output (stride 8:
/// 28×28 cells at 224 px) with its coarser block outputs and its last feature map (stride 32, 7×7×1280) sampled onto
/// the same cells and appended. The fine channels say where an edge or a coin is, the coarse ones what the food is. It
/// costs a few resamplings instead of a second backbone pass at 448 px.
public enum FusedCellMap {
    /// `maps` of one input, the first on the finest grid (w × h); the result is w × h × (the channels of all), each
    /// cell `[maps[0] | maps[1] sampled at the cell's centre | …]` (bilinear, half-pixel centres, edges clamped).
    public static func make(_ maps: [FloatImage]) -> FloatImage {
        guard let grid = maps.first else { return FloatImage(width: 0, height: 0, channels: 0, values: []) }
        let (w, h) = (grid.width, grid.height)
        let d = maps.reduce(0) { $0 + $1.channels }
        var out = [Float](repeating: 0, count: w * h * d)
        var offset = 0
        for map in maps {
            let c = map.channels
            var sampled = [Float](repeating: 0, count: w * h * c)
            addSampled(map, toGridOfWidth: w, height: h, into: &sampled)
            for cell in 0..<(w * h) {
                out.replaceSubrange((cell * d + offset)..<(cell * d + offset + c), with: sampled[(cell * c)..<((cell + 1) * c)])
            }
            offset += c
        }
        return FloatImage(width: w, height: h, channels: d, values: out)
    }
}

extension FusedCellMap {
    /// Adds `map` (any grid) bilinearly sampled at the centres of a `width × height` grid (same channels) to `out`:
    /// the sampling of `make`. Sampling is linear with weights summing to 1, so a linear head over a fused map equals
    /// the sum of the head's parts over the parts, each sampled after the head: the detector and the coin finder
    /// compute it that way (`CellFeatures`).
    public static func addSampled(_ map: FloatImage, toGridOfWidth w: Int, height h: Int, into out: inout [Float]) {
        let (mw, mh, c) = (map.width, map.height, map.channels)
        precondition(out.count == w * h * c, "\(out.count) values for \(w)×\(h)×\(c)")
        func sample(_ i: Int, _ n: Int, _ m: Int) -> (Int, Int, Float) {
            let s = (Float(i) + 0.5) * Float(m) / Float(n) - 0.5
            let lo = Int(s.rounded(.down))
            return (min(max(lo, 0), m - 1), min(max(lo + 1, 0), m - 1), s - Float(lo))
        }
        map.values.withUnsafeBufferPointer { g in
            out.withUnsafeMutableBufferPointer { o in
                for y in 0..<h {
                    let (y0, y1, fy) = sample(y, h, mh)
                    for x in 0..<w {
                        let (x0, x1, fx) = sample(x, w, mw)
                        let base = (y * w + x) * c
                        let w00 = (1 - fx) * (1 - fy), w01 = fx * (1 - fy), w10 = (1 - fx) * fy, w11 = fx * fy
                        let p00 = (y0 * mw + x0) * c, p01 = (y0 * mw + x1) * c, p10 = (y1 * mw + x0) * c, p11 = (y1 * mw + x1) * c
                        for k in 0..<c {
                            o[base + k] += w00 * g[p00 + k] + w01 * g[p01 + k] + w10 * g[p10 + k] + w11 * g[p11 + k]
                        }
                    }
                }
            }
        }
    }
}

/// What the cell detector and the coin finder read: one feature map, or the parts of a fused one (finest first),
/// which they read part by part without building it (`FusedCellMap.addSampled`).
public enum CellFeatures: Sendable {
    case map(FloatImage)
    case fused([FloatImage])

    /// The cell grid.
    public var width: Int {
        switch self { case .map(let m): m.width; case .fused(let parts): parts.first?.width ?? 0 }
    }
    public var height: Int {
        switch self { case .map(let m): m.height; case .fused(let parts): parts.first?.height ?? 0 }
    }
    public var channels: Int {
        switch self { case .map(let m): m.channels; case .fused(let parts): parts.reduce(0) { $0 + $1.channels } }
    }

    /// The map itself (the fused one built): what heads are trained on.
    public func materialised() -> FloatImage {
        switch self { case .map(let m): m; case .fused(let parts): FusedCellMap.make(parts) }
    }
}

