import FoodCore
import FoodMomentTestSupport
import Foundation
import ImageCodecs
import Testing

/// Our decode must be pixel-identical to libjpeg-turbo's own `djpeg` (apt libjpeg-turbo-progs), full size
/// and at every DCT scale.
@Suite("Pixel-exact against djpeg")
struct DjpegParityTests {
    static let djpeg = ["/usr/bin/djpeg", "/usr/local/bin/djpeg"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static var files: [String] {
        var f = ["baseline.jpg", "progressive.jpg", "gray.jpg", "restart.jpg", "444.jpg"].map { TestPaths.fixture("ImageCodecsTests", $0) }
        if TestPaths.hasSharedData {
            f += ["weights/hot_dog.jpg", "bench/bench_12mp_3.jpg"].map { TestPaths.sharedData + "/" + $0 }
        }
        return f
    }

    @Test func djpegIsInstalled() {
        #expect(Self.djpeg != nil, "djpeg not found: install libjpeg-turbo-progs (the test script does)")
    }

    @Test(arguments: files, [8, 4, 2, 1, 3])
    func matchesDjpeg(_ path: String, _ scale: Int) throws {
        guard let djpeg = Self.djpeg else { return }
        let header = try ImageDecoder.probe(TestPaths.read(path))
        let short = min(header.width, header.height)
        var args = ["-rgb", "-pnm"]
        if scale != 8 { args += ["-scale", "\(scale)/8"] }
        let result = try runProcess(djpeg, args + [path])
        #expect(result.status == 0)
        let reference = try #require(parsePNM(result.stdoutBytes))
        let scaled = try ImageDecoder.decodeFile(
            atPath: path, options: DecodeOptions(minShortSide: scale == 8 ? nil : (short * scale + 7) / 8, applyOrientation: false))
        #expect(scaled.scaleNumerator == scale || short < 16)
        guard scaled.scaleNumerator == scale else { return }
        #expect(scaled.image.width == reference.width && scaled.image.height == reference.height)
        #expect(scaled.image.pixels == reference.rgb, "\(path) at \(scale)/8 differs from djpeg")
    }
}
