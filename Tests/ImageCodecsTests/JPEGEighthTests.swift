import FoodCore
import FoodMomentTestSupport
import Foundation
@testable import ImageCodecs
import Testing

/// Our 1/8 decoder for baseline 4:2:0 JPEGs against libjpeg-turbo's 1/8 decode of the same bytes: the same pixels
/// wherever it decodes, and it declines (so libjpeg-turbo decodes) whatever it does not handle or libjpeg-turbo
/// would warn about.
@Suite struct JPEGEighthTests {
    /// Every JPEG of `../shared/data` (phone photos, dataset photos in many sizes and Huffman tables) and the fixtures
    /// it should take: decoded, and identical to libjpeg-turbo's output.
    static var photos: [String] {
        var files = ["baseline.jpg", "restart.jpg"].map { TestPaths.fixture("ImageCodecsTests", $0) }
        files += (try? FileManager.default.contentsOfDirectory(atPath: TestPaths.repoRoot + "/samples"))?
            .filter { $0.hasSuffix(".jpg") }.sorted().map { TestPaths.repoRoot + "/samples/" + $0 } ?? []
        guard TestPaths.hasSharedData else { return files }
        let all = FileManager.default.enumerator(atPath: TestPaths.sharedData)?.compactMap { $0 as? String }
            .filter { $0.lowercased().hasSuffix(".jpg") && !$0.hasSuffix("hot_dog.jpg") }.sorted() ?? []
        // The 12 MP phone photos, then every fourth of the rest (about 2,100 files, a few seconds).
        let big = all.filter { $0.hasPrefix("bench/") }
        return files + (big + all.enumerated().filter { $0.offset % 4 == 0 && !$0.element.hasPrefix("bench/") }.map(\.element))
            .map { TestPaths.sharedData + "/" + $0 }
    }

    @Test func decodesBaseline420PhotosExactlyAsLibjpegTurbo() {
        var checked = 0
        for path in Self.photos {
            let bytes = TestPaths.read(path)
            guard let reference = JPEGEighthDecoders.libjpeg(bytes) else { Issue.record("libjpeg-turbo cannot read \(path)"); continue }
            #expect(reference.clean, "\(path): libjpeg-turbo warned")
            guard let fast = JPEGEighthDecoders.fast(bytes) else { Issue.record("declined \(path)"); continue }
            if fast != reference.pixels {
                let differing = zip(fast, reference.pixels).filter { $0 != $1 }.count
                Issue.record("\(path): \(differing) of \(fast.count) values differ from libjpeg-turbo")
            }
            checked += 1
        }
        #expect(checked >= (TestPaths.hasSharedData ? 2000 : 5), "only \(checked) photos checked")
    }

    @Test(arguments: ["progressive.jpg", "gray.jpg", "cmyk.jpg", "444.jpg", "orientation_1.jpg"])
    func declinesOtherKindsOfJPEG(_ name: String) throws {
        let bytes = TestPaths.read(TestPaths.fixture("ImageCodecsTests", name))
        #expect(JPEGEighthDecoders.fast(bytes) == nil)
        // … which the product then decodes with libjpeg-turbo.
        let decoded = try ImageDecoder.decode(bytes, options: DecodeOptions(minShortSide: 1, applyOrientation: false))
        #expect(decoded.scaleNumerator == 1 && decoded.image.pixels == JPEGEighthDecoders.libjpeg(bytes)?.pixels)
    }

    /// Sizes that leave partial blocks and MCUs at the right and bottom edges, down to 1x1, and several qualities
    /// (other quantisation tables).
    @Test func oddSizesAndQualities() throws {
        var rng = TestRandom(seed: 8)
        for (w, h, q) in [(1, 1, 90), (17, 9, 75), (37, 23, 95), (64, 48, 50), (100, 3, 88), (129, 131, 20), (8, 200, 100)] {
            var pixels = [UInt8](repeating: 0, count: w * h * 3)
            for y in 0..<h { for x in 0..<w { for c in 0..<3 {
                pixels[(y * w + x) * 3 + c] = UInt8(truncatingIfNeeded: (x * 7 + y * 3 + c * 50) + Int(rng.next() % 40))
            } } }
            let jpeg = try ImageEncoder.jpeg(RGBImage(width: w, height: h, pixels: pixels), quality: q)
            let reference = try #require(JPEGEighthDecoders.libjpeg(jpeg))
            let fast = try #require(JPEGEighthDecoders.fast(jpeg), "declined \(w)x\(h) q\(q)")
            #expect(fast == reference.pixels, "\(w)x\(h) q\(q)")
        }
    }

    /// The chroma 2x2 IDCT runs on SSE2; photos rarely reach the integer widths where libjpeg-turbo's SIMD arithmetic
    /// wraps or saturates, so the vector version is checked against the scalar formula (which the photos above tie to
    /// libjpeg-turbo) on blocks that do: every 16-bit coefficient and quantiser, and their extremes.
    @Test func vectorIDCTEqualsTheScalarFormula() {
        #expect(JPEGEighthDecoders.idctMismatches(seed: 2026, blocks: 400_000) == 0)
        #expect(JPEGEighthDecoders.idctMismatches(seed: 0x9E37_79B9_7F4A_7C15, blocks: 400_000) == 0)
    }

    /// Differential check on damaged files (flipped, deleted and inserted bytes, truncation, 0xFF bytes, in the
    /// headers and the entropy-coded data): whenever our decoder accepts a file, libjpeg-turbo decodes it without a
    /// warning to the same pixels. Some mutations must still be accepted, or the check would be empty.
    @Test func damagedFilesNeverDisagree() throws {
        let seeds = try ["baseline.jpg", "restart.jpg"].map { TestPaths.read(TestPaths.fixture("ImageCodecsTests", $0)) }
            + [ImageEncoder.jpeg(RGBImage(width: 70, height: 45, fill: (200, 120, 40)), quality: 80)]
        var rng = TestRandom(seed: 2024)
        var accepted = 0, declined = 0
        for round in 0..<3000 {
            var bytes = seeds[round % seeds.count]
            let at = Int(rng.next() % UInt64(bytes.count))
            switch rng.next() % 5 {
            case 0: bytes[at] ^= UInt8(1 << (rng.next() % 8))
            case 1: bytes.remove(at: at)
            case 2: bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: at)
            case 3: bytes[at] = 0xFF
            default: bytes.removeLast(Int(rng.next() % UInt64(min(40, bytes.count))))
            }
            guard let fast = JPEGEighthDecoders.fast(bytes) else { declined += 1; continue }
            accepted += 1
            let reference = try #require(JPEGEighthDecoders.libjpeg(bytes), "libjpeg-turbo cannot read a file we decoded")
            #expect(reference.clean, "round \(round): we decoded a file libjpeg-turbo warns about")
            #expect(fast == reference.pixels, "round \(round): pixels differ")
        }
        #expect(accepted > 100 && declined > 100, "accepted \(accepted), declined \(declined)")
    }
}
