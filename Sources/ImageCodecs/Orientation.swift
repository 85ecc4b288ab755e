public import FoodCore

extension RGBImage {
    /// The image as it should be displayed for the given EXIF orientation (stored grid → upright).
    public func applying(_ orientation: ExifOrientation) -> RGBImage {
        if orientation == .up { return self }
        let w = width, h = height
        let outW = orientation.swapsAxes ? h : w
        let outH = orientation.swapsAxes ? w : h
        var out = [UInt8](repeating: 0, count: pixels.count)
        pixels.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                for y in 0..<outH {
                    for x in 0..<outW {
                        // Source coordinate (sx, sy) in the stored grid for display coordinate (x, y).
                        let sx: Int, sy: Int
                        switch orientation {
                        case .up: sx = x; sy = y
                        case .upMirrored: sx = w - 1 - x; sy = y
                        case .down: sx = w - 1 - x; sy = h - 1 - y
                        case .downMirrored: sx = x; sy = h - 1 - y
                        case .leftMirrored: sx = y; sy = x
                        case .right: sx = y; sy = h - 1 - x
                        case .rightMirrored: sx = w - 1 - y; sy = h - 1 - x
                        case .left: sx = w - 1 - y; sy = x
                        }
                        let s = (sy * w + sx) * 3
                        let d = (y * outW + x) * 3
                        dst[d] = src[s]; dst[d + 1] = src[s + 1]; dst[d + 2] = src[s + 2]
                    }
                }
            }
        }
        return RGBImage(width: outW, height: outH, pixels: out)
    }
}
