import Barcodes
import FoodCore
import FoodMoment
import FoodRecognition
import Foundation
import Hummingbird
import ImageCodecs
import Logging
import Nutrition

/// What `foodmoment serve` runs with.
public struct ServerConfiguration: Sendable {
    public var host: String = "127.0.0.1"
    public var port: Int = 8080
    /// The server's own data folder (accounts, and later each user's diary and photos).
    public var dataDirectory: String
    /// Largest request body (a photo), bytes.
    public var maxBodyBytes: Int = 20 << 20
    /// Largest photo, pixels (stored grid), before anything is decoded at full size.
    public var maxPixels: Int = 60_000_000
    /// Photos analysed at once; each has its own copy of the models.
    public var analyzers: Int = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 4))
    public var modelsDirectory: String?
    public var nutritionDirectory: URL?

    public init(dataDirectory: String) { self.dataDirectory = dataDirectory }

    public var accountsPath: String { dataDirectory + "/accounts.sqlite" }
}

/// One `MealAnalyzer` per concurrent analysis (the backbone's arena is serialised per instance); the CPU work runs
/// off Swift's cooperative pool so it never holds up other requests' I/O.
actor AnalyzerPool {
    private var free: [MealAnalyzer]
    private var waiting: [CheckedContinuation<MealAnalyzer, Never>] = []

    init(_ analyzers: [MealAnalyzer]) { free = analyzers }

    func acquire() async -> MealAnalyzer {
        if let a = free.popLast() { return a }
        return await withCheckedContinuation { waiting.append($0) }
    }

    func release(_ a: MealAnalyzer) {
        if waiting.isEmpty { free.append(a) } else { waiting.removeFirst().resume(returning: a) }
    }

    nonisolated func analyze(_ file: PhotoFile) async -> PhotoResult {
        let analyzer = await acquire()
        let result = await withCheckedContinuation { (c: CheckedContinuation<PhotoResult, Never>) in
            DispatchQueue.global().async { c.resume(returning: analyzer.analyze(file)) }
        }
        await release(analyzer)
        return result
    }
}

/// The request context: who is calling (set by the bearer-token middleware) and how large a body may be.
public struct APIContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var user: UserID?
    public var maxUploadSize: Int { FoodServer.maxUploadSize }

    public init(source: Source) { coreContext = .init(source: source) }
}

/// Resolves `Authorization: Bearer TOKEN` to a user, or answers 401. The token is never logged.
struct BearerAuthMiddleware: RouterMiddleware {
    let accounts: AccountStore

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") else { throw APIError.unauthorized }
        let token = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        guard let user = try accounts.user(forToken: token) else { throw APIError.unauthorized }
        var context = context
        context.user = user
        context.logger[metadataKey: "user"] = .string(user.rawValue)
        return try await next(request, context)
    }
}

/// The FoodMoment server: the CLI's pipeline and tables behind `/api/v1`.
public enum FoodServer {
    /// Set once from the configuration before the application starts (a request context cannot carry it in).
    nonisolated(unsafe) static var maxUploadSize = 20 << 20

    /// The application, ready to `runService()`; `onServerRunning` receives the bound port (0 in the
    /// configuration picks a free one).
    public static func application(_ config: ServerConfiguration, logger: Logger,
                                   onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> some ApplicationProtocol {
        try FileManager.default.createDirectory(atPath: config.dataDirectory, withIntermediateDirectories: true)
        maxUploadSize = config.maxBodyBytes
        let accounts = try AccountStore(path: config.accountsPath)
        let decoder = PhotoDecoder(options: DecodeOptions(minShortSide: 224, maxPixels: config.maxPixels, maxFileBytes: config.maxBodyBytes))
        // The nutrition tables are read once and shared; each analyzer needs its own recognizer (its own arena).
        let first = try MealAnalyzer.load(modelsDirectory: config.modelsDirectory, nutritionDirectory: config.nutritionDirectory,
                                          userDataDirectory: nil, decoder: decoder)
        let analyzers = try [first] + (1..<max(1, config.analyzers)).map { _ in
            MealAnalyzer(decoder: decoder, recognizer: try FoodRecognizer.load(
                modelsDirectory: config.modelsDirectory ?? ResourceLocator.modelsDirectory(), userDataDirectory: nil,
                portions: first.recognizer.portions), nutrition: first.nutrition)
        }
        guard let nutrition = first.nutrition else {
            throw APIError(.internalServerError, code: "no_nutrition_tables", "the nutrition tables did not load (nutrition-db/ or FOODMOMENT_NUTRITION_DB)")
        }
        let routes = Routes(pool: AnalyzerPool(analyzers), nutrition: nutrition)

        let router = Router(context: APIContext.self)
        router.add(middleware: ErrorShapeMiddleware())
        router.get("healthz") { _, _ in try JSONResponse.make(["status": "ok"]) }
        router.get("readyz") { _, _ in
            let ready = accounts.isReachable()
            return try JSONResponse.make(["status": ready ? "ready" : "not_ready"], status: ready ? .ok : .serviceUnavailable)
        }
        let api = router.group("api/v1").add(middleware: BearerAuthMiddleware(accounts: accounts))
        api.post("food/analyze", use: routes.analyze)
        api.get("food/search", use: routes.search)
        api.get("food/barcode/{code}", use: routes.barcode)
        let stores = UserStores(dataDirectory: config.dataDirectory)
        let meals = MealRoutes(stores: stores, nutrition: nutrition)
        api.post("meals", use: meals.create)
        api.get("meals", use: meals.list)
        api.get("meals/{id}", use: meals.get)
        api.delete("meals/{id}", use: meals.delete)
        let water = WaterRoutes(stores: stores)
        api.post("water", use: water.create)
        api.get("water", use: water.list)

        return Application(router: router,
                           configuration: .init(address: .hostname(config.host, port: config.port), serverName: "FoodMoment"),
                           onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? config.port) },
                           logger: logger)
    }
}

struct Routes: Sendable {
    let pool: AnalyzerPool
    let nutrition: NutritionDatabase

    static let photoTypes = ["image/jpeg", "image/png", "image/heic", "image/heif", "image/webp"]

    @Sendable func analyze(_ request: Request, context: APIContext) async throws -> Response {
        let type = request.headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard Self.photoTypes.contains(type) else {
            throw APIError(.unsupportedMediaType, code: "unsupported_media_type",
                           "send the photo's bytes as the body with Content-Type \(Self.photoTypes.joined(separator: ", ")) (got \(type.isEmpty ? "none" : type))")
        }
        var request = request
        let body = try await request.collectBody(upTo: context.maxUploadSize)
        let bytes = Array(body.readableBytesView)
        guard !bytes.isEmpty else { throw APIError.badRequest("empty_body", "the body is empty: send the photo's bytes") }
        let file = PhotoFile(name: "upload", bytes: bytes)
        let result = await pool.analyze(file)
        if let error = result.error {
            throw APIError(.unprocessableContent, code: "unreadable_image", "the photo could not be read: \(error.message)")
        }
        return try JSONResponse.make(AnalysisResponse(result))
    }

    struct SearchHit: Encodable {
        var foodId: String, name: String, brand: String, source: String, match: String
        var kcalPer100g: Double?, proteinGPer100g: Double?, carbsGPer100g: Double?, fatGPer100g: Double?
        var via: String?
        enum CodingKeys: String, CodingKey {
            case name, brand, source, match, via
            case foodId = "food_id", kcalPer100g = "kcal_per_100g", proteinGPer100g = "protein_g_per_100g"
            case carbsGPer100g = "carbs_g_per_100g", fatGPer100g = "fat_g_per_100g"
        }
        init(_ food: Food, match: String, via: String?) {
            foodId = food.id; name = food.name; brand = food.brand; source = food.source.dataType; self.match = match; self.via = via
            // The tables hold Float values: rounded to 0.001 like the CLI's JSON, not 3.190000057220459.
            func v(_ n: Nutrient) -> Double? { food.per100g[n].map { ($0 * 1000).rounded() / 1000 } }
            kcalPer100g = v(.energyKcal); proteinGPer100g = v(.protein); carbsGPer100g = v(.carbohydrate); fatGPer100g = v(.fat)
        }
    }

    @Sendable func search(_ request: Request, context: APIContext) async throws -> Response {
        let q = (request.uri.queryParameters.get("q") ?? "").trimmingCharacters(in: .whitespaces)
        guard !q.isEmpty, q.count <= 200 else {
            throw APIError.badRequest("invalid_query", "give what to look for as q (1–200 characters), e.g. /api/v1/food/search?q=banana")
        }
        let limitText = request.uri.queryParameters.get("limit")
        let limit = limitText.flatMap(Int.init) ?? 10
        guard (1...50).contains(limit), limitText == nil || Int(limitText!) != nil else {
            throw APIError.badRequest("invalid_limit", "limit must be a whole number from 1 to 50")
        }
        let hits = nutrition.search(q, limit: limit).map { SearchHit($0.food, match: $0.match.rawValue, via: $0.via) }
        return try JSONResponse.make(["results": hits])
    }

    @Sendable func barcode(_ request: Request, context: APIContext) async throws -> Response {
        let code = context.parameters.get("code") ?? ""
        let gtin: GTIN
        do { gtin = try GTIN.parse(code) } catch {
            throw APIError.badRequest("invalid_barcode", "\(code) is not a barcode: \(error.description) (send the 8, 12, 13 or 14 digits printed under it)")
        }
        guard let food = nutrition.product(gtin14: gtin.gtin14) else {
            throw APIError.notFound("no product with barcode \(gtin.gtin14) in the bundled Open Food Facts table")
        }
        return try JSONResponse.make(SearchHit(food, match: "barcode", via: nil))
    }
}
