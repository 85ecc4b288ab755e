/// A box normalised to the image: `x, y` is the top-left corner, `w, h` the size, all in 0…1.
public struct NormalizedBox: Sendable, Hashable, Codable {
    public var x: Double
    public var y: Double
    public var w: Double
    public var h: Double

    public init(x: Double, y: Double, w: Double, h: Double) {
        self.x = x; self.y = y; self.w = w; self.h = h
    }

    public static let whole = NormalizedBox(x: 0, y: 0, w: 1, h: 1)

    public var area: Double { max(0, w) * max(0, h) }

    /// The area both boxes cover (0 when they do not overlap).
    public func intersectionArea(_ other: NormalizedBox) -> Double {
        let ix = max(0, min(x + w, other.x + other.w) - max(x, other.x))
        let iy = max(0, min(y + h, other.y + other.h) - max(y, other.y))
        return ix * iy
    }

    /// The smallest box holding both.
    public func union(_ other: NormalizedBox) -> NormalizedBox {
        let x0 = min(x, other.x), y0 = min(y, other.y)
        let x1 = max(x + w, other.x + other.w), y1 = max(y + h, other.y + other.h)
        return NormalizedBox(x: x0, y: y0, w: x1 - x0, h: y1 - y0)
    }

    /// Intersection over union with another box (0 when they do not overlap).
    public func iou(_ other: NormalizedBox) -> Double {
        let inter = intersectionArea(other)
        let union = area + other.area - inter
        return union > 0 ? inter / union : 0
    }

    /// The same box clipped to the unit square.
    public var clipped: NormalizedBox {
        let x0 = min(max(x, 0), 1), y0 = min(max(y, 0), 1)
        let x1 = min(max(x + w, 0), 1), y1 = min(max(y + h, 0), 1)
        return NormalizedBox(x: x0, y: y0, w: x1 - x0, h: y1 - y0)
    }
}

/// EXIF orientation (TIFF tag 274): how the stored pixel grid must be transformed to display upright.
public enum ExifOrientation: Int, Sendable, Codable, CaseIterable {
    case up = 1              // as stored
    case upMirrored = 2      // mirror left-right
    case down = 3            // rotate 180°
    case downMirrored = 4    // mirror top-bottom
    case leftMirrored = 5    // transpose (mirror along the main diagonal)
    case right = 6           // rotate 90° clockwise to display
    case rightMirrored = 7   // transverse (mirror along the anti-diagonal)
    case left = 8            // rotate 90° counter-clockwise to display

    /// True when the displayed image has width and height swapped relative to the stored grid.
    public var swapsAxes: Bool { rawValue >= 5 }

    public var description: String {
        switch self {
        case .up: "1 (upright)"
        case .upMirrored: "2 (mirrored)"
        case .down: "3 (rotated 180°)"
        case .downMirrored: "4 (mirrored vertically)"
        case .leftMirrored: "5 (transposed)"
        case .right: "6 (rotate 90° CW)"
        case .rightMirrored: "7 (transverse)"
        case .left: "8 (rotate 90° CCW)"
        }
    }
}
