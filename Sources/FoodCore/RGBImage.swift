/// An 8-bit RGB image, rows top to bottom, pixels interleaved `R G B R G B …`, no padding between rows.
///
/// Every decoder in FoodMoment produces this one shape so later stages never branch on colour models.
public struct RGBImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    /// `width * height * 3` bytes.
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width >= 0 && height >= 0 && pixels.count == width * height * 3, "RGBImage: pixel count does not match \(width)x\(height)")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// A solid-colour image.
    public init(width: Int, height: Int, fill: (UInt8, UInt8, UInt8) = (0, 0, 0)) {
        var px = [UInt8](repeating: 0, count: width * height * 3)
        for i in stride(from: 0, to: px.count, by: 3) {
            px[i] = fill.0; px[i + 1] = fill.1; px[i + 2] = fill.2
        }
        self.init(width: width, height: height, pixels: px)
    }

    public var pixelCount: Int { width * height }

    /// The pixel at column `x`, row `y`.
    public subscript(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        get {
            let i = (y * width + x) * 3
            return (pixels[i], pixels[i + 1], pixels[i + 2])
        }
        set {
            let i = (y * width + x) * 3
            pixels[i] = newValue.r; pixels[i + 1] = newValue.g; pixels[i + 2] = newValue.b
        }
    }
}

/// A dense `height × width × channels` Float image (HWC, interleaved), the input shape of the CNN.
public struct FloatImage: Sendable, Equatable {
    public let width: Int
    public let height: Int
    public let channels: Int
    public var values: [Float]

    public init(width: Int, height: Int, channels: Int, values: [Float]) {
        precondition(values.count == width * height * channels, "FloatImage: value count does not match shape")
        self.width = width
        self.height = height
        self.channels = channels
        self.values = values
    }
}
