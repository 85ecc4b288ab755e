import Barcodes
import FoodCore
import Testing

/// Generated symbols: every format, rotated, scaled, blurred and noisy, must read exactly; noise and stripes
/// must read as nothing.
@Suite struct ScannerTests {
    static func render(_ code: GTIN, moduleWidth: Double = 2.5, angle: Double = 0, blur: Double = 0, noise: Double = 0,
                       seed: UInt64 = 1) throws -> RGBImage {
        let modules = try #require(BarcodeEncoder.modules(for: code))
        return SyntheticBarcode(modules: modules, moduleWidth: moduleWidth, heightModules: 35, angle: angle,
                                blurSigma: blur, noise: noise, seed: seed).render()
    }

    @Test(arguments: ["4006381333931", "041196133066", "96385074", "04252614", "12345610", "5449000039231"])
    func readsUprightSymbols(text: String) throws {
        let code = text == "04252614" || text == "12345610" ? try GTIN(format: .upcE, digits: text) : try GTIN.parse(text)
        let found = BarcodeScanner.scan(try Self.render(code))
        try #require(found.count == 1, "expected exactly \(code), got \(found.map(\.code))")
        #expect(found[0].code == code)
        #expect(found[0].gtin14 == code.gtin14)
        #expect(found[0].scanLines >= 2)
        #expect(abs(found[0].angleDegrees) < 4 || abs(found[0].angleDegrees - 360) < 4)
        // The symbol sits in the middle of the rendered image, and its footprint inside it.
        let image = try Self.render(code)
        #expect(abs(found[0].center.x - Double(image.width) / 2) < 0.1 * Double(image.width))
        #expect(abs(found[0].center.y - Double(image.height) / 2) < 0.2 * Double(image.height))
        let box = found[0].bounds
        #expect(box.x >= 0 && box.y >= 0 && box.x + box.w <= 1.0001 && box.y + box.h <= 1.0001 && box.area > 0)
    }

    @Test func reportsOnlyTheRequestedFormats() throws {
        let image = try Self.render(try GTIN.parse("4006381333931"))
        var options = BarcodeScanner.Options()
        options.formats = [.ean8, .upcE]
        #expect(BarcodeScanner(options: options).scan(image).isEmpty)
        options.formats = [.ean13]
        #expect(BarcodeScanner(options: options).scan(image).map(\.digits) == ["4006381333931"])
        // A UPC-A symbol (an EAN-13 with a leading 0) is reported in its 12-digit UPC-A form.
        let upc = try Self.render(try GTIN.parse("041196133066"))
        options.formats = [.upcA]
        #expect(BarcodeScanner(options: options).scan(upc).map(\.code) == [try GTIN.parse("041196133066")])
    }

    /// Random codes of each format at angles all round the circle, with blur and noise.
    @Test(arguments: [BarcodeFormat.ean13, .upcA, .ean8, .upcE])
    func readsAtAnyRotation(format: BarcodeFormat) throws {
        var rng = SplitMix64(seed: 42 &+ UInt64(format.digitCount))
        for angle in [17.0, 63, 90, 131, 180, 208, 271, 333] {
            let code = randomCode(format, &rng)
            let image = try Self.render(code, moduleWidth: 2.5, angle: angle, blur: 0.8, noise: 10, seed: rng.next())
            let found = BarcodeScanner.scan(image)
            #expect(found.map(\.code) == [code], "\(code) at \(angle)°")
            if let hit = found.first {
                // Reading direction follows the symbol's rotation (within the scan-line angle step).
                let diff = abs(((hit.angleDegrees - angle).truncatingRemainder(dividingBy: 360) + 540)
                    .truncatingRemainder(dividingBy: 360) - 180)
                #expect(diff < 10, "reading direction \(hit.angleDegrees)° for a symbol rotated \(angle)°")
            }
        }
    }

    @Test(arguments: [(1.6, 0.0), (2.0, 0.6), (3.0, 1.5), (4.0, 2.2), (6.0, 1.0)])
    func readsAcrossScalesAndBlur(moduleWidth: Double, blur: Double) throws {
        let code = try GTIN.parse("5012345678900")
        let image = try Self.render(code, moduleWidth: moduleWidth, angle: 7, blur: blur, noise: 6)
        #expect(BarcodeScanner.scan(image).map(\.code) == [code])
    }

    @Test func findsTwoSymbolsInOneImage() throws {
        let a = try GTIN.parse("9784872348880"), b = try GTIN.parse("96385074")
        let ia = try Self.render(a), ib = try Self.render(b, angle: 90)
        var canvas = RGBImage(width: ia.width + ib.width + 20, height: max(ia.height, ib.height), fill: (235, 235, 235))
        for y in 0..<ia.height { for x in 0..<ia.width { canvas[x, y] = ia[x, y] } }
        for y in 0..<ib.height { for x in 0..<ib.width { canvas[ia.width + 20 + x, y] = ib[x, y] } }
        let found = Set(BarcodeScanner.scan(canvas).map(\.code))
        #expect(found == [a, b])
    }

    @Test func pureNoiseReadsAsNothing() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<6 {
            var px = [UInt8](repeating: 0, count: 320 * 240 * 3)
            for i in 0..<(320 * 240) {
                let v = UInt8(truncatingIfNeeded: rng.next())
                px[3 * i] = v; px[3 * i + 1] = v; px[3 * i + 2] = v
            }
            #expect(BarcodeScanner.scan(RGBImage(width: 320, height: 240, pixels: px)).isEmpty)
        }
    }

    /// Random bar patterns with quiet zones: the shape of a barcode without its code. Must never decode.
    @Test func randomStripesReadAsNothing() {
        var rng = SplitMix64(seed: 99)
        for round in 0..<12 {
            let modules = (0..<(80 + round * 5)).map { _ in rng.nextInt(2) == 1 }
            let image = SyntheticBarcode(modules: [true, false, true] + modules + [true, false, true], moduleWidth: 2.5,
                                         heightModules: 30, angle: Double(round * 29), blurSigma: 0.6, noise: 6,
                                         seed: rng.next()).render()
            #expect(BarcodeScanner.scan(image).isEmpty, "round \(round)")
        }
    }

    /// An EAN-13 cut right after its middle guard looks like a UPC-E (number system 1 shares the EAN-13 parity
    /// patterns) and its left part like an EAN-8 prefix: neither may be reported.
    @Test func truncatedEAN13ReadsAsNothing() throws {
        // First digit 3 → parity LLGGGL, which is also UPC-E number system 1 with check digit 3.
        let code = try GTIN.parse("3560070169443")
        let modules = try #require(BarcodeEncoder.modules(for: code))
        for cut in [3 + 42 + 5, 3 + 42 + 5 + 14] {
            let image = SyntheticBarcode(modules: Array(modules[..<cut]), moduleWidth: 2.5, heightModules: 35,
                                         angle: 0, noise: 4).render()
            #expect(BarcodeScanner.scan(image).isEmpty, "cut after \(cut) modules")
        }
    }

    @Test func tinyAndEmptyImagesReadAsNothing() {
        #expect(BarcodeScanner.scan(RGBImage(width: 0, height: 0, pixels: [])).isEmpty)
        #expect(BarcodeScanner.scan(RGBImage(width: 3, height: 200, fill: (0, 0, 0))).isEmpty)
        #expect(BarcodeScanner.scan(RGBImage(width: 200, height: 200, fill: (255, 255, 255))).isEmpty)
    }
}
