public import FoodCore
import ImageCodecs

/// A corpus of hostile and broken inputs, generated from a good JPEG and PNG so nothing binary is committed.
public enum BadInputs {
    public struct Case: Sendable, CustomStringConvertible {
        public var name: String
        public var bytes: [UInt8]
        /// The error kinds that are acceptable for this input.
        public var expectedKinds: Set<String>
        public var description: String { name }
    }

    /// A 256×192 photo-like JPEG (gradients + noise) so truncation points fall inside real entropy-coded data.
    public static let goodJPEG: [UInt8] = {
        (try? ImageEncoder.jpeg(syntheticPhoto(width: 256, height: 192), quality: 85)) ?? []
    }()

    public static let goodPNG: [UInt8] = {
        (try? ImageEncoder.png(syntheticPhoto(width: 64, height: 48))) ?? []
    }()

    public static func syntheticPhoto(width: Int, height: Int, seed: UInt64 = 42) -> RGBImage {
        var rng = SplitMix64(seed: seed)
        var px = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 3
                let n = Int(rng.next() % 24)
                px[i] = UInt8(min(255, x * 255 / max(1, width - 1) / 2 + n + 60))
                px[i + 1] = UInt8(min(255, y * 255 / max(1, height - 1) / 2 + n + 40))
                px[i + 2] = UInt8(min(255, ((x / 16 + y / 16) % 2) * 120 + n + 20))
            }
        }
        return RGBImage(width: width, height: height, pixels: px)
    }

    public static var all: [Case] {
        var cases: [Case] = []
        cases.append(Case(name: "zero bytes", bytes: [], expectedKinds: ["empty"]))
        var rng = SplitMix64(seed: 7)
        cases.append(Case(name: "random bytes", bytes: (0..<4096).map { _ in UInt8(truncatingIfNeeded: rng.next()) },
                          expectedKinds: ["not_an_image"]))
        cases.append(Case(name: "random bytes after a JPEG signature",
                          bytes: [0xFF, 0xD8, 0xFF] + (0..<4096).map { _ in UInt8(truncatingIfNeeded: rng.next()) },
                          expectedKinds: ["corrupt", "truncated"]))
        cases.append(Case(name: "text file named .jpg", bytes: Array("lunch: rice and curry\n".utf8), expectedKinds: ["not_an_image"]))
        // Truncations at 24 offsets spread over the whole file (headers, tables, entropy data, just before EOI).
        let j = goodJPEG
        let offsets = (1...22).map { j.count * $0 / 23 } + [3, 20, j.count - 2, j.count - 1]
        for off in Set(offsets).sorted() where off > 0 && off < j.count {
            cases.append(Case(name: "JPEG truncated at \(off)/\(j.count)", bytes: Array(j[0..<off]), expectedKinds: ["truncated", "corrupt"]))
        }
        cases.append(Case(name: "JPEG with a corrupted Huffman table", bytes: corruptHuffman(j), expectedKinds: ["corrupt"]))
        cases.append(Case(name: "JPEG header claiming 60000x60000", bytes: jpegWithSize(j, width: 60000, height: 60000), expectedKinds: ["too_large"]))
        let p = goodPNG
        cases.append(Case(name: "PNG with a bad CRC", bytes: pngBadCRC(p), expectedKinds: ["corrupt"]))
        cases.append(Case(name: "PNG with a bad IHDR (bit depth 7)", bytes: pngBadIHDR(p), expectedKinds: ["corrupt"]))
        cases.append(Case(name: "PNG with a truncated IDAT", bytes: pngTruncatedIDAT(p), expectedKinds: ["truncated", "corrupt"]))
        cases.append(Case(name: "PNG header claiming 60000x60000", bytes: pngWithSize(p, width: 60000, height: 60000), expectedKinds: ["too_large"]))
        cases.append(Case(name: "HEIC header, no image", bytes: [0, 0, 0, 0x18] + Array("ftypheic".utf8) + [UInt8](repeating: 0, count: 32),
                          expectedKinds: ["truncated", "corrupt"]))
        cases.append(Case(name: "WebP header, zeros", bytes: Array("RIFF".utf8) + [0x20, 0, 0, 0] + Array("WEBPVP8 ".utf8) + [UInt8](repeating: 0, count: 32),
                          expectedKinds: ["truncated", "corrupt"]))
        cases.append(Case(name: "GIF", bytes: Array("GIF89a".utf8) + [UInt8](repeating: 0, count: 32), expectedKinds: ["unsupported_format"]))
        return cases
    }

    /// Replaces the code-length counts of the first DHT table with impossible values.
    public static func corruptHuffman(_ jpeg: [UInt8]) -> [UInt8] {
        var b = jpeg
        guard let dht = markerOffset(b, 0xC4) else { return b }
        // FF C4 Lh Ll Tc/Th then 16 counts: claim 200 codes of length 1 (more than 2 can exist).
        b[dht + 5] = 200
        return b
    }

    /// Rewrites the SOF0 height/width fields.
    public static func jpegWithSize(_ jpeg: [UInt8], width: Int, height: Int) -> [UInt8] {
        var b = jpeg
        guard let sof = markerOffset(b, 0xC0) ?? markerOffset(b, 0xC2) else { return b }
        b[sof + 5] = UInt8(height >> 8); b[sof + 6] = UInt8(height & 0xFF)
        b[sof + 7] = UInt8(width >> 8); b[sof + 8] = UInt8(width & 0xFF)
        return b
    }

    static func markerOffset(_ b: [UInt8], _ marker: UInt8) -> Int? {
        var i = 2
        while i + 4 <= b.count {
            guard b[i] == 0xFF else { return nil }
            if b[i + 1] == marker { return i }
            if b[i + 1] == 0xDA { return nil }
            i += 2 + (Int(b[i + 2]) << 8 | Int(b[i + 3]))
        }
        return nil
    }

    public static func pngBadCRC(_ png: [UInt8]) -> [UInt8] {
        var b = png
        b[8 + 8 + 12] ^= 0xFF // a byte inside the IHDR CRC
        return b
    }

    public static func pngBadIHDR(_ png: [UInt8]) -> [UInt8] {
        var b = png
        b[8 + 8 + 8] = 7 // bit depth 7 does not exist
        fixCRC(&b, chunkAt: 8)
        return b
    }

    public static func pngWithSize(_ png: [UInt8], width: Int, height: Int) -> [UInt8] {
        var b = png
        for (k, v) in [width, height].enumerated() {
            for s in 0..<4 { b[16 + k * 4 + s] = UInt8((v >> (24 - 8 * s)) & 0xFF) }
        }
        fixCRC(&b, chunkAt: 8)
        return b
    }

    /// Cuts the file in the middle of the first IDAT chunk.
    public static func pngTruncatedIDAT(_ png: [UInt8]) -> [UInt8] {
        var i = 8
        while i + 8 <= png.count {
            let len = Int(png[i]) << 24 | Int(png[i + 1]) << 16 | Int(png[i + 2]) << 8 | Int(png[i + 3])
            if png[i + 4] == 0x49, png[i + 5] == 0x44, png[i + 6] == 0x41, png[i + 7] == 0x54 {
                return Array(png[0..<(i + 8 + len / 2)])
            }
            i += 12 + len
        }
        return Array(png.prefix(png.count / 2))
    }

    static func fixCRC(_ b: inout [UInt8], chunkAt i: Int) {
        let len = Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
        let crc = crc32(b[(i + 4)..<(i + 8 + len)])
        for s in 0..<4 { b[i + 8 + len + s] = UInt8((crc >> (24 - 8 * UInt32(s))) & 0xFF) }
    }

    static func crc32<C: Collection>(_ data: C) -> UInt32 where C.Element == UInt8 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in data {
            c ^= UInt32(byte)
            for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        }
        return c ^ 0xFFFF_FFFF
    }
}
