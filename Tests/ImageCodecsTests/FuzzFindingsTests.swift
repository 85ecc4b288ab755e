import FoodCore
import FoodMomentTestSupport
import ImageCodecs
import Testing

/// Regression tests for what `tools/fuzz/run` found in the decoders (docs/testing.md, "Found and fixed", lists each).
@Suite("Fuzz findings: decoders")
struct FuzzFindingsTests {
    /// png-decode: a 120-byte PNG (the 112-byte artifact plus the signature) whose second chunk is `eXIf` declaring 838,860,826 bytes. libpng allocated the
    /// declared length before reading (800 MB per photo); the shim now refuses a non-IDAT chunk longer than the file.
    @Test func hugeDeclaredAncillaryChunkIsRefusedBeforeLibpngAllocates() {
        let bytes = Self.pngSignature + Self.eXIfBomb
        do throws(ImageCodecError) {
            let d = try ImageDecoder.decode(bytes)
            Issue.record("decoded \(d.image.width)x\(d.image.height) from a 120-byte file")
        } catch {
            guard case .truncated(.png, let detail) = error else { Issue.record("expected truncated PNG, got \(error)"); return }
            #expect(detail.contains("'eXIf'") && detail.contains("838860826"), "\(detail)")
        }
        #expect(throws: ImageCodecError.self) { try ImageDecoder.probe(bytes) }
    }

    /// The same refusal for the largest length the format allows, in a text chunk (libpng buffers those too).
    @Test func maximalTextChunkIsRefused() throws {
        let good = TestPaths.read(TestPaths.fixture("ImageCodecsTests", "rgb.png"))
        let bomb = Self.insertingAfterIHDR(good, Self.chunkHeader(length: 0x7FFF_FFFF, type: "tEXt") + [0x41, 0x00, 0x42])
        let error = #expect(throws: ImageCodecError.self) { try ImageDecoder.decode(bomb) }
        guard case .truncated(.png, let detail)? = error else { Issue.record("expected truncated PNG, got \(String(describing: error))"); return }
        #expect(detail.contains("'tEXt'") && detail.contains("2147483647"), "\(detail)")
    }

    /// The check must not cost real photos anything: a large private chunk that is really there still decodes.
    @Test func largeChunkThatIsPresentStillDecodes() throws {
        let good = TestPaths.read(TestPaths.fixture("ImageCodecsTests", "rgb.png"))
        let payload = [UInt8](repeating: 0x5A, count: 3 << 20)
        let typeAndData = Array("prVt".utf8) + payload
        let chunk = Self.chunkHeader(length: UInt32(payload.count), type: "prVt") + payload + Self.be32(Self.crc32(typeAndData))
        let withChunk = Self.insertingAfterIHDR(good, chunk)
        let reference = try ImageDecoder.decode(good)
        let decoded = try ImageDecoder.decode(withChunk)
        #expect(decoded.image.pixels == reference.image.pixels && decoded.image.width == reference.image.width)
    }

    /// heif-webp-decode: a 1,219-byte HEIC whose primary item is a grid with a 48x32 `ispe` (inside every limit) while the
    /// grid's own data declares a 28009x28005 canvas; and the same with a 31280x32 `ispe` (1 MP, still inside the limit,
    /// and wide enough that a limit on the longest side lets the canvas through). libheif allocated that canvas (2.3 GB)
    /// and then crashed the process. The shim reads each grid's declared canvas and refuses one over the pixel limit
    /// before libheif allocates; under a raised limit, a primary grid declaring more pixels than its header is refused
    /// as corrupt.
    /// A later finding (`grid-canvas-bomb-iloc-index.heic`, a CI fuzz run): the same grid behind a 31280x32 header, its
    /// `iloc` version 1 declaring 4-byte extent indices. libheif 1.15 reads those only in version 2, so it found the grid's
    /// data where the shim, reading as the standard says, did not; the shim now reads `iloc` both ways and takes the
    /// larger canvas. With the pixel limit raised, the side limit (31281) let it through to a 2.3 GB canvas and a crash;
    /// the primary grid may now not declare more pixels than its header. The next one (`grid-canvas-bomb-iloc-sizes.heic`,
    /// found from these seeds in 1 of 17 runs of 15 s): 2-byte offsets, which libheif 1.15 does not read at all (only
    /// 4- and 8-byte fields; any other size is 0) where the shim had given up on the `iloc`; it now reads both ways.
    @Test(arguments: [("grid-canvas-bomb.heic", 1_219), ("grid-canvas-bomb-wide-header.heic", 1_125),
                      ("grid-canvas-bomb-iloc-index.heic", 1_125), ("grid-canvas-bomb-iloc-sizes.heic", 1_118)])
    func gridDeclaringAHugeCanvasIsRefused(file: String, size: Int) throws {
        let bytes = TestPaths.read(TestPaths.fixture("ImageCodecsTests", file))
        #expect(bytes.count == size)
        let error = #expect(throws: ImageCodecError.self) { try ImageDecoder.decode(bytes) }
        guard case .resourceLimit(let detail)? = error else { Issue.record("expected a resource limit, got \(String(describing: error))"); return }
        #expect(detail.contains("28009x28005") && detail.contains("784392045 pixels"), "\(detail)")
    }

    @Test(arguments: [("grid-canvas-bomb.heic", "48x32"), ("grid-canvas-bomb-wide-header.heic", "31280x32"),
                      ("grid-canvas-bomb-iloc-index.heic", "31280x32"), ("grid-canvas-bomb-iloc-sizes.heic", "31280x32")])
    func gridLargerThanItsHeaderUnderARaisedLimitIsCorrupt(file: String, header: String) {
        let bytes = TestPaths.read(TestPaths.fixture("ImageCodecsTests", file))
        do throws(ImageCodecError) {
            let d = try ImageDecoder.decode(bytes, options: DecodeOptions(maxPixels: 1_000_000_000))
            Issue.record("decoded \(d.image.width)x\(d.image.height)")
        } catch {
            guard case .corrupt(.heic, let detail) = error else { Issue.record("expected corrupt HEIC, got \(error)"); return }
            #expect(detail.contains(header) && detail.contains("28009x28005"), "\(detail)")
        }
    }

    /// heif-webp-decode: a 1,100-byte HEIC whose grid lists itself as its own tile (`iref` dimg 2 → 2). libheif 1.15
    /// follows references by recursion without noticing the cycle and overflowed the stack. The shim reads the item
    /// references first and refuses a cycle before libheif sees the file. Two later findings: the same file with the
    /// reference box's size field broken (libheif reads the IDs without using it) and with a second `meta` box after
    /// the first.
    @Test(arguments: [("grid-self-reference.heic", 1_100), ("grid-self-reference-bad-size.heic", 1_100),
                      ("grid-self-reference-second-meta.heic", 2_068)])
    func gridThatIsItsOwnTileIsCorrupt(file: String, size: Int) {
        let bytes = TestPaths.read(TestPaths.fixture("ImageCodecsTests", file))
        #expect(bytes.count == size)
        Self.expectCorruptHEIC(bytes, mentioning: "cycle")
        #expect(throws: ImageCodecError.self) { try ImageDecoder.probe(bytes) }
    }

    /// The same recursion without a cycle: a chain of 40 grids each made of the next one. Real photos nest references
    /// two or three deep; a chain longer than 16 is refused.
    @Test func referencesNestedTooDeeplyAreRefused() throws {
        let bytes = TestPaths.read(TestPaths.fixture("ImageCodecsTests", "grid-self-reference.heic"))
        let chain = try Self.replacingItemReferences(bytes, with: (2..<42).map { (from: UInt16($0), to: UInt16($0 + 1)) })
        Self.expectCorruptHEIC(chain, mentioning: "16 deep")
        // A short chain is not refused for its references (this file then fails for its own reasons, in libheif).
        let short = try Self.replacingItemReferences(bytes, with: [(from: 2, to: 1)])
        do throws(ImageCodecError) { _ = try ImageDecoder.decode(short) } catch {
            #expect(!"\(error)".contains("item references"), "\(error)")
        }
    }

    static func expectCorruptHEIC(_ bytes: [UInt8], mentioning texts: String...) {
        do throws(ImageCodecError) {
            let d = try ImageDecoder.decode(bytes)
            Issue.record("decoded \(d.image.width)x\(d.image.height) from \(bytes.count) bytes")
        } catch {
            guard case .corrupt(.heic, let detail) = error else { Issue.record("expected corrupt HEIC, got \(error)"); return }
            #expect(texts.allSatisfy { detail.contains($0) }, "\(detail)")
        }
    }

    /// The file with its `iref` box replaced by one `dimg` reference per pair (16-bit IDs) and the `meta` box's size
    /// adjusted; nothing else moves inside `meta`, so only the data after it shifts.
    static func replacingItemReferences(_ file: [UInt8], with refs: [(from: UInt16, to: UInt16)]) throws -> [UInt8] {
        func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
        func u32(_ at: Int) -> Int { Int(file[at]) << 24 | Int(file[at + 1]) << 16 | Int(file[at + 2]) << 8 | Int(file[at + 3]) }
        let meta = try #require((0..<file.count - 8).first { Array(file[$0 + 4..<$0 + 8]) == Array("meta".utf8) })
        let iref = try #require((meta..<file.count - 8).first { Array(file[$0 + 4..<$0 + 8]) == Array("iref".utf8) })
        var body: [UInt8] = [0, 0, 0, 0]
        for r in refs { body += be32(14) + Array("dimg".utf8) + be16(r.from) + be16(1) + be16(r.to) }
        let newIref = be32(UInt32(8 + body.count)) + Array("iref".utf8) + body
        let oldIrefSize = u32(iref), oldMetaSize = u32(meta)
        var out = Array(file[..<iref]) + newIref + Array(file[(iref + oldIrefSize)...])
        let newMetaSize = be32(UInt32(oldMetaSize - oldIrefSize + newIref.count))
        out.replaceSubrange(meta..<meta + 4, with: newMetaSize)
        return out
    }

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// tools/fuzz/artifacts/png-decode/oom-e0aa671a… (the harness adds the signature).
    static let eXIfBomb: [UInt8] = [
        0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x30, 0x08, 0x02, 0x00, 0x00,
        0x00, 0xFF, 0xCE, 0xEF, 0x38, 0x32, 0x00, 0x00, 0x1A, 0x65, 0x58, 0x49, 0x66, 0x4D, 0x4D, 0x00, 0x2A, 0x50, 0x4C, 0x54,
        0x45, 0x00, 0x01, 0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x86,
        0x58, 0x30, 0x34, 0x00, 0x00, 0x00, 0x5E, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x94, 0xD3, 0xB8, 0xC4, 0x40, 0xE1,
        0x3F, 0x26, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x92, 0x4C, 0x27, 0x00, 0x52, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00,
        0x00, 0x30, 0x08, 0x02, 0x00, 0x00,
    ]

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func chunkHeader(length: UInt32, type: String) -> [UInt8] { be32(length) + Array(type.utf8) }

    /// Signature (8) + IHDR (4 + 4 + 13 + 4) = 33 bytes, then the inserted chunk.
    static func insertingAfterIHDR(_ png: [UInt8], _ chunk: [UInt8]) -> [UInt8] { Array(png[..<33]) + chunk + Array(png[33...]) }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            c ^= UInt32(b)
            for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        }
        return ~c
    }
}
