import Foundation

/// An opaque 8-bit sRGB colour.
public struct RGBColor: Sendable, Hashable, CustomStringConvertible {
    public var r: UInt8
    public var g: UInt8
    public var b: UInt8

    public init(r: UInt8, g: UInt8, b: UInt8) {
        self.r = r; self.g = g; self.b = b
    }

    /// Parses `#RRGGBB` or `#RGB` (the leading `#` is optional), as the `color` field of `labels.json`.
    public init(hex text: String) throws(RenderingError) {
        var digits = Substring(text.trimmingSpaces)
        if digits.hasPrefix("#") { digits = digits.dropFirst() }
        let values = digits.compactMap(\.hexDigitValue)
        guard values.count == digits.count else { throw .invalidColor(text) }
        switch values.count {
        case 6:
            self.init(r: UInt8(values[0] * 16 + values[1]), g: UInt8(values[2] * 16 + values[3]),
                      b: UInt8(values[4] * 16 + values[5]))
        case 3:
            self.init(r: UInt8(values[0] * 17), g: UInt8(values[1] * 17), b: UInt8(values[2] * 17))
        default:
            throw .invalidColor(text)
        }
    }

    /// `#rrggbb`.
    public var hex: String {
        let digits = Array("0123456789abcdef")
        var s = "#"
        for v in [r, g, b] { s.append(digits[Int(v >> 4)]); s.append(digits[Int(v & 15)]) }
        return s
    }

    public var description: String { hex }

    /// WCAG relative luminance, 0 (black) … 1 (white): picks dark or light text over this colour.
    public var luminance: Double {
        func linear(_ v: UInt8) -> Double {
            let c = Double(v) / 255
            return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
        }
        return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
    }

    /// Black or white, whichever reads better on this colour.
    public var contrastingText: RGBColor {
        // Contrast against white is (1.05) / (L + 0.05); against black (L + 0.05) / 0.05. They cross at L ≈ 0.179.
        luminance > 0.179 ? RGBColor(r: 0x16, g: 0x16, b: 0x16) : .white
    }

    public static let white = RGBColor(r: 255, g: 255, b: 255)
    public static let black = RGBColor(r: 0, g: 0, b: 0)
    /// For foods whose colour is missing or unreadable.
    public static let neutral = RGBColor(r: 0x88, g: 0x88, b: 0x88)
}

extension String {
    var trimmingSpaces: Substring {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s = s.dropFirst() }
        while s.last?.isWhitespace == true { s = s.dropLast() }
        return s
    }
}
