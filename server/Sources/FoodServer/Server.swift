import Barcodes
import FoodCore
import FoodMoment
import FoodRecognition
import FoodVision
import Foundation
import HTTPTypes
import Hummingbird
import ImageCodecs
import LLMRefiner
import Logging
import Metrics
import Nutrition
import Prometheus

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
    /// The executable's environment, from which folders left nil and the network's arithmetic are found
    /// (`FOODMOMENT_MODELS`, `FOODMOMENT_NUTRITION_DB`, `FOODMOMENT_PRECISION`); the library reads none itself.
    public var environment: [String: String] = [:]
    /// The web app's folder (`web/`, with `index.html`), served at `/`; nil: no web app (`/` is a 404).
    public var webDirectory: String?
    /// Longest an analysis may wait for an analyzer and run, seconds (then 503 with Retry-After).
    public var analyzeTimeout: Double = 60
    /// Photos one user may analyse per minute (per instance).
    public var analyzePerMinute: Int = 30
    /// Sign in with Apple: the app's bundle id (the identity token's `aud`); nil turns `/auth/apple` off.
    public var appleBundleID: String?
    public var appleKeySetURL = URL(string: "https://appleid.apple.com/auth/keys")!
    /// Sign in with Apple in the browser: the Services ID registered for the web app (the web token's `aud`); nil: the
    /// web app offers only a personal token. Needs `appleBundleID` (Apple's keys and the account are the same).
    public var appleWebClientID: String?
    /// Where the web app sends a person to sign in with Apple (tests point it at a stand-in on loopback).
    public var appleAuthorizeURL = URL(string: "https://appleid.apple.com/auth/authorize")!
    public var keySetFetcher: (any KeySetFetcher)?
    /// Least time between two fetches of Apple's keys caused by an unknown key id, seconds.
    public var appleKeysRefetchInterval: TimeInterval = 60
    /// Secret for our access tokens (at least 32 bytes; every instance must share it); nil: DATA/jwt-secret.
    public var jwtSecret: String?
    public var accessTokenLifetime: TimeInterval = 900
    public var refreshTokenLifetime: TimeInterval = 60 * 86_400
    /// The LLM for `refine=true` on analyze (the CLI's settings: FOODMOMENT_LLM_* or llm.json); nil: refine is refused.
    public var llm: LLMClient?
    /// Longest side of a photo sent to the LLM.
    public var llmMaxSide: Int = 768
    /// Where `GET /metrics` reads from; the executable bootstraps swift-metrics with it. nil: no /metrics.
    public var metrics: PrometheusCollectorRegistry?
    /// An idle connection is closed after this many seconds (a slow client cannot hold one forever).
    public var idleTimeout: Double = 60
    /// Where accounts and diaries are kept; nil: SQLite under `dataDirectory` (`LocalStore`). Photos stay in files.
    public var store: (any ServerStore)?

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

    /// The analysis, or a 503 when waiting for an analyzer plus analysing take longer than `timeout`. A photo whose
    /// caller has been answered is not analysed once its turn comes; one already running finishes and frees its analyzer.
    nonisolated func analyze(_ file: PhotoFile, timeout: Duration, personal: PrototypeMatcher? = nil) async throws -> PhotoResult {
        try await run(timeout: timeout) { $0.analyze(file, personal: personal) }
    }

    /// `work` on a free analyzer (analysis, or the embedding of a corrected meal's photo), with the same timeout rule.
    nonisolated func run<T: Sendable>(timeout: Duration, _ work: @escaping @Sendable (MealAnalyzer) -> T) async throws -> T {
        let answer = OneAnswer<T>()
        let deadline = ContinuousClock.now + timeout
        let late = APIError(.serviceUnavailable, code: "timeout",
                            "the server is busy: the photo was not analysed within \(timeout.components.seconds) s; try again",
                            headers: [.retryAfter: "5"])
        let timer = Task {
            try await Task.sleep(until: deadline)
            answer.give(.failure(late))
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            answer.waitWith(continuation)
            Task {
                let analyzer = await self.acquire()
                guard !answer.isGiven, ContinuousClock.now < deadline else {
                    answer.give(.failure(late))
                    await self.release(analyzer)
                    return
                }
                DispatchQueue.global().async {
                    let result = work(analyzer)
                    answer.give(.success(result))
                    Task { await self.release(analyzer) }
                }
            }
        }
    }
}

/// A continuation resumed by whichever comes first (the answer or the timeout); later gives are dropped.
final class OneAnswer<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var early: Result<T, any Error>?
    private var given = false

    var isGiven: Bool { lock.withLock { given } }

    func waitWith(_ c: CheckedContinuation<T, any Error>) {
        lock.lock()
        if let early { lock.unlock(); c.resume(with: early); return }
        continuation = c
        lock.unlock()
    }

    func give(_ result: Result<T, any Error>) {
        lock.lock()
        guard !given else { lock.unlock(); return }
        given = true
        if let c = continuation { continuation = nil; lock.unlock(); c.resume(with: result) } else { early = result; lock.unlock() }
    }
}

/// The request context: who is calling (set by the bearer-token middleware) and how large a body may be.
public struct APIContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var user: UserID?
    /// The time zone of the caller's profile, for lists and stats asked for without `tz=`.
    public var profileTimeZone: TimeZone?
    /// Largest body a route reads; set per request from the configuration by `BodyLimitMiddleware`.
    public var maxUploadSize: Int = 20 << 20

    public init(source: Source) { coreContext = .init(source: source) }
}

/// Gives each request this server's body limit (a context is made by the framework, which knows nothing of it).
struct BodyLimitMiddleware: RouterMiddleware {
    let maxBodyBytes: Int

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        var context = context
        context.maxUploadSize = maxBodyBytes
        return try await next(request, context)
    }
}

/// Resolves `Authorization: Bearer TOKEN` — a personal token (`fm_…`) or one of our access tokens — to a user who still
/// exists, or answers 401. The token is never logged.
struct BearerAuthMiddleware: RouterMiddleware {
    let accounts: any Accounts
    let issuer: TokenIssuer

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization], header.lowercased().hasPrefix("bearer ") else { throw APIError.unauthorized }
        let token = String(header.dropFirst("bearer ".count)).trimmingCharacters(in: .whitespaces)
        let found: UserID? = token.hasPrefix("fm_") ? try await accounts.user(forToken: token) : await issuer.user(forAccessToken: token)
        guard let user = found, let session = try await accounts.session(user) else { throw APIError.unauthorized }
        var context = context
        context.user = user
        context.profileTimeZone = session.timeZone.flatMap(TimeZone.init(identifier:))
        context.logger[metadataKey: "user"] = .string(user.rawValue)
        return try await next(request, context)
    }
}

/// The FoodMoment server: the CLI's pipeline and tables behind `/api/v1`.
public enum FoodServer {
    /// The application, ready to `runService()`; `onServerRunning` receives the bound port (0 in the
    /// configuration picks a free one).
    public static func application(_ config: ServerConfiguration, logger: Logger,
                                   onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws -> some ApplicationProtocol {
        try FileManager.default.createDirectory(atPath: config.dataDirectory, withIntermediateDirectories: true)
        let store: any ServerStore = try config.store ?? LocalStore(dataDirectory: config.dataDirectory)
        let folders = UserFolders(dataDirectory: config.dataDirectory)
        let decoder = PhotoDecoder(options: DecodeOptions(minShortSide: 224, maxPixels: config.maxPixels, maxFileBytes: config.maxBodyBytes))
        // The nutrition tables and the model's weights are read once and shared; each analyzer needs its own recognizer
        // (its own activation buffers).
        let first = try MealAnalyzer.load(environment: config.environment, modelsDirectory: config.modelsDirectory,
                                          nutritionDirectory: config.nutritionDirectory, decoder: decoder)
        let analyzers = first.recognizer.forWorkers(config.analyzers).map {
            MealAnalyzer(decoder: decoder, recognizer: $0, nutrition: first.nutrition)
        }
        guard let nutrition = first.nutrition else {
            throw APIError(.internalServerError, code: "no_nutrition_tables", "the nutrition tables did not load (nutrition-db/ or FOODMOMENT_NUTRITION_DB)")
        }
        let routes = Routes(pool: AnalyzerPool(analyzers), nutrition: nutrition, folders: folders, timeout: config.analyzeTimeout,
                            limiter: RateLimiter(perMinute: config.analyzePerMinute),
                            refiner: config.llm.map { PhotoRefiner(client: $0, nutrition: nutrition, maxSide: config.llmMaxSide) })
        let secret = try TokenIssuer.secret(environment: config.jwtSecret, dataDirectory: config.dataDirectory)
        let issuer = await TokenIssuer(secret: secret, accessLifetime: config.accessTokenLifetime,
                                       refreshLifetime: config.refreshTokenLifetime, accounts: store)
        let apple = config.appleBundleID.map {
            AppleIdentityVerifier(keySetURL: config.appleKeySetURL, audiences: [$0] + (config.appleWebClientID.map { [$0] } ?? []),
                                  fetcher: config.keySetFetcher ?? NoKeySetFetcher(), refetchInterval: config.appleKeysRefetchInterval)
        }
        let auth = AuthRoutes(apple: apple, issuer: issuer, store: store, folders: folders)

        let router = Router(context: APIContext.self)
        router.add(middleware: BodyLimitMiddleware(maxBodyBytes: config.maxBodyBytes))
        router.add(middleware: ErrorShapeMiddleware())
        router.add(middleware: LogRequestsMiddleware(.info))
        if config.metrics != nil { router.add(middleware: MetricsMiddleware()) }
        router.get("healthz") { _, _ in try JSONResponse.make(["status": "ok"]) }
        router.get("readyz") { _, _ in
            let ready = await store.isReachable()
            return try JSONResponse.make(["status": ready ? "ready" : "not_ready"], status: ready ? .ok : .serviceUnavailable)
        }
        if let registry = config.metrics {
            router.get("metrics") { _, _ in
                Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                         body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
            }
        }
        if let dir = config.webDirectory, let web = WebApp(directory: dir) { web.register(on: router) }
        let methods = SignInMethods(apple: config.appleBundleID == nil ? nil : config.appleWebClientID.map {
            SignInMethods.Apple(clientID: $0, authorizeURL: config.appleAuthorizeURL.absoluteString)
        }, refine: config.llm != nil)
        router.get("api/v1/auth/methods") { _, _ in try JSONResponse.make(methods) }
        router.post("api/v1/auth/apple", use: auth.signInWithApple)
        router.post("api/v1/auth/refresh", use: auth.refresh)
        let api = router.group("api/v1")
            .add(middleware: BearerAuthMiddleware(accounts: store, issuer: issuer))
            .add(middleware: IdempotencyMiddleware(accounts: store))
        api.delete("auth/account", use: auth.deleteAccount)
        api.post("food/analyze", use: routes.analyze)
        api.get("food/search", use: routes.search)
        api.get("food/barcode/{code}", use: routes.barcode)
        api.get("images/{id}", use: routes.image)
        let meals = MealRoutes(store: store, nutrition: nutrition, folders: folders, pool: routes.pool, timeout: config.analyzeTimeout,
                               logger: logger)
        api.post("meals", use: meals.create)
        api.get("meals", use: meals.list)
        api.get("meals/search", use: meals.search)
        api.get("export", use: meals.export)
        api.get("meals/{id}", use: meals.get)
        api.put("meals/{id}", use: meals.update)
        api.delete("meals/{id}", use: meals.delete)
        let water = WaterRoutes(store: store)
        let sync = SyncRoutes(store: store)
        api.post("sync/push", use: sync.push)
        api.get("sync/changes", use: sync.changes)
        api.post("water", use: water.create)
        api.get("water", use: water.list)
        let stats = StatsRoutes(store: store, llm: config.llm)
        api.get("stats/daily", use: stats.daily)
        api.get("stats/weekly", use: stats.weekly)
        api.get("stats/monthly", use: stats.monthly)
        api.get("stats/insights", use: stats.insights)
        let user = UserRoutes(store: store)
        api.get("user/profile", use: user.profile)
        api.put("user/profile", use: user.updateProfile)
        api.get("user/goals", use: user.goals)
        api.put("user/goals", use: user.updateGoals)
        api.post("user/weight", use: user.addWeight)
        api.get("user/weight", use: user.weights)
        api.get("user/streaks", use: user.streaks)
        api.get("user/achievements", use: user.achievements)
        let learning = LearningRoutes(folders: folders, logger: logger)
        api.get("user/learning", use: learning.get)
        api.put("user/learning", use: learning.update)
        api.delete("user/learning/foods", use: learning.forgetAll)
        api.delete("user/learning/foods/{label}", use: learning.forget)
        api.delete("user/account", use: auth.deleteAccount)

        return Application(router: router,
                           server: .http1(configuration: .init(idleTimeout: .milliseconds(Int64(config.idleTimeout * 1000)))),
                           configuration: .init(address: .hostname(config.host, port: config.port), serverName: "FoodMoment"),
                           onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? config.port) },
                           logger: logger)
    }
}

struct Routes: Sendable {
    let pool: AnalyzerPool
    let taughtFoods = TaughtFoodsCache()
    let nutrition: NutritionDatabase
    let folders: UserFolders
    let timeout: Double
    let limiter: RateLimiter
    let refiner: PhotoRefiner?

    static let photoTypes = ["image/jpeg", "image/png", "image/heic", "image/heif", "image/webp"]

    @Sendable func analyze(_ request: Request, context: APIContext) async throws -> Response {
        let type = request.headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard Self.photoTypes.contains(type) || type == "multipart/form-data" else {
            throw APIError(.unsupportedMediaType, code: "unsupported_media_type",
                           "send the photo's bytes as the body with Content-Type \(Self.photoTypes.joined(separator: ", ")), or as a file of multipart/form-data (got \(type.isEmpty ? "none" : type))")
        }
        let storePhoto = try Self.flag(request, "store_photo")
        let refine = try Self.flag(request, "refine")
        if refine, refiner == nil {
            throw APIError.badRequest("refine_unavailable",
                                      "this server has no LLM configured (FOODMOMENT_LLM_PROVIDER and FOODMOMENT_LLM_MODEL, or llm.json): leave refine out")
        }
        let user = try MealRoutes.user(context)
        var request = request
        let body = try await request.collectBody(upTo: context.maxUploadSize)
        let bytes = type == "multipart/form-data"
            ? try MultipartPhoto.photo(body, contentType: request.headers[.contentType] ?? "") : Array(body.readableBytesView)
        guard !bytes.isEmpty else { throw APIError.badRequest("empty_body", "the body is empty: send the photo's bytes") }
        if let wait = await limiter.take(user) {
            throw APIError(.tooManyRequests, code: "rate_limited",
                           "at most \(limiter.perMinute) photos a minute: retry in \(wait) s", headers: [.retryAfter: String(wait)])
        }
        let file = PhotoFile(name: "upload", bytes: bytes)
        // The caller's own taught foods; a store that cannot be read is logged and the photo analysed without it.
        var personal: PrototypeMatcher?
        do { personal = try taughtFoods.matcher(for: user, in: folders) } catch {
            context.logger.warning("taught foods unreadable; analysing without them", metadata: ["error": "\(error)"])
        }
        var result = try await pool.analyze(file, timeout: .milliseconds(Int64(timeout * 1000)), personal: personal)
        if refine, let refiner, result.error == nil {
            // Identity and grams only; nutrition comes from the tables. A failure keeps the on-device answer and says why.
            result = await refiner.refine(result, bytes: bytes)
        }
        if let error = result.error {
            throw APIError(.unprocessableContent, code: "unreadable_image", "the photo could not be read: \(error.message)")
        }
        for (stage, ms) in result.timings?.milliseconds ?? [:] {
            Timer(label: "foodmoment_analyze_stage", dimensions: [("stage", stage.rawValue)]).recordNanoseconds(Int64(ms * 1e6))
        }
        var response = AnalysisResponse(result)
        if storePhoto {
            // Kept only when asked, under the caller's own folder (removed with the account); named by content.
            let ext = ["jpeg": "jpg", "png": "png", "heic": "heic", "heif": "heic", "webp": "webp"][result.decode?.format ?? ""] ?? "img"
            try folders.savePhoto(bytes, named: response.imageId + "." + ext, for: user)
            response.photoStored = true
            response.imageURL = "/api/v1/images/" + response.imageId
        }
        return try JSONResponse.make(response)
    }

    /// The `q` of a search, trimmed: 1 to `max` characters, else a 400 that shows `example`.
    static func query(_ request: Request, max: Int, what: String, example: String) throws -> String {
        let q = (request.uri.queryParameters.get("q") ?? "").trimmingCharacters(in: .whitespaces)
        guard !q.isEmpty, q.count <= max else {
            throw APIError.badRequest("invalid_query", "give \(what) as q (1–\(max) characters), e.g. \(example)")
        }
        return q
    }

    /// The `limit` of a list: a whole number in `range` (absent: `fallback`), else a 400.
    static func limit(_ request: Request, in range: ClosedRange<Int>, default fallback: Int) throws -> Int {
        guard let text = request.uri.queryParameters.get("limit") else { return fallback }
        guard let v = Int(text), range.contains(v) else {
            throw APIError.badRequest("invalid_limit", "limit must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return v
    }

    /// A boolean query parameter: absent is false; anything but true/false/1/0 is a 400.
    static func flag(_ request: Request, _ name: String) throws -> Bool {
        guard let text = request.uri.queryParameters.get(name) else { return false }
        switch text.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: throw APIError.badRequest("invalid_\(name)", "\(name) must be true or false, not \(text)")
        }
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

    /// `GET /api/v1/images/{id}`: a photo the caller kept (`store_photo=true`); another user's, or none, is a 404.
    @Sendable func image(_ request: Request, context: APIContext) async throws -> Response {
        let user = try MealRoutes.user(context)
        let id = context.parameters.get("id") ?? ""
        guard let (bytes, ext) = folders.photo(id, for: user) else {
            throw APIError.notFound("no kept photo \(id.prefix(64)) for you (photos are kept with store_photo=true on analyze)")
        }
        let type = ["jpg": "image/jpeg", "png": "image/png", "heic": "image/heic", "webp": "image/webp"][ext] ?? "application/octet-stream"
        return Response(status: .ok, headers: [.contentType: type, .cacheControl: "private, max-age=86400",
                                               HTTPField.Name("X-Content-Type-Options")!: "nosniff"],
                        body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    @Sendable func search(_ request: Request, context: APIContext) async throws -> Response {
        let q = try Self.query(request, max: 200, what: "what to look for", example: "/api/v1/food/search?q=banana")
        let limit = try Self.limit(request, in: 1...50, default: 10)
        let prefix = try Self.flag(request, "prefix")
        let hits = nutrition.search(q, limit: limit, prefix: prefix).map { SearchHit($0.food, match: $0.match.rawValue, via: $0.via) }
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
