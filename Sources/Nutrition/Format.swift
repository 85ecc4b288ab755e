/// The on-disk layout of `nutrition-db/nutrition.fmdb` (all integers little-endian, floats IEEE-754 binary32).
///
/// ```
/// 0   "FMNUTDB1"                     magic
/// 8   UInt32 format version, UInt32 nutrient count
/// 16  8 × (UInt32 offset, UInt32 count) section table:
///     strings (count = bytes), foods, portions, products, tokens, postings, zh pairs, product extras
/// 80  sections, each 8-byte aligned
/// ```
/// * string: UInt16 byte length + UTF-8 bytes; a string reference is its offset (0 = the empty string)
/// * food (128 B), sorted by (source, id): UInt64 id, UInt8 source, UInt8 flags, UInt16 portion count,
///   UInt32 name, UInt32 category, UInt32 first portion, UInt32 alias text, UInt32 search key,
///   UInt8 head length, 3 × UInt8 0, 23 × Float32 per 100 g
/// * portion (12 B): Float32 amount, Float32 grams, UInt32 description
/// * product (40 B), sorted by GTIN-14: UInt64 gtin, UInt32 name, UInt32 search key, UInt32 extra index
///   (0xFFFFFFFF = none), UInt8 source, UInt8 flags, UInt8 head length, UInt8 0, 8 × UInt16 per 100 g in
///   `Nutrient.core` order, fixed point: kcal × 10, grams × 100, sodium mg × 1 (0xFFFF = not reported)
/// * product extra (12 B): UInt32 brand, UInt32 serving text, Float32 serving grams (most products have none)
/// * search key: the name's folded, plural-stemmed tokens joined by spaces ("apple raw with skin");
///   head length = bytes of the tokens before the first comma ("apple"), for "exact head" matches
/// * token (12 B), sorted by bytes: UInt32 string, UInt32 first posting, UInt32 posting count
/// * posting: UInt32 entry (foods are 0..<foodCount, products foodCount + i), ascending per token
/// * zh pair (8 B), sorted by zh bytes: UInt32 zh string, UInt32 English string
/// NaN = nutrient not reported.
package enum Format {
    package static let magic: [UInt8] = Array("FMNUTDB1".utf8)
    package static let version: UInt32 = 1
    package static let fileName = "nutrition.fmdb"
    /// The same file gzip-compressed, as the package ships it (`PackedTables`).
    package static let packedFileName = "nutrition.fmdb.gz"
    package static let labelsFileName = "labels.json"
    package static let headerSize = 80
    package static let sectionCount = 8

    package enum Section: Int { case strings, foods, portions, products, tokens, postings, zhPairs, productExtras }

    package static let foodStride = 36 + 4 * 23
    package static let portionStride = 12
    package static let productStride = 24 + 2 * 8
    package static let productExtraStride = 12
    /// Fixed-point scale of the product nutrients (`Nutrient.core` order).
    package static let productScale: [Float] = [10, 100, 100, 100, 100, 100, 100, 1]
    package static let tokenStride = 12
    package static let zhStride = 8

    package static let foodFlagAtwaterEnergy: UInt8 = 1
    package static let foodFlagNoEnergy: UInt8 = 2
    package static let productFlagEnergyFromMacros: UInt8 = 1
}

/// Appends little-endian values to a growing byte array.
package struct ByteWriter {
    package var bytes: [UInt8] = []

    package init() {}

    package mutating func u8(_ v: UInt8) { bytes.append(v) }
    package mutating func u16(_ v: UInt16) { bytes.append(UInt8(v & 0xFF)); bytes.append(UInt8(v >> 8)) }
    package mutating func u32(_ v: UInt32) { for s in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8((v >> UInt32(s)) & 0xFF)) } }
    package mutating func u64(_ v: UInt64) { for s in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8((v >> UInt64(s)) & 0xFF)) } }
    package mutating func f32(_ v: Float) { u32(v.isNaN ? 0x7FC0_0000 : v.bitPattern) }
    package mutating func align8() { while bytes.count % 8 != 0 { bytes.append(0) } }
    package mutating func patch32(at offset: Int, _ v: UInt32) {
        for k in 0..<4 { bytes[offset + k] = UInt8((v >> UInt32(8 * k)) & 0xFF) }
    }
}

/// Deduplicating string table: the same text is stored once.
package struct StringTable {
    package var writer = ByteWriter()
    private var index: [String: UInt32] = [:]

    package init() { writer.u16(0) } // offset 0: the empty string

    package mutating func ref(_ s: String) -> UInt32 {
        if s.isEmpty { return 0 }
        if let r = index[s] { return r }
        var utf8 = Array(s.utf8)
        if utf8.count > Int(UInt16.max) { utf8 = Array(utf8.prefix(Int(UInt16.max))) }
        let r = UInt32(writer.bytes.count)
        writer.u16(UInt16(utf8.count))
        writer.bytes.append(contentsOf: utf8)
        index[s] = r
        return r
    }
}

/// Read-only accessors over the loaded file bytes (bounds were validated once at load time).
struct RawView {
    let base: UnsafeRawBufferPointer

    @inline(__always) func u8(_ o: Int) -> UInt8 { base[o] }
    @inline(__always) func u16(_ o: Int) -> UInt16 { UInt16(littleEndian: base.loadUnaligned(fromByteOffset: o, as: UInt16.self)) }
    @inline(__always) func u32(_ o: Int) -> UInt32 { UInt32(littleEndian: base.loadUnaligned(fromByteOffset: o, as: UInt32.self)) }
    @inline(__always) func u64(_ o: Int) -> UInt64 { UInt64(littleEndian: base.loadUnaligned(fromByteOffset: o, as: UInt64.self)) }
    @inline(__always) func f32(_ o: Int) -> Float { Float(bitPattern: u32(o)) }
}
