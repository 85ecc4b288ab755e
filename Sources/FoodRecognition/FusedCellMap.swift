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
        /// Source index pair and the second's weight for one output coordinate.
        func sample(_ i: Int, _ n: Int, _ m: Int) -> (Int, Int, Float) {
            let s = (Float(i) + 0.5) * Float(m) / Float(n) - 0.5
            let lo = Int(s.rounded(.down))
            return (min(max(lo, 0), m - 1), min(max(lo + 1, 0), m - 1), s - Float(lo))
        }
        var offset = 0
        out.withUnsafeMutableBufferPointer { o in
            for map in maps {
                let (mw, mh, c) = (map.width, map.height, map.channels)
                map.values.withUnsafeBufferPointer { g in
                    for y in 0..<h {
                        let (y0, y1, fy) = sample(y, h, mh)
                        for x in 0..<w {
                            let (x0, x1, fx) = sample(x, w, mw)
                            let base = (y * w + x) * d + offset
                            if mw == w && mh == h {
                                for k in 0..<c { o[base + k] = g[(y * w + x) * c + k] }
                                continue
                            }
                            let w00 = (1 - fx) * (1 - fy), w01 = fx * (1 - fy), w10 = (1 - fx) * fy, w11 = fx * fy
                            let p00 = (y0 * mw + x0) * c, p01 = (y0 * mw + x1) * c, p10 = (y1 * mw + x0) * c, p11 = (y1 * mw + x1) * c
                            for k in 0..<c {
                                o[base + k] = w00 * g[p00 + k] + w01 * g[p01 + k] + w10 * g[p10 + k] + w11 * g[p11 + k]
                            }
                        }
                    }
                }
                offset += c
            }
        }
        return FloatImage(width: w, height: h, channels: d, values: out)
    }
}
