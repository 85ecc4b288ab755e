import ArgumentParser
import Barcodes
import CurlTransport
import FoodCore
import FoodMoment
import Foundation
import ImageCodecs
import Nutrition

/// `foodmoment barcode CODE|PHOTO`: validate a typed product number, or read the barcodes in a photo.
struct BarcodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "barcode",
        abstract: "Check a product barcode number, or read EAN/UPC barcodes from a photo.",
        discussion: """
        A number (8, 12, 13 or 14 digits; spaces and hyphens ignored) is validated — the check digit must be \
        right — and normalised to GTIN-14, so UPC-A 041196133066 and EAN-13 0041196133066 are the same \
        product. An 8-digit number is EAN-8 when its check digit fits, else UPC-E; use --format upc-e to insist.

        A path is decoded as a JPEG/PNG photo and searched for EAN-13, UPC-A, EAN-8 and UPC-E symbols at any \
        rotation; a code is printed only when several scan lines agree on it.

        Examples:
          foodmoment barcode 4006381333931
          foodmoment barcode 041196133066 --json
          foodmoment barcode 04252614 --format upc-e
          foodmoment barcode cereal-box.jpg
          foodmoment barcode shelf.png --json > codes.json

        Exit codes: 0 a valid code / at least one barcode found; 1 wrong check digit, nothing found or the \
        photo cannot be read; 2 usage error.
        """
    )

    @Argument(help: "A barcode number, or the path of a photo.")
    var input: String

    @Option(help: "Symbology of a typed number (default: from its length).")
    var format: FormatChoice?

    @Flag(help: "Print one JSON document on stdout.")
    var json = false

    @Option(help: "Refuse photos with more pixels than this (checked before any pixel is allocated).")
    var maxPixels: Int = 100_000_000

    enum FormatChoice: String, ExpressibleByArgument, CaseIterable {
        case ean13 = "ean-13", upcA = "upc-a", ean8 = "ean-8", upcE = "upc-e", gtin14 = "gtin-14"
        var format: BarcodeFormat {
            switch self {
            case .ean13: .ean13
            case .upcA: .upcA
            case .ean8: .ean8
            case .upcE: .upcE
            case .gtin14: .gtin14
            }
        }
    }

    @Option(name: .customLong("nutrition-db"), help: ArgumentHelp("Nutrition database folder (default: the bundled nutrition-db/, or $FOODMOMENT_NUTRITION_DB).", valueName: "dir"))
    var nutritionDb: String?

    /// `--db` names the meal store everywhere else; here it is refused with the new name rather than read as a folder.
    @Option(name: .customLong("db"), help: .hidden)
    var legacyDb: String?

    @Flag(help: "Ask the Open Food Facts API v2 over the network instead of the embedded subset ($FOODMOMENT_OFF_BASE_URL overrides the server).")
    var online = false

    /// The offline look-up in the embedded Open Food Facts subset (a miss when the database cannot be loaded).
    var productLookup: any BarcodeProductLookup {
        if online {
            let base = ProcessInfo.processInfo.environment["FOODMOMENT_OFF_BASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
                ?? OpenFoodFactsClient.defaultBaseURL
            let agent = "FoodMoment/\(FoodMomentVersion.string) (Linux command-line meal analysis)"
            return OnlineProductLookup(client: OpenFoodFactsClient(transport: CurlHTTPTransport(userAgent: agent), baseURL: base))
        }
        let dir = nutritionDb.map { URL(fileURLWithPath: $0) } ?? ProcessSettings.nutritionDirectory
        guard let database = try? ProcessSettings.loadNutrition(dir) else {
            Output.note("note: nutrition database not found at \(dir.path); codes are checked but not looked up")
            return NoProductLookup()
        }
        return EmbeddedProductLookup(database: database)
    }

    private var isPhoto: Bool { FileManager.default.fileExists(atPath: input) }
    private static func looksLikeNumber(_ s: String) -> Bool {
        !s.isEmpty && s.allSatisfy { $0.isASCII && ($0.isNumber || $0 == " " || $0 == "-") }
    }

    func validate() throws {
        if legacyDb != nil { throw ValidationError("barcode takes the nutrition tables as --nutrition-db DIR (--db names the meal store)") }
        if !isPhoto && !Self.looksLikeNumber(input) {
            throw ValidationError("'\(input)' is neither a file nor a barcode number (8, 12, 13 or 14 digits)")
        }
        if isPhoto && format != nil { throw ValidationError("--format applies to typed numbers, not photos") }
        if maxPixels <= 0 { throw ValidationError("--max-pixels must be positive") }
    }

    func run() async throws {
        if isPhoto { try await scanPhoto() } else { try await checkNumber() }
    }

    // MARK: - Typed number

    private func checkNumber() async throws {
        let code: GTIN
        do {
            if let format {
                let digits = input.filter(\.isNumber)
                code = try GTIN(format: format.format, digits: digits)
            } else {
                code = try GTIN.parse(input)
            }
        } catch {
            Output.error("\(error.description)")
            if json { print(try Output.json(NumberResult(input: input, error: ErrorInfo(error)))) }
            throw Exit.failed
        }
        let product: BarcodeProduct?
        do {
            product = try await productLookup.product(gtin14: code.gtin14)
        } catch let failure as OnlineLookupFailure {
            Output.error("\(failure)")
            if json { print(try Output.json(NumberResult(input: input, code: CodeInfo(code), error: ErrorInfo(kind: failure.error.kind, message: failure.error.description)))) }
            throw Exit.failed
        }
        if json {
            print(try Output.json(NumberResult(input: input, code: CodeInfo(code), product: product)))
        } else {
            var line = "\(code.format) \(code.digits)  GTIN-14 \(code.gtin14)"
            if code.format == .upcE, let upcA = code.upcA { line += "  (UPC-A \(upcA))" }
            print(line)
            if let product {
                print("product: \(product.name)\(product.brand.map { " — \($0)" } ?? "")")
                let n = product.per100g
                func f(_ v: Double?, _ unit: String) -> String { v.map { String(format: "%.1f %@", $0, unit) } ?? "—" }
                print("per 100 g: \(f(n["energy_kcal"] ?? nil, "kcal"))\(product.energyEstimated ? " (estimated from macros)" : ""), "
                      + "protein \(f(n["protein_g"] ?? nil, "g")), fat \(f(n["fat_g"] ?? nil, "g")), carbohydrate \(f(n["carbohydrate_g"] ?? nil, "g")), "
                      + "sugars \(f(n["sugars_g"] ?? nil, "g")), fiber \(f(n["fiber_g"] ?? nil, "g")), sodium \(f(n["sodium_mg"] ?? nil, "mg"))")
                if let serving = product.servingSize { print("serving: \(serving)") }
                print("source: \(product.provenance)")
            } else {
                print(online ? "product: not found on Open Food Facts (\(code.gtin14))"
                             : "product: not in the embedded Open Food Facts subset (\(code.gtin14)); try --online")
            }
        }
    }

    // MARK: - Photo

    private func scanPhoto() async throws {
        let decoded: DecodedImage
        do {
            decoded = try ImageDecoder.decodeFile(atPath: input, options: DecodeOptions(maxPixels: maxPixels))
        } catch {
            Output.error("\(input): \(error.description)")
            if json { print(try Output.json(PhotoScanResult(file: input, error: ErrorInfo(kind: error.kind, message: error.description)))) }
            throw Exit.failed
        }
        let start = ContinuousClock.now
        let found = BarcodeScanner.scan(decoded.image)
        let elapsed = ContinuousClock.now - start
        let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        var codes: [FoundCode] = []
        let lookup = found.isEmpty ? NoProductLookup() : productLookup
        for b in found {
            codes.append(FoundCode(b, product: try await lookup.product(gtin14: b.gtin14)))
        }
        if json {
            print(try Output.json(PhotoScanResult(file: input, width: decoded.image.width, height: decoded.image.height,
                                                  scanMilliseconds: ms, codes: codes)))
        } else {
            for c in codes {
                var line = "\(c.format) \(c.digits)  GTIN-14 \(c.gtin14)"
                line += String(format: "  at (%.0f, %.0f)  %.0f°  %d lines", c.center.x, c.center.y,
                               c.angleDegrees.rounded().truncatingRemainder(dividingBy: 360), c.scanLines)
                if let p = c.product { line += "  \(p.name)" }
                print(line)
            }
        }
        if codes.isEmpty {
            Output.note("no barcode found in \(input) (\(decoded.image.width)x\(decoded.image.height), \(String(format: "%.0f", ms)) ms)")
            throw Exit.failed
        }
    }
}

// MARK: - Product look-up seam

/// What the nutrition database knows about a product.
struct BarcodeProduct: Encodable, Sendable {
    var id: String
    var name: String
    var brand: String?
    /// Per 100 g, keyed like `energy_kcal`, `protein_g`, `sodium_mg`.
    var per100g: [String: Double?]
    var energyEstimated: Bool
    var servingSize: String?
    var servingGrams: Double?
    var provenance: String

    enum CodingKeys: String, CodingKey {
        case id, name, brand, provenance
        case per100g = "per_100g", energyEstimated = "energy_estimated_from_macros"
        case servingSize = "serving_size", servingGrams = "serving_grams"
    }
}

/// The online look-up: Open Food Facts API v2 over libcurl. Typed failures other than "not found" are errors.
struct OnlineProductLookup: BarcodeProductLookup {
    let client: OpenFoodFactsClient
    func product(gtin14: String) async throws -> BarcodeProduct? {
        do {
            let p = try await client.product(gtin14: gtin14)
            var values: [String: Double?] = [:]
            for n in Nutrient.core { values[n.key] = p.per100g[n] }
            return BarcodeProduct(id: "off:\(gtin14)", name: p.name, brand: p.brand, per100g: values,
                                  energyEstimated: p.energyEstimatedFromMacros, servingSize: p.servingSize, servingGrams: nil,
                                  provenance: p.provenance)
        } catch .notFound {
            return nil
        } catch {
            throw OnlineLookupFailure(error: error)
        }
    }
}

struct OnlineLookupFailure: Error, CustomStringConvertible {
    let error: OpenFoodFactsError
    var description: String { "\(error.description) [\(error.kind)]" }
}

/// The offline look-up in the nutrition database's Open Food Facts products.
struct EmbeddedProductLookup: BarcodeProductLookup {
    let database: NutritionDatabase
    func product(gtin14: String) async throws -> BarcodeProduct? {
        guard let food = database.product(gtin14: gtin14) else { return nil }
        var values: [String: Double?] = [:]
        for n in Nutrient.core { values[n.key] = food.per100g[n] }
        return BarcodeProduct(id: food.id, name: food.name, brand: food.brand.isEmpty ? nil : food.brand, per100g: values,
                              energyEstimated: food.energyEstimatedFromMacros, servingSize: food.servingSize,
                              servingGrams: food.servingGrams, provenance: food.provenance)
    }
}

/// Finds a product by its GTIN-14 (the normal form every scanned or typed code is reduced to).
protocol BarcodeProductLookup: Sendable {
    func product(gtin14: String) async throws -> BarcodeProduct?
}

/// No database yet: every look-up misses, and JSON output carries `"product": null`.
struct NoProductLookup: BarcodeProductLookup {
    func product(gtin14: String) async throws -> BarcodeProduct? { nil }
}

// MARK: - JSON shapes

private struct ErrorInfo: Encodable {
    var kind: String
    var message: String
    init(kind: String, message: String) { self.kind = kind; self.message = message }
    init(_ e: GTINError) {
        let kind = switch e {
        case .empty: "empty"
        case .invalidCharacter: "invalid_character"
        case .invalidLength, .lengthMismatch: "invalid_length"
        case .checkDigitMismatch: "check_digit"
        case .invalidUPCENumberSystem: "invalid_number_system"
        }
        self.init(kind: kind, message: e.description)
    }
}

private struct CodeInfo: Encodable {
    var format: String
    var digits: String
    var gtin14: String
    var gtin13: String?
    var upcA: String?
    init(_ g: GTIN) {
        format = g.format.rawValue; digits = g.digits; gtin14 = g.gtin14; gtin13 = g.gtin13; upcA = g.upcA
    }
}

private struct NumberResult: Encodable {
    var input: String
    var code: CodeInfo?
    var product: BarcodeProduct?
    var error: ErrorInfo?
    init(input: String, code: CodeInfo? = nil, product: BarcodeProduct? = nil, error: ErrorInfo? = nil) {
        self.input = input; self.code = code; self.product = product; self.error = error
    }
    enum CodingKeys: String, CodingKey { case input, code, product, error }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(input, forKey: .input)
        if let error {
            try c.encode(error, forKey: .error)
        } else {
            try c.encode(code, forKey: .code)
            try c.encode(product, forKey: .product)  // explicit null until the look-up is wired
        }
    }
}

private struct FoundCode: Encodable {
    struct Point: Encodable { var x: Double; var y: Double }
    var format: String
    var digits: String
    var gtin14: String
    var center: Point
    var start: Point
    var end: Point
    var angleDegrees: Double
    var scanLines: Int
    var bounds: [Double]
    var product: BarcodeProduct?
    init(_ b: DecodedBarcode, product: BarcodeProduct?) {
        format = b.format.rawValue; digits = b.digits; gtin14 = b.gtin14
        center = Point(x: b.center.x, y: b.center.y)
        start = Point(x: b.start.x, y: b.start.y); end = Point(x: b.end.x, y: b.end.y)
        angleDegrees = ((b.angleDegrees * 10).rounded() / 10).truncatingRemainder(dividingBy: 360)
        scanLines = b.scanLines
        bounds = [b.bounds.x, b.bounds.y, b.bounds.w, b.bounds.h]
        self.product = product
    }
    enum CodingKeys: String, CodingKey { case format, digits, gtin14, center, start, end, angleDegrees, scanLines, bounds, product }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(format, forKey: .format); try c.encode(digits, forKey: .digits); try c.encode(gtin14, forKey: .gtin14)
        try c.encode(center, forKey: .center); try c.encode(start, forKey: .start); try c.encode(end, forKey: .end)
        try c.encode(angleDegrees, forKey: .angleDegrees); try c.encode(scanLines, forKey: .scanLines)
        try c.encode(bounds, forKey: .bounds); try c.encode(product, forKey: .product)
    }
}

private struct PhotoScanResult: Encodable {
    var file: String
    var width: Int?
    var height: Int?
    var scanMilliseconds: Double?
    var codes: [FoundCode]?
    var error: ErrorInfo?
    init(file: String, width: Int? = nil, height: Int? = nil, scanMilliseconds: Double? = nil, codes: [FoundCode]? = nil,
         error: ErrorInfo? = nil) {
        self.file = file; self.width = width; self.height = height
        self.scanMilliseconds = scanMilliseconds.map { ($0 * 10).rounded() / 10 }
        self.codes = codes; self.error = error
    }
}
