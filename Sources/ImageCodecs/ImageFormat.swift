/// Image container formats recognised from their first bytes (never from the file name).
public enum ImageFormat: String, Sendable, Codable, CaseIterable {
    case jpeg, png, heic, avif, webp, gif, bmp, tiff, jpegXL = "jpeg-xl"

    /// Formats we decode; the others get a clear "unsupported" error with a conversion hint.
    public var isSupported: Bool { [.jpeg, .png, .heic, .avif, .webp].contains(self) }

    public var displayName: String {
        switch self {
        case .jpeg: "JPEG"
        case .png: "PNG"
        case .heic: "HEIC"
        case .avif: "AVIF"
        case .webp: "WebP"
        case .gif: "GIF"
        case .bmp: "BMP"
        case .tiff: "TIFF"
        case .jpegXL: "JPEG XL"
        }
    }

    /// How to turn an unsupported file into one we read.
    public var conversionHint: String {
        switch self {
        case .jpegXL: "convert with `djxl photo.jxl photo.png` (apt libjxl-tools)"
        case .gif, .bmp, .tiff: "convert with `convert photo.\(rawValue) photo.png` (apt imagemagick)"
        case .jpeg, .png, .heic, .avif, .webp: ""
        }
    }

    /// Identifies the format from magic bytes; `nil` when the bytes are not an image we know.
    public static func sniff<Bytes: RandomAccessCollection>(_ bytes: Bytes) -> ImageFormat? where Bytes.Element == UInt8, Bytes.Index == Int {
        let b = bytes
        let n = b.count
        func at(_ i: Int) -> UInt8 { b[b.startIndex + i] }
        func matches(_ sig: [UInt8], at offset: Int = 0) -> Bool {
            guard n >= offset + sig.count else { return false }
            for (i, v) in sig.enumerated() where at(offset + i) != v { return false }
            return true
        }
        if matches([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if matches(Array("GIF87a".utf8)) || matches(Array("GIF89a".utf8)) { return .gif }
        if matches(Array("RIFF".utf8)) && matches(Array("WEBP".utf8), at: 8) { return .webp }
        if matches([0x49, 0x49, 0x2A, 0x00]) || matches([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if matches(Array("BM".utf8)) && n >= 26 { return .bmp }
        if matches([0xFF, 0x0A]) || matches([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) { return .jpegXL }
        if matches(Array("ftyp".utf8), at: 4), n >= 12 {
            let brand = String(decoding: (8..<12).map(at), as: UTF8.self)
            if ["avif", "avis"].contains(brand) { return .avif }
            if ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"].contains(brand) { return .heic }
        }
        return nil
    }
}
