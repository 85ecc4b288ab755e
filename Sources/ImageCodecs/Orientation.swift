public import FoodCore

extension RGBImage {
    /// The image as it should be displayed for the given EXIF orientation (stored grid → upright).
    ///
    /// Every orientation is an affine map from display (x, y) to stored (sx, sy); the copy walks the output in
    /// 64×64 tiles with precomputed source strides so rotations stay cache-friendly on 12 MP photos.
    public func applying(_ orientation: ExifOrientation) -> RGBImage {
        if orientation == .up { return self }
        let w = width, h = height
        let outW = orientation.swapsAxes ? h : w
        let outH = orientation.swapsAxes ? w : h
        // sx = ax*x + bx*y + cx ; sy = ay*x + by*y + cy
        let (ax, bx, cx, ay, by, cy): (Int, Int, Int, Int, Int, Int)
        switch orientation {
        case .up: (ax, bx, cx, ay, by, cy) = (1, 0, 0, 0, 1, 0)
        case .upMirrored: (ax, bx, cx, ay, by, cy) = (-1, 0, w - 1, 0, 1, 0)
        case .down: (ax, bx, cx, ay, by, cy) = (-1, 0, w - 1, 0, -1, h - 1)
        case .downMirrored: (ax, bx, cx, ay, by, cy) = (1, 0, 0, 0, -1, h - 1)
        case .leftMirrored: (ax, bx, cx, ay, by, cy) = (0, 1, 0, 1, 0, 0)
        case .right: (ax, bx, cx, ay, by, cy) = (0, 1, 0, -1, 0, h - 1)
        case .rightMirrored: (ax, bx, cx, ay, by, cy) = (0, -1, w - 1, -1, 0, h - 1)
        case .left: (ax, bx, cx, ay, by, cy) = (0, -1, w - 1, 1, 0, 0)
        }
        let stepX = (ay * w + ax) * 3          // source step for x + 1
        let stepY = (by * w + bx) * 3          // source step for y + 1
        let origin = (cy * w + cx) * 3
        let tile = 64
        let out = [UInt8](unsafeUninitializedCapacity: pixels.count) { dst, count in
            pixels.withUnsafeBufferPointer { src in
                let s = src.baseAddress!, d = dst.baseAddress!
                var ty = 0
                while ty < outH {
                    let yEnd = min(ty + tile, outH)
                    var tx = 0
                    while tx < outW {
                        let xEnd = min(tx + tile, outW)
                        for y in ty..<yEnd {
                            var si = origin + y * stepY + tx * stepX
                            var di = (y * outW + tx) * 3
                            for _ in tx..<xEnd {
                                d[di] = s[si]; d[di + 1] = s[si + 1]; d[di + 2] = s[si + 2]
                                si += stepX
                                di += 3
                            }
                        }
                        tx = xEnd
                    }
                    ty = yEnd
                }
            }
            count = pixels.count
        }
        return RGBImage(width: outW, height: outH, pixels: out)
    }
}
