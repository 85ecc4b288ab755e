public import FoodCore
import Foundation

/// A product as the Open Food Facts API v2 returns it (per 100 g, as sold).
public struct OnlineProduct: Sendable, Equatable {
    public var gtin14: String
    public var name: String
    public var brand: String?
    public var per100g: NutrientValues
    /// No usable energy value was sent: kcal = 4·protein + 4·carbohydrate + 9·fat.
    public var energyEstimatedFromMacros: Bool
    public var servingSize: String?
    public var provenance: String { "Open Food Facts API v2 (online), barcode \(gtin14); data © Open Food Facts contributors, ODbL 1.0" }
}

/// Why an online look-up failed.
public enum OpenFoodFactsError: Error, Sendable, Equatable, CustomStringConvertible {
    case notFound(gtin14: String)
    case rateLimited(retryAfter: String?)
    case server(status: Int)
    case network(String)
    /// The product exists but lacks the nutrients we need (energy or the three macronutrients).
    case incompleteNutrition(gtin14: String, name: String)
    case invalidResponse(String)

    public var kind: String {
        switch self {
        case .notFound: "not_found"
        case .rateLimited: "rate_limited"
        case .server: "server"
        case .network: "network"
        case .incompleteNutrition: "incomplete_nutrition"
        case .invalidResponse: "invalid_response"
        }
    }

    public var description: String {
        switch self {
        case .notFound(let g): "Open Food Facts has no product \(g)"
        case .rateLimited(let after): "Open Food Facts is rate-limiting us" + (after.map { "; retry after \($0) s" } ?? "; try again in a minute")
        case .server(let status): "Open Food Facts answered HTTP \(status); try again later"
        case .network(let why): "cannot reach Open Food Facts: \(why)"
        case .incompleteNutrition(let g, let name): "\(name) (\(g)) has no usable nutrition facts on Open Food Facts"
        case .invalidResponse(let why): "unexpected answer from Open Food Facts: \(why)"
        }
    }
}

/// Keeps a client under N requests per sliding minute; `reserve(at:)` says how long to wait before the next.
public struct RateLimiter: Sendable {
    public let limit: Int
    public let window: Duration
    private var sent: [ContinuousClock.Instant] = []

    public init(limit: Int = 100, window: Duration = .seconds(60)) {
        self.limit = limit
        self.window = window
    }

    /// Records a request made at `now` (or as soon as allowed) and returns the wait before it may go.
    public mutating func reserve(at now: ContinuousClock.Instant) -> Duration {
        sent.removeAll { now - $0 >= window }
        var start = now
        if sent.count >= limit, let oldest = sent.first { start = oldest + window }
        sent.append(start)
        if sent.count > limit { sent.removeFirst(sent.count - limit) }
        return start > now ? start - now : .zero
    }
}

/// The Open Food Facts API v2 product look-up over any `HTTPTransport` (libcurl in the CLI), with a custom
/// User-Agent (as OFF asks) and at most 100 requests per minute.
public actor OpenFoodFactsClient {
    public static let defaultBaseURL = "https://world.openfoodfacts.org"
    let transport: any HTTPTransport
    let baseURL: String
    var limiter = RateLimiter()

    public init(transport: any HTTPTransport, baseURL: String = OpenFoodFactsClient.defaultBaseURL) {
        self.transport = transport
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
    }

    public func product(gtin14: String) async throws(OpenFoodFactsError) -> OnlineProduct {
        let wait = limiter.reserve(at: .now)
        if wait > .zero { try? await Task.sleep(for: wait) }
        let code = Self.offCode(gtin14)
        let url = "\(baseURL)/api/v2/product/\(code).json?fields=code,product_name,product_name_en,brands,nutriments,serving_size"
        let response: HTTPResponse
        do {
            response = try await transport.get(HTTPRequest(url: url, headers: ["Accept": "application/json"]))
        } catch {
            throw .network(error.description)
        }
        switch response.status {
        case 200, 404: break
        case 429: throw .rateLimited(retryAfter: response.retryAfter)
        case 500...599: throw .server(status: response.status)
        default: throw .invalidResponse("HTTP \(response.status)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] else {
            if response.status == 404 { throw .notFound(gtin14: gtin14) }
            throw .invalidResponse("body is not a JSON object")
        }
        guard (object["status"] as? Int) == 1, let product = object["product"] as? [String: Any] else {
            throw .notFound(gtin14: gtin14)
        }
        return try Self.parse(product, gtin14: gtin14)
    }

    /// OFF keys products by the code as printed: EAN-8 (GTIN-14 with six leading zeros), else EAN-13 (UPC-A
    /// gets its leading 0), else the 14 digits.
    public static func offCode(_ gtin14: String) -> String {
        if gtin14.count == 14 && gtin14.hasPrefix("000000") { return String(gtin14.dropFirst(6)) }
        if gtin14.count == 14 && gtin14.hasPrefix("0") { return String(gtin14.dropFirst()) }
        return gtin14
    }

    static func parse(_ p: [String: Any], gtin14: String) throws(OpenFoodFactsError) -> OnlineProduct {
        let name = [p["product_name_en"], p["product_name"]].compactMap { $0 as? String }.first { !$0.isEmpty } ?? "product \(gtin14)"
        let nutriments = p["nutriments"] as? [String: Any] ?? [:]
        func number(_ key: String) -> Double? {
            if let d = nutriments[key] as? Double { return d }
            if let i = nutriments[key] as? Int { return Double(i) }
            if let s = nutriments[key] as? String { return Double(s) }
            return nil
        }
        var values = NutrientValues()
        values[.protein] = number("proteins_100g")
        values[.fat] = number("fat_100g")
        values[.saturatedFat] = number("saturated-fat_100g")
        values[.carbohydrate] = number("carbohydrates_100g")
        values[.sugars] = number("sugars_100g")
        values[.fiber] = number("fiber_100g")
        if let sodium = number("sodium_100g") { values[.sodium] = sodium * 1000 } else if let salt = number("salt_100g") { values[.sodium] = salt / 2.5 * 1000 }
        var estimated = false
        if let kcal = number("energy-kcal_100g") {
            values[.energyKcal] = kcal
        } else if let kj = number("energy_100g") ?? number("energy-kj_100g") {
            values[.energyKcal] = kj / 4.184
        } else if let pr = values[.protein], let f = values[.fat], let c = values[.carbohydrate] {
            values[.energyKcal] = 4 * pr + 4 * c + 9 * f
            estimated = true
        }
        guard values[.energyKcal] != nil, values[.protein] != nil || values[.fat] != nil || values[.carbohydrate] != nil else {
            throw .incompleteNutrition(gtin14: gtin14, name: name)
        }
        let brand = (p["brands"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        return OnlineProduct(gtin14: gtin14, name: name, brand: brand, per100g: values, energyEstimatedFromMacros: estimated,
                             servingSize: (p["serving_size"] as? String).flatMap { $0.isEmpty ? nil : $0 })
    }
}
