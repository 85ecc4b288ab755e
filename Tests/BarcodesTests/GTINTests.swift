import Barcodes
import Testing

@Suite struct GTINTests {
    @Test func upcAAndEAN13AreTheSameProduct() throws {
        let upc = try GTIN.parse("041196133066")
        let ean = try GTIN.parse("0041196133066")
        let g14 = try GTIN.parse("00041196133066")
        #expect(upc.format == .upcA)
        #expect(ean.format == .ean13)
        #expect(g14.format == .gtin14)
        #expect(upc.gtin14 == "00041196133066")
        #expect(ean.gtin14 == upc.gtin14)
        #expect(g14.gtin14 == upc.gtin14)
        #expect(ean.upcA == "041196133066")
        #expect(upc.gtin13 == "0041196133066")
    }

    @Test func parsesEachFormat() throws {
        #expect(try GTIN.parse("4006381333931").format == .ean13)
        #expect(try GTIN.parse("96385074").format == .ean8)
        #expect(try GTIN.parse("96385074").gtin14 == "00000096385074")
        #expect(try GTIN.parse("04252614").format == .upcE)  // not a valid EAN-8, valid UPC-E
        #expect(try GTIN.parse("10614141000415").format == .gtin14)
        #expect(try GTIN.parse("10614141000415").gtin13 == nil)  // packaging indicator 1
        #expect(try GTIN.parse("5 012345 678900").digits == "5012345678900")
        #expect(try GTIN.parse(" 4006381-333931\n").digits == "4006381333931")
    }

    @Test func wrongCheckDigitSaysWhichDigitWasExpected() {
        #expect(throws: GTINError.checkDigitMismatch(format: .ean13, code: "4006381333932", expected: 1, found: 2)) {
            try GTIN.parse("4006381333932")
        }
        #expect(throws: GTINError.checkDigitMismatch(format: .upcA, code: "041196133067", expected: 6, found: 7)) {
            try GTIN.parse("041196133067")
        }
        #expect(throws: GTINError.checkDigitMismatch(format: .upcE, code: "04252615", expected: 4, found: 5)) {
            try GTIN(format: .upcE, digits: "04252615")
        }
        let message = GTINError.checkDigitMismatch(format: .ean13, code: "4006381333932", expected: 1, found: 2).description
        #expect(message.contains("should be 1"))
    }

    @Test(arguments: [
        ("", GTINError.empty),
        ("  ", GTINError.empty),
        ("12345", GTINError.invalidLength(5)),
        ("123456789012345", GTINError.invalidLength(15)),
        ("40063813339a1", GTINError.invalidCharacter("a", offset: 11)),
        ("4006381333931x", GTINError.invalidCharacter("x", offset: 13)),
    ])
    func rejectsMalformedInput(text: String, error: GTINError) {
        #expect(throws: error) { try GTIN.parse(text) }
    }

    @Test func upcEMustUseNumberSystemZeroOrOne() {
        #expect(throws: GTINError.invalidUPCENumberSystem(2)) { try GTIN(format: .upcE, digits: "24252614") }
        #expect(throws: GTINError.lengthMismatch(format: .upcE, digits: 12)) { try GTIN(format: .upcE, digits: "042100005264") }
    }

    /// Every branch of the UPC-E expansion (last data digit 0-2, 3, 4, 5-9) and both number systems; expected
    /// values worked out by hand from the GS1 rules.
    @Test(arguments: [
        ("04252614", "042100005264"),  // d6 = 1: ab1 0000 cde
        ("01234505", "012000003455"),  // d6 = 0
        ("01234523", "012200003453"),  // d6 = 2
        ("01234531", "012300000451"),  // d6 = 3: abc 00000 de
        ("01234543", "012340000053"),  // d6 = 4: abcd 00000 e
        ("01234558", "012345000058"),  // d6 = 5: abcde 0000 5
        ("01234596", "012345000096"),  // d6 = 9
        ("12345610", "123100004560"),  // number system 1
        ("19876544", "198760000054"),
    ])
    func expandsUPCE(upce: String, upca: String) throws {
        #expect(try GTIN.expandUPCE(upce) == upca)
        let code = try GTIN(format: .upcE, digits: upce)
        #expect(code.upcA == upca)
        #expect(code.gtin14 == "00" + upca)
        #expect(code.gtin14 == (try GTIN.parse(upca)).gtin14)
    }

    @Test func eightDigitsValidAsBothPreferEAN8() throws {
        // 01234558 is a valid EAN-8 and a valid UPC-E: without a hint it is EAN-8; the symbology decides.
        #expect(try GTIN.parse("01234558").format == .ean8)
        #expect(try GTIN(format: .upcE, digits: "01234558").gtin14 == "00012345000058")
    }

    @Test func checkDigitOfKnownCodes() {
        #expect(GTIN.checkDigit(forPayload: [4, 0, 0, 6, 3, 8, 1, 3, 3, 3, 9, 3]) == 1)
        #expect(GTIN.checkDigit(forPayload: [9, 6, 3, 8, 5, 0, 7]) == 4)
        #expect(GTIN.checkDigit(forPayload: [0, 4, 1, 1, 9, 6, 1, 3, 3, 0, 6]) == 6)
    }
}

@Suite struct EncoderTests {
    /// Module strings of the character sets, written out independently of the module's width tables.
    static let lBits = ["0001101", "0011001", "0010011", "0111101", "0100011", "0110001", "0101111", "0111011", "0110111", "0001011"]
    static func gBits(_ d: Int) -> String { String(rBits(d).reversed()) }
    static func rBits(_ d: Int) -> String { String(lBits[d].map { $0 == "0" ? "1" : "0" }) }

    static func bits(_ modules: [Bool]) -> String { String(modules.map { $0 ? "1" : "0" }) }

    @Test func ean13MatchesTheStandardTables() throws {
        // 4006381333931: first digit 4 → parity LGLLGG.
        let parity = Array("LGLLGG")
        let d = "4006381333931".map { Int(String($0))! }
        var expected = "101"
        for i in 0..<6 { expected += parity[i] == "L" ? Self.lBits[d[1 + i]] : Self.gBits(d[1 + i]) }
        expected += "01010"
        for i in 7..<13 { expected += Self.rBits(d[i]) }
        expected += "101"
        let modules = try #require(BarcodeEncoder.modules(for: try GTIN.parse("4006381333931")))
        #expect(modules.count == 95)
        #expect(Self.bits(modules) == expected)
    }

    @Test func ean8AndUPCEMatchTheStandardTables() throws {
        let ean8 = try #require(BarcodeEncoder.modules(for: try GTIN.parse("96385074")))
        var expected = "101"
        for c in "9638" { expected += Self.lBits[Int(String(c))!] }
        expected += "01010"
        for c in "5074" { expected += Self.rBits(Int(String(c))!) }
        expected += "101"
        #expect(Self.bits(ean8) == expected)

        // UPC-E 04252614: number system 0, check 4 → parity EOEEOO (E = G, O = L).
        let upce = try #require(BarcodeEncoder.modules(for: try GTIN(format: .upcE, digits: "04252614")))
        var e = "101"
        for (c, p) in zip("425261", "GLGGLL") { e += p == "L" ? Self.lBits[Int(String(c))!] : Self.gBits(Int(String(c))!) }
        e += "010101"
        #expect(Self.bits(upce) == e)
    }
}
