internal import CGzip
internal import FoodCore
package import Foundation

/// The tables as we ship them: `nutrition.fmdb.gz`, gzip of `nutrition.fmdb` (13 MB in git instead of 32 MB).
///
/// Look-ups need the plain file mapped, so the first process to load a packed file inflates it once into a cache
/// folder, under a name made from the gzip trailer's CRC-32 and length, and later processes map that copy. The name
/// changes whenever the packed file does, so a stale copy is never used; the copy is written to a temporary name and
/// renamed, so a reader never sees half of one. Where no cache folder can be written, the inflated bytes serve this
/// process from memory and the next one inflates again.
package enum PackedTables {
    /// The trailer of a gzip file: CRC-32 and length (mod 2³²) of the uncompressed bytes.
    struct Trailer: Equatable { var crc: UInt32; var length: Int }

    /// More than any nutrition table we build (32 MB); a trailer claiming more is refused before allocating.
    static let maximumLength = 1 << 30

    /// The cached copy's file name for a packed file with this trailer.
    static func cacheName(_ t: Trailer) -> String {
        "nutrition-" + String(t.crc, radix: 16).leftPadded(to: 8) + "-\(t.length).fmdb"
    }

    /// The database bytes of the packed file `gz`: the cached copy in `cacheDirectory` when there is one of the right
    /// length (and `useCache`), else inflated now and saved there for the next process. No folder: inflated, not saved.
    static func bytes(of gz: URL, cacheDirectory: URL?, useCache: Bool = true) throws(NutritionError) -> (bytes: Data, fromCache: Bool) {
        let trailer = try readTrailer(gz)
        let cached = cacheDirectory?.appendingPathComponent(cacheName(trailer))
        if useCache, let cached, fileSize(atPath: cached.path) == trailer.length,
           let mapped = try? Data(contentsOf: cached, options: .alwaysMapped), mapped.count == trailer.length {
            return (mapped, true)
        }
        var data = Data(count: trailer.length)
        var message = [CChar](repeating: 0, count: 256)
        let produced = data.withUnsafeMutableBytes { out in
            fm_gunzip(gz.path, out.baseAddress, out.count, &message, message.count)
        }
        guard produced >= 0 else {
            throw .databaseCorrupt(path: gz.path, reason: text(of: message))
        }
        guard Int(produced) == trailer.length else {
            throw .databaseCorrupt(path: gz.path, reason: "inflates to \(produced) bytes, but its trailer says \(trailer.length) (truncated or rewritten?)")
        }
        // Best effort: an unwritable cache costs the next process one inflate, nothing else.
        if let cacheDirectory, let cached {
            try? FileManager.default.createDirectory(at: cacheDirectory, withIntermediateDirectories: true)
            try? data.write(to: cached, options: .atomic)
        }
        return (data, false)
    }

    /// Writes `bytes` as a packed table file at `url` (gzip level 9; equal bytes give an equal file with one zlib).
    package static func write(_ bytes: [UInt8], to url: URL) throws(NutritionError) {
        var message = [CChar](repeating: 0, count: 256)
        let status = bytes.withUnsafeBytes { fm_gzip(url.path, $0.baseAddress, $0.count, 9, &message, message.count) }
        guard status == 0 else {
            throw .outputUnwritable(path: url.path, reason: text(of: message))
        }
    }

    /// Inflates a packed file whole, for tools and tests that compare contents (no cache involved).
    package static func unpack(_ gz: URL) throws(NutritionError) -> Data {
        try bytes(of: gz, cacheDirectory: nil, useCache: false).bytes
    }

    static func readTrailer(_ gz: URL) throws(NutritionError) -> Trailer {
        guard let handle = try? FileHandle(forReadingFrom: gz) else {
            throw .databaseCorrupt(path: gz.path, reason: "unreadable")
        }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()).map(Int.init) ?? 0
        // 10-byte header, at least 2 bytes of deflate data, 8-byte trailer.
        guard size >= 20 else {
            throw .databaseCorrupt(path: gz.path, reason: "the file is \(size) bytes, too short for gzip (truncated?)")
        }
        guard (try? handle.seek(toOffset: 0)) != nil, let magic = try? handle.read(upToCount: 2), magic == Data([0x1f, 0x8b]) else {
            throw .databaseCorrupt(path: gz.path, reason: "not a gzip file (no 1f 8b magic)")
        }
        guard (try? handle.seek(toOffset: UInt64(size - 8))) != nil, let tail = try? handle.read(upToCount: 8), tail.count == 8 else {
            throw .databaseCorrupt(path: gz.path, reason: "cannot read its last 8 bytes")
        }
        let b = [UInt8](tail)
        let crc = UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
        let length = Int(UInt32(b[4]) | UInt32(b[5]) << 8 | UInt32(b[6]) << 16 | UInt32(b[7]) << 24)
        // Deflate expands at most 1,032 times (258 bytes per 2-bit code), so a trailer claiming more than that of this
        // file is damage: refused before the bytes are allocated, not after inflating into them.
        let most = min(maximumLength, size * 1032)
        guard length >= Format.headerSize, length <= most else {
            throw .databaseCorrupt(path: gz.path, reason: "its gzip trailer gives \(length) bytes unpacked, outside \(Format.headerSize)...\(most) (the most \(size) bytes of gzip can hold; truncated or not a nutrition database?)")
        }
        return Trailer(crc: crc, length: length)
    }

    /// The text a C call left in its NUL-terminated message buffer.
    private static func text(of message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
