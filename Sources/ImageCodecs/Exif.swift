public import FoodCore

/// The EXIF fields FoodMoment uses: orientation (to show photos upright) and capture time (for the diary).
public struct ExifInfo: Sendable, Equatable, Codable {
    public var orientation: ExifOrientation = .up
    /// `DateTimeOriginal` as written by the camera, `YYYY:MM:DD HH:MM:SS` (local time of the camera).
    public var dateTimeOriginal: String?
    /// `OffsetTimeOriginal`, e.g. `+08:00`, when the camera wrote it.
    public var offsetTimeOriginal: String?

    public init(orientation: ExifOrientation = .up, dateTimeOriginal: String? = nil, offsetTimeOriginal: String? = nil) {
        self.orientation = orientation
        self.dateTimeOriginal = dateTimeOriginal
        self.offsetTimeOriginal = offsetTimeOriginal
    }
}

/// A bounds-checked reader for the EXIF block of JPEG (APP1 "Exif") and PNG (`eXIf` chunk) files.
///
/// Hostile files are expected: every offset is checked, IFD entry counts and the number of IFDs visited are
/// capped, and anything malformed simply yields the defaults (EXIF is advisory; the pixels decide success).
public enum ExifReader {
    /// Largest EXIF payload we look at (a JPEG APP1 segment cannot exceed 64 KiB; PNG eXIf can, so cap it).
    public static let maxPayloadBytes = 1 << 20

    public static func read(jpeg bytes: UnsafeBufferPointer<UInt8>) -> ExifInfo {
        guard let tiff = jpegExifPayload(bytes) else { return ExifInfo() }
        return parseTIFF(UnsafeBufferPointer(rebasing: tiff))
    }

    public static func read(png bytes: UnsafeBufferPointer<UInt8>) -> ExifInfo {
        var offset = 8
        let n = bytes.count
        while offset + 8 <= n {
            let length = Int(be32(bytes, offset))
            let type = (bytes[offset + 4], bytes[offset + 5], bytes[offset + 6], bytes[offset + 7])
            let dataStart = offset + 8
            guard length >= 0, length <= n - dataStart else { break }
            if type == (0x65, 0x58, 0x49, 0x66) { // "eXIf"
                guard length <= maxPayloadBytes else { break }
                return parseTIFF(UnsafeBufferPointer(rebasing: bytes[dataStart..<(dataStart + length)]))
            }
            if type == (0x49, 0x45, 0x4E, 0x44) { break } // IEND
            offset = dataStart + length + 4
        }
        return ExifInfo()
    }

    /// A HEIF Exif item: a 4-byte big-endian offset to the TIFF header, then the TIFF data.
    public static func read(heifExifBlock b: UnsafeBufferPointer<UInt8>) -> ExifInfo {
        guard b.count >= 12, b.count <= maxPayloadBytes + 4 else { return ExifInfo() }
        let start = 4 + Int(be32(b, 0))
        guard start >= 4, start < b.count - 8 else { return ExifInfo() }
        return parseTIFF(UnsafeBufferPointer(rebasing: b[start...]))
    }

    /// A WebP RIFF container's `EXIF` chunk (TIFF data, sometimes after an "Exif\0\0" prefix).
    public static func read(webp b: UnsafeBufferPointer<UInt8>) -> ExifInfo {
        guard b.count >= 12 else { return ExifInfo() }
        var offset = 12
        var chunks = 0
        while offset + 8 <= b.count, chunks < 64 {
            let length = Int(UInt32(b[offset + 4]) | UInt32(b[offset + 5]) << 8 | UInt32(b[offset + 6]) << 16 | UInt32(b[offset + 7]) << 24)
            let dataStart = offset + 8
            guard length <= b.count - dataStart else { break }
            if b[offset] == 0x45, b[offset + 1] == 0x58, b[offset + 2] == 0x49, b[offset + 3] == 0x46 { // "EXIF"
                guard length <= maxPayloadBytes else { break }
                var payload = b[dataStart..<(dataStart + length)]
                if length >= 6, payload.starts(with: [0x45, 0x78, 0x69, 0x66, 0, 0]) { payload = payload.dropFirst(6) }
                return parseTIFF(UnsafeBufferPointer(rebasing: payload))
            }
            offset = dataStart + length + (length & 1)
            chunks += 1
        }
        return ExifInfo()
    }

    /// Finds the TIFF block inside the first APP1 "Exif\0\0" segment, stopping at the first scan.
    static func jpegExifPayload(_ b: UnsafeBufferPointer<UInt8>) -> Slice<UnsafeBufferPointer<UInt8>>? {
        let n = b.count
        guard n >= 4, b[0] == 0xFF, b[1] == 0xD8 else { return nil }
        var i = 2
        var segments = 0
        while i + 4 <= n, segments < 256 {
            guard b[i] == 0xFF else { return nil }
            let marker = b[i + 1]
            if marker == 0xFF { i += 1; continue }                  // fill byte
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { i += 2; continue }
            if marker == 0xDA || marker == 0xD9 { return nil }       // start of scan / end of image
            let length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            guard length >= 2, i + 2 + length <= n else { return nil }
            if marker == 0xE1, length >= 8,
               b[i + 4] == 0x45, b[i + 5] == 0x78, b[i + 6] == 0x69, b[i + 7] == 0x66, b[i + 8] == 0, b[i + 9] == 0 {
                return b[(i + 10)..<(i + 2 + length)]
            }
            i += 2 + length
            segments += 1
        }
        return nil
    }

    static func parseTIFF(_ t: UnsafeBufferPointer<UInt8>) -> ExifInfo {
        var info = ExifInfo()
        let n = t.count
        guard n >= 8 else { return info }
        let little: Bool
        if t[0] == 0x49, t[1] == 0x49 { little = true } else if t[0] == 0x4D, t[1] == 0x4D { little = false } else { return info }
        func u16(_ o: Int) -> Int? {
            guard o >= 0, o + 2 <= n else { return nil }
            return little ? Int(t[o]) | Int(t[o + 1]) << 8 : Int(t[o]) << 8 | Int(t[o + 1])
        }
        func u32(_ o: Int) -> Int? {
            guard o >= 0, o + 4 <= n else { return nil }
            let b0 = Int(t[o]), b1 = Int(t[o + 1]), b2 = Int(t[o + 2]), b3 = Int(t[o + 3])
            return little ? b0 | b1 << 8 | b2 << 16 | b3 << 24 : b0 << 24 | b1 << 16 | b2 << 8 | b3
        }
        func ascii(entry e: Int) -> String? {
            guard let type = u16(e + 2), type == 2, let count = u32(e + 4), count > 0, count <= 64 else { return nil }
            let start = count <= 4 ? e + 8 : (u32(e + 8) ?? -1)
            guard start >= 0, start + count <= n else { return nil }
            var bytes = Array(t[start..<(start + count)])
            while let last = bytes.last, last == 0 { bytes.removeLast() }
            guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }
        guard u16(2) == 42, let ifd0 = u32(4) else { return info }
        var exifIFD: Int?
        // IFD0
        if let count = u16(ifd0), count <= 512 {
            for k in 0..<count {
                let e = ifd0 + 2 + k * 12
                guard let tag = u16(e) else { break }
                switch tag {
                case 0x0112:
                    if let type = u16(e + 2), type == 3, let v = u16(e + 8), let o = ExifOrientation(rawValue: v) {
                        info.orientation = o
                    }
                case 0x8769:
                    exifIFD = u32(e + 8)
                case 0x0132:
                    if info.dateTimeOriginal == nil { info.dateTimeOriginal = ascii(entry: e) }
                default:
                    break
                }
            }
        }
        if let exif = exifIFD, exif != ifd0, let count = u16(exif), count <= 512 {
            for k in 0..<count {
                let e = exif + 2 + k * 12
                guard let tag = u16(e) else { break }
                if tag == 0x9003, let s = ascii(entry: e) { info.dateTimeOriginal = s }
                if tag == 0x9011, let s = ascii(entry: e) { info.offsetTimeOriginal = s }
            }
        }
        return info
    }

    private static func be32(_ b: UnsafeBufferPointer<UInt8>, _ o: Int) -> UInt32 {
        UInt32(b[o]) << 24 | UInt32(b[o + 1]) << 16 | UInt32(b[o + 2]) << 8 | UInt32(b[o + 3])
    }
}
