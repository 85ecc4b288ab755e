import CurlTransport
import FoodCore
import FoodMomentTestSupport
import Foundation
import Nutrition
import Testing

/// The real libcurl transport and the Open Food Facts client against a real HTTP server on 127.0.0.1.
/// The time limit only guards against a hang: each test takes seconds, but under a sanitizer on 2 cores a test can
/// wait minutes for a thread while CPU-bound tests run beside it.
@Suite("Open Food Facts client over libcurl (loopback server)", .serialized, .timeLimit(.minutes(5)))
struct OpenFoodFactsClientTests {
    static let nutella = """
    {"code":"3017620422003","status":1,"status_verbose":"product found","product":{"code":"3017620422003",
     "product_name":"Nutella","brands":"Ferrero","serving_size":"15 g","nutriments":{"energy-kcal_100g":539,
     "proteins_100g":6.3,"fat_100g":30.9,"saturated-fat_100g":10.6,"carbohydrates_100g":57.5,"sugars_100g":56.3,
     "fiber_100g":0,"salt_100g":0.107}}}
    """

    static func server() throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer { path in
            switch true {
            case path.contains("/3017620422003.json"): .json(nutella)
            case path.contains("/0000000000017.json"): .json(#"{"status":0,"status_verbose":"product not found"}"#, status: 404)
            case path.contains("/4000000000016.json"): .json(#"{"status":1,"product":{"product_name":"Mystery","nutriments":{}}}"#)
            case path.contains("/4000000000023.json"): .json("{}", status: 429, headers: ["Retry-After": "30"])
            case path.contains("/4000000000030.json"): .json("oops", status: 503)
            case path.contains("/4000000000047.json"): .json(#"{"status":1,"product":{"product_name":"#)
            case path.contains("/4000000000054.json"): .json("[" + String(repeating: "1,", count: 3_000_000) + "1]")
            case path.contains("/4000000000061.json"): LoopbackHTTPServer.Reply(drop: true)
            case path.contains("/4000000000078.json"): .json(#"{"status":1,"product":{"product_name":"Kcal-less","nutriments":{"proteins_100g":10,"fat_100g":5,"carbohydrates_100g":20}}}"#)
            default: .json("{}", status: 404)
            }
        }
    }

    func client(_ s: LoopbackHTTPServer) -> OpenFoodFactsClient {
        OpenFoodFactsClient(transport: CurlHTTPTransport(userAgent: "FoodMoment-tests/0.1"), baseURL: s.baseURL)
    }

    @Test func productFoundWithUserAgent() async throws {
        let s = try Self.server()
        defer { s.stop() }
        let p = try await client(s).product(gtin14: "03017620422003")
        #expect(p.name == "Nutella" && p.brand == "Ferrero" && p.servingSize == "15 g")
        #expect(p.per100g[.energyKcal] == 539 && !p.energyEstimatedFromMacros)
        #expect(abs((p.per100g[.sodium] ?? 0) - 42.8) < 0.1)  // salt 0.107 g → 42.8 mg sodium
        #expect(s.requests.first?.headers["user-agent"] == "FoodMoment-tests/0.1")
        #expect(s.requests.first?.path.hasPrefix("/api/v2/product/3017620422003.json") == true)
    }

    @Test func typedErrors() async throws {
        let s = try Self.server()
        defer { s.stop() }
        let c = client(s)
        await #expect(throws: OpenFoodFactsError.notFound(gtin14: "00000000000017")) { try await c.product(gtin14: "00000000000017") }
        await #expect(throws: OpenFoodFactsError.incompleteNutrition(gtin14: "04000000000016", name: "Mystery")) {
            try await c.product(gtin14: "04000000000016")
        }
        await #expect(throws: OpenFoodFactsError.rateLimited(retryAfter: "30")) { try await c.product(gtin14: "04000000000023") }
        await #expect(throws: OpenFoodFactsError.server(status: 503)) { try await c.product(gtin14: "04000000000030") }
        do { _ = try await c.product(gtin14: "04000000000047"); Issue.record("truncated JSON accepted") } catch {
            #expect(error.kind == "invalid_response" || error.kind == "not_found")
        }
        do { _ = try await c.product(gtin14: "04000000000054"); Issue.record("huge body accepted") } catch {
            #expect(error.kind == "network" && error.description.contains("larger than"))
        }
        do { _ = try await c.product(gtin14: "04000000000061"); Issue.record("reset accepted") } catch {
            #expect(error.kind == "network")
        }
        let estimated = try await c.product(gtin14: "04000000000078")
        let expectedKcal: Double = 165  // 4 × 10 + 4 × 20 + 9 × 5
        #expect(estimated.energyEstimatedFromMacros)
        #expect(estimated.per100g[.energyKcal] == expectedKcal)
    }

    @Test func closedPortIsANetworkError() async throws {
        // Port 1 on loopback: nothing listens there (a just-closed ephemeral port could be reused by a parallel test).
        let c = OpenFoodFactsClient(transport: CurlHTTPTransport(userAgent: "t"), baseURL: "http://127.0.0.1:1")
        do { _ = try await c.product(gtin14: "03017620422003"); Issue.record("no error") } catch {
            #expect(error.kind == "network")
        }
    }

    @Test func transportRefusesOtherProtocols() async {
        let t = CurlHTTPTransport(userAgent: "t")
        await #expect(throws: HTTPTransportError.self) { try await t.get(HTTPRequest(url: "file:///etc/passwd")) }
    }

    @Test func rateLimiterAllowsAHundredPerMinute() {
        var limiter = RateLimiter(limit: 100, window: .seconds(60))
        let t0 = ContinuousClock.now
        for i in 0..<100 { #expect(limiter.reserve(at: t0 + .milliseconds(i)) == .zero) }
        let wait = limiter.reserve(at: t0 + .milliseconds(100))
        #expect(wait > .seconds(59) && wait <= .seconds(60))
    }

    @Test func codesAsOpenFoodFactsPrintsThem() {
        #expect(OpenFoodFactsClient.offCode("03017620422003") == "3017620422003")
        #expect(OpenFoodFactsClient.offCode("00041196133066") == "0041196133066")
        #expect(OpenFoodFactsClient.offCode("00000096385074") == "96385074")
        #expect(OpenFoodFactsClient.offCode("10012345678902") == "10012345678902")
    }
}
