import FoodMomentTestSupport
import ImageCodecs
import Testing

/// The per-image time budget stops libjpeg (progress monitor) and libpng (row callback) from inside the C
/// library and comes back as a typed error; a generous budget changes nothing.
@Suite struct TimeBudgetTests {
    @Test(arguments: ["baseline.jpg", "progressive.jpg", "rgb.png", "interlaced.png", "rgba.png"])
    func anExhaustedBudgetStopsTheDecode(_ name: String) {
        let bytes = TestPaths.read(TestPaths.fixture("ImageCodecsTests", name))
        #expect(!bytes.isEmpty)
        var options = DecodeOptions()
        options.timeBudget = .nanoseconds(1)
        do {
            _ = try ImageDecoder.decode(bytes, options: options)
            Issue.record("\(name): decoded despite a 1 ns budget")
        } catch {
            #expect(error.kind == "resource_limit")
            #expect(error.description.contains("time budget"), "\(error)")
        }
    }

    @Test(arguments: ["baseline.jpg", "progressive.jpg", "rgb.png", "interlaced.png"])
    func aGenerousBudgetDecodesTheSamePixels(_ name: String) throws {
        let bytes = TestPaths.read(TestPaths.fixture("ImageCodecsTests", name))
        var options = DecodeOptions()
        let plain = try ImageDecoder.decode(bytes, options: options)
        options.timeBudget = .seconds(600)
        let budgeted = try ImageDecoder.decode(bytes, options: options)
        #expect(plain.image == budgeted.image)
    }
}
