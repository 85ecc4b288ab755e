public import FoodCore

/// A rectangle of whole pixels: columns `x ..< x + width`, rows `y ..< y + height`. May lie partly or wholly
/// outside an image; drawing clips it.
public struct PixelRect: Sendable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }

    /// The pixels a normalised box covers in a `imageWidth × imageHeight` image: each edge is rounded to the
    /// nearest pixel boundary (`x0 = round(x · W)`, `x1 = round((x + w) · W)`), so neighbouring boxes share edges.
    public init(_ box: NormalizedBox, imageWidth: Int, imageHeight: Int) {
        func edge(_ v: Double, _ size: Int) -> Int {
            let p = v * Double(size)
            guard p.isFinite else { return 0 }
            return Int(max(-1e9, min(1e9, p)).rounded())
        }
        let x0 = edge(box.x, imageWidth), x1 = edge(box.x + box.w, imageWidth)
        let y0 = edge(box.y, imageHeight), y1 = edge(box.y + box.h, imageHeight)
        self.init(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }

    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    public func contains(x px: Int, y py: Int) -> Bool {
        px >= x && px < maxX && py >= y && py < maxY
    }

    /// The pixels in both rectangles (empty, at `x, y` of self, when they do not overlap).
    public func intersection(_ other: PixelRect) -> PixelRect {
        let x0 = max(x, other.x), y0 = max(y, other.y)
        let x1 = min(maxX, other.maxX), y1 = min(maxY, other.maxY)
        guard x1 > x0, y1 > y0 else { return PixelRect(x: x, y: y, width: 0, height: 0) }
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    public func intersects(_ other: PixelRect) -> Bool { !intersection(other).isEmpty }

    /// True when `other` lies wholly inside this rectangle.
    public func contains(_ other: PixelRect) -> Bool {
        other.x >= x && other.y >= y && other.maxX <= maxX && other.maxY <= maxY
    }

    /// The smallest rectangle holding both (an empty one counts as nothing).
    public func union(_ other: PixelRect) -> PixelRect {
        if isEmpty { return other }
        if other.isEmpty { return self }
        let x0 = min(x, other.x), y0 = min(y, other.y)
        return PixelRect(x: x0, y: y0, width: max(maxX, other.maxX) - x0, height: max(maxY, other.maxY) - y0)
    }

    /// Shrunk by `d` pixels on every side (grown when `d` is negative).
    public func insetBy(_ d: Int) -> PixelRect {
        PixelRect(x: x + d, y: y + d, width: max(0, width - 2 * d), height: max(0, height - 2 * d))
    }

    public func offsetBy(dx: Int, dy: Int) -> PixelRect { PixelRect(x: x + dx, y: y + dy, width: width, height: height) }

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}
