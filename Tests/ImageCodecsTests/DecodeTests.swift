import FoodCore
import FoodMomentTestSupport
import Foundation
import ImageCodecs
import Testing

private func fixture(_ name: String) -> String { TestPaths.fixture("ImageCodecsTests", name) }

private func decode(_ name: String, _ options: DecodeOptions = .init()) throws -> DecodedImage {
    try ImageDecoder.decodeFile(atPath: fixture(name), options: options)
}

/// The test card: red top-left, green top-right, blue bottom-left, yellow bottom-right, white bar at the top-left.
private let cardColours: [(x: Int, y: Int, rgb: (Int, Int, Int))] = [
    (8, 10, (220, 30, 30)), (36, 10, (30, 200, 40)), (8, 26, (30, 40, 210)), (36, 26, (240, 220, 20)), (4, 1, (255, 255, 255)),
]

private func expectCard(_ img: RGBImage, tolerance: Int, gray: Bool = false, bottomRight: (Int, Int, Int)? = nil,
                        sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(img.width == 48 && img.height == 32, "size \(img.width)x\(img.height)", sourceLocation: sourceLocation)
    guard img.width == 48 && img.height == 32 else { return }
    for (index, probe) in cardColours.enumerated() {
        var want = probe.rgb
        if index == 3, let br = bottomRight { want = br }
        if gray {
            let g = (want.0 * 299 + want.1 * 587 + want.2 * 114) / 1000
            want = (g, g, g)
        }
        let got = img[probe.x, probe.y]
        let diff = max(abs(Int(got.r) - want.0), abs(Int(got.g) - want.1), abs(Int(got.b) - want.2))
        #expect(diff <= tolerance, "pixel (\(probe.x),\(probe.y)) = \(got), want \(want)", sourceLocation: sourceLocation)
    }
}

@Suite("Decoding every JPEG and PNG variant to RGB8")
struct VariantTests {
    @Test(arguments: ["baseline.jpg", "progressive.jpg", "restart.jpg", "444.jpg"])
    func colourJPEG(_ name: String) throws {
        let d = try decode(name)
        #expect(d.format == .jpeg)
        #expect(d.warnings.isEmpty)
        expectCard(d.image, tolerance: 16)
    }

    @Test func grayscaleJPEG() throws {
        expectCard(try decode("gray.jpg").image, tolerance: 8, gray: true)
    }

    @Test func cmykJPEGWithAdobeMarker() throws {
        expectCard(try decode("cmyk.jpg").image, tolerance: 24)
    }

    @Test(arguments: ["rgb.png", "interlaced.png", "rgb16.png", "palette.png"])
    func colourPNG(_ name: String) throws {
        let d = try decode(name)
        #expect(d.format == .png)
        expectCard(d.image, tolerance: 0)
    }

    @Test(arguments: ["gray.png", "gray_alpha.png"])
    func grayPNG(_ name: String) throws {
        expectCard(try decode(name).image, tolerance: 1, gray: true)
    }

    @Test(arguments: ["rgba.png", "rgba_interlaced.png", "palette_trns.png"])
    func alphaIsCompositedOnWhite(_ name: String) throws {
        expectCard(try decode(name).image, tolerance: 0, bottomRight: (255, 255, 255))
    }

    @Test func formatComesFromContentNotName() throws {
        let dir = TestPaths.makeTempDirectory()
        let misnamed = dir + "/actually-a-png.jpg"
        try Data(TestPaths.read(fixture("rgb.png"))).write(to: URL(fileURLWithPath: misnamed))
        let d = try ImageDecoder.decodeFile(atPath: misnamed)
        #expect(d.format == .png)
        expectCard(d.image, tolerance: 0)
    }
}

@Suite("EXIF orientation: every value comes out upright")
struct OrientationTests {
    @Test(arguments: 1...8)
    func pngFixture(_ n: Int) throws {
        let d = try decode("orientation_\(n).png")
        #expect(d.exif.orientation.rawValue == n)
        let upright = try decode("rgb.png").image
        #expect(d.image == upright, "orientation \(n) is not upright")
    }

    @Test(arguments: 1...8)
    func jpegFixture(_ n: Int) throws {
        let d = try decode("orientation_\(n).jpg")
        #expect(d.exif.orientation.rawValue == n)
        expectCard(d.image, tolerance: 16)
    }

    @Test func orientationCanBeLeftAlone() throws {
        let d = try decode("orientation_6.jpg", DecodeOptions(applyOrientation: false))
        #expect(d.image.width == 32 && d.image.height == 48)
        #expect(d.uprightFullSize == (48, 32))
    }

    @Test func hostileExifIsIgnoredNotFatal() throws {
        // An APP1 Exif segment whose IFD offset points far outside the segment.
        var bytes = TestPaths.read(fixture("baseline.jpg"))
        let tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0x7F, 0xFF, 0xFF, 0xF0]
        let payload: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        bytes.insert(contentsOf: [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload, at: 2)
        let d = try ImageDecoder.decode(bytes)
        #expect(d.exif.orientation == .up)
        expectCard(d.image, tolerance: 16)
    }
}

@Suite("DCT-scaled decode")
struct ScaledDecodeTests {
    @Test func smallestScaleStillAtLeastTheTarget() {
        #expect(ImageDecoder.dctScaleNumerator(width: 4032, height: 3024, minShortSide: 224) == 1) // 378 >= 224
        #expect(ImageDecoder.dctScaleNumerator(width: 1000, height: 800, minShortSide: 224) == 3)  // 300; 2/8 gives 200
        #expect(ImageDecoder.dctScaleNumerator(width: 300, height: 200, minShortSide: 224) == 8)   // never upscale
        #expect(ImageDecoder.dctScaleNumerator(width: 448, height: 448, minShortSide: 224) == 4)   // exactly 224
        #expect(ImageDecoder.dctScaleNumerator(width: 4032, height: 3024, minShortSide: nil) == 8)
        for short in stride(from: 17, through: 3000, by: 37) {
            let n = ImageDecoder.dctScaleNumerator(width: short * 2, height: short, minShortSide: 224)
            if short >= 224 {
                #expect((short * n + 7) / 8 >= 224)
                if n > 1 { #expect((short * (n - 1) + 7) / 8 < 224) }
            }
        }
    }

    @Test func decodesAtTheChosenScale() throws {
        let photo = BadInputs.syntheticPhoto(width: 1000, height: 800)
        let jpeg = try ImageEncoder.jpeg(photo, quality: 80)
        let d = try ImageDecoder.decode(jpeg, options: DecodeOptions(minShortSide: 224))
        #expect(d.scaleNumerator == 3)
        #expect(d.image.width == 375 && d.image.height == 300)
        #expect(d.storedWidth == 1000 && d.storedHeight == 800)
    }
}

@Suite("Limits are checked before allocation and are configurable")
struct LimitTests {
    @Test func pixelLimit() throws {
        #expect(throws: ImageCodecError.tooLarge(width: 48, height: 32, limit: 1000)) {
            try decode("baseline.jpg", DecodeOptions(maxPixels: 1000))
        }
        #expect(throws: ImageCodecError.tooLarge(width: 48, height: 32, limit: 1000)) {
            try decode("rgb.png", DecodeOptions(maxPixels: 1000))
        }
    }

    @Test func fileByteLimit() throws {
        let size = TestPaths.read(fixture("baseline.jpg")).count
        #expect(throws: ImageCodecError.fileTooLarge(bytes: size, limit: 100)) {
            try decode("baseline.jpg", DecodeOptions(maxFileBytes: 100))
        }
    }

    @Test func damagedDataCanBeAcceptedExplicitly() throws {
        let j = BadInputs.goodJPEG
        let cut = Array(j[0..<(j.count * 2 / 3)])
        #expect(throws: ImageCodecError.self) { try ImageDecoder.decode(cut) }
        let d = try ImageDecoder.decode(cut, options: DecodeOptions(acceptDamagedData: true))
        #expect(d.image.width == 256 && d.image.height == 192)
        #expect(!d.warnings.isEmpty)
    }
}

/// HEIC/AVIF through libheif and WebP through libwebp: fixtures made by tools/fixtures/make_heif_webp_fixtures.py with
/// Debian's heif-enc and cwebp.
@Suite("HEIC, AVIF and WebP")
struct HeifWebPTests {
    @Test(arguments: [("card.heic", ImageFormat.heic), ("card.avif", .avif), ("card.webp", .webp), ("card-lossless.webp", .webp)])
    func decodesTheCard(_ name: String, _ format: ImageFormat) throws {
        let d = try decode(name)
        #expect(d.format == format)
        #expect(d.storedWidth == 48 && d.storedHeight == 32 && d.scaleNumerator == 8 && !d.fromThumbnail)
        // Lossy codecs at q90 on a 48x32 card with sharp colour edges: within a few levels away from the edges.
        expectCard(d.image, tolerance: name.contains("lossless") ? 0 : 24)
    }

    @Test(arguments: ["card-dated.heic", "card-dated.webp"])
    func captureTimeComesFromTheirExif(_ name: String) throws {
        let d = try decode(name)
        #expect(d.exif.dateTimeOriginal == "2026:11:20 12:34:56")
        #expect(d.exif.offsetTimeOriginal == "+08:00")
        let probe = try ImageDecoder.probe(TestPaths.read(fixture(name)))
        #expect(probe.exif.dateTimeOriginal == "2026:11:20 12:34:56" && probe.width == 48 && probe.height == 32)
    }

    /// A HEIF's rotation is its container's (irot/imir, applied by libheif); an EXIF Orientation tag inside is not
    /// applied on top (heif-enc copied orientation 6 from the JPEG without rotating: the stored 32x48 grid comes back).
    @Test func exifOrientationInsideHEICIsNotAppliedAgain() throws {
        let d = try decode("card-rotated.heic")
        #expect(d.exif.orientation == .up)
        #expect(d.image.width == 32 && d.image.height == 48)
    }

    @Test func aScaledDecodeReadsTheEmbeddedThumbnail() throws {
        let full = try decode("card-thumb.heic")
        #expect(full.image.width == 192 && full.image.height == 128 && !full.fromThumbnail)
        let small = try decode("card-thumb.heic", DecodeOptions(minShortSide: 48))
        #expect(small.fromThumbnail && small.image.width == 96 && small.image.height == 64)
        #expect(small.storedWidth == 192 && small.storedHeight == 128)
        // Too small a thumbnail for the size asked: the full image.
        #expect(!(try decode("card-thumb.heic", DecodeOptions(minShortSide: 100))).fromThumbnail)
    }

    @Test func aScaledWebPDecodeIsSmaller() throws {
        let d = try decode("card.webp", DecodeOptions(minShortSide: 16))
        #expect(d.scaleNumerator == 4 && d.image.width == 24 && d.image.height == 16)
    }

    @Test(arguments: ["card.heic", "card.webp", "card.avif"])
    func limitsComeFirst(_ name: String) throws {
        #expect(throws: ImageCodecError.tooLarge(width: 48, height: 32, limit: 1000)) {
            try decode(name, DecodeOptions(maxPixels: 1000))
        }
    }

    /// Every prefix of the files: a typed error (truncated or corrupt) with a one-line message, never a crash.
    @Test(arguments: ["card.heic", "card-thumb.heic", "card.webp", "card-dated.webp", "card.avif"])
    func truncatedFilesAreClearErrors(_ name: String) throws {
        let bytes = TestPaths.read(fixture(name))
        for length in stride(from: 1, to: bytes.count, by: max(1, bytes.count / 97)) {
            do {
                _ = try ImageDecoder.decode(Array(bytes.prefix(length)))
                // A few prefixes of a HEIC still hold the whole primary image (the thumbnail comes last).
            } catch {
                #expect(["truncated", "corrupt", "not_an_image"].contains(error.kind), "\(name)[..<\(length)]: \(error)")
                #expect(!error.description.contains("\n"))
            }
        }
    }
}
