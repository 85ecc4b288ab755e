import FoodServer
import Foundation
import GRDB
import Hummingbird
import Logging
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The repository (server/Tests/FoodServerTests/ServerTests.swift → three folders up).
let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

/// A real server on a free loopback port with its own data folder, driven over HTTP.
final class LiveServer: @unchecked Sendable {
    let base: String
    let data: String
    /// The store the server was given (PostgreSQL); nil: its own SQLite files under `data`.
    let store: (any ServerStore)?
    /// A database made for this server alone (FOODMOMENT_TEST_STORE=postgres), dropped by `stop()`.
    private let ownDatabase: TestPostgres.Database?
    private let task: Task<Void, any Error>

    /// `database`: a PostgreSQL database shared with other servers (instances); otherwise SQLite, or a database of its
    /// own when the suite runs on PostgreSQL.
    init(maxBodyBytes: Int = 20 << 20, logs: LogCapture? = nil, database: TestPostgres.Database? = nil, data shared: String? = nil,
         configure: (inout ServerConfiguration) -> Void = { _ in }) async throws {
        data = shared ?? NSTemporaryDirectory() + "foodmoment-server-" + UUID().uuidString
        var config = ServerConfiguration(dataDirectory: data)
        ownDatabase = database == nil && TestPostgres.everyServer ? try await TestPostgres.Database() : nil
        config.store = (database ?? ownDatabase)?.store
        store = config.store
        config.host = "127.0.0.1"
        config.port = 0
        config.maxBodyBytes = maxBodyBytes
        config.analyzers = 1
        config.modelsDirectory = repoRoot + "/models"
        config.nutritionDirectory = URL(fileURLWithPath: repoRoot + "/nutrition-db")
        configure(&config)
        var logger = logs.map { capture in Logger(label: "test", factory: { _ in CaptureHandler(capture: capture) }) } ?? Logger(label: "test")
        logger.logLevel = logs == nil ? .warning : .trace
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = try await FoodServer.application(config, logger: logger) { port in continuation.yield(port) }
        task = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw URLError(.cannotConnectToHost) }
        base = "http://127.0.0.1:\(port)"
    }

    func stop() async {
        task.cancel()
        _ = await task.result
        try? FileManager.default.removeItem(atPath: data)
        await ownDatabase?.drop()
    }

    func token(for user: String) async throws -> String {
        if let store { return try await store.createToken(forUser: user, now: Date()).token }
        return try AccountStore(path: data + "/accounts.sqlite").createToken(forUser: user).token
    }

    struct Reply {
        var status: Int
        var headers: [String: String]
        var json: [String: Any]
        var body: Data
    }

    func request(_ method: String, _ path: String, token: String? = nil, contentType: String? = nil, body: Data? = nil,
                 headers: [String: String] = [:]) async throws -> Reply {
        var r = URLRequest(url: URL(string: base + path)!)
        r.httpMethod = method
        for (k, v) in headers { r.setValue(v, forHTTPHeaderField: k) }
        if let token { r.setValue("Bearer " + token, forHTTPHeaderField: "Authorization") }
        if let contentType { r.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        r.httpBody = body
        let (data, response) = try await URLSession.shared.data(for: r)
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (k, v) in http.allHeaderFields { headers[String(describing: k).lowercased()] = String(describing: v) }
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return Reply(status: http.statusCode, headers: headers, json: json, body: data)
    }
}

/// Runs a small Hummingbird app (a stand-in for Apple's keys or an LLM) on a free loopback port.
func serveOnLoopback(_ router: Router<BasicRequestContext>, label: String) async -> (Task<Void, any Error>, Int) {
    let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
    var logger = Logger(label: label)
    logger.logLevel = .warning
    let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                          onServerRunning: { continuation.yield($0.localAddress?.port ?? 0) }, logger: logger)
    let task = Task { try await app.run() }
    var iterator = ports.makeAsyncIterator()
    return (task, await iterator.next() ?? 0)
}

/// Every log line a server wrote, with its metadata (to check what never appears in logs).
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func add(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

struct CaptureHandler: LogHandler {
    let capture: LogCapture
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        capture.add("\(event.level) \(event.message) \(all.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "))")
    }
}

/// `{"error": {"code", "message"}}` with a message that says something.
func errorCode(_ reply: LiveServer.Reply) -> String? {
    guard let error = reply.json["error"] as? [String: Any], let message = error["message"] as? String, message.count > 10 else { return nil }
    return error["code"] as? String
}

@Suite("The server over HTTP on loopback", .serialized)
struct ServerTests {
    @Test func healthAndReadinessNeedNoToken() async throws {
        let server = try await LiveServer()
        let health = try await server.request("GET", "/healthz")
        #expect(health.status == 200 && health.json["status"] as? String == "ok")
        let ready = try await server.request("GET", "/readyz")
        #expect(ready.status == 200 && ready.json["status"] as? String == "ready")
        await server.stop()
    }

    @Test func everyAPIRouteRefusesAMissingOrWrongToken() async throws {
        let server = try await LiveServer()
        let good = try await server.token(for: "alice")
        let routes = [("POST", "/api/v1/food/analyze"), ("GET", "/api/v1/food/search?q=banana"), ("GET", "/api/v1/food/barcode/5000112637922"),
                      ("POST", "/api/v1/meals"), ("GET", "/api/v1/meals?date=2026-11-26"), ("GET", "/api/v1/meals/abc"), ("DELETE", "/api/v1/meals/abc"),
                      ("PUT", "/api/v1/meals/abc"), ("POST", "/api/v1/water"), ("GET", "/api/v1/water?date=2026-11-26"),
                      ("GET", "/api/v1/stats/daily"), ("GET", "/api/v1/stats/weekly"), ("GET", "/api/v1/stats/monthly"),
                      ("GET", "/api/v1/stats/insights"), ("GET", "/api/v1/user/profile"), ("PUT", "/api/v1/user/profile"),
                      ("GET", "/api/v1/user/goals"), ("PUT", "/api/v1/user/goals"), ("POST", "/api/v1/user/weight"),
                      ("GET", "/api/v1/user/weight"), ("GET", "/api/v1/user/streaks"), ("GET", "/api/v1/user/achievements"),
                      ("DELETE", "/api/v1/user/account"), ("DELETE", "/api/v1/auth/account")]
        for (method, path) in routes {
            let none = try await server.request(method, path)
            #expect(none.status == 401 && errorCode(none) == "unauthorized", "\(method) \(path)")
            #expect(none.headers["www-authenticate"] == "Bearer")
            let wrong = try await server.request(method, path, token: "fm_" + String(good.dropFirst(3).reversed()))
            #expect(wrong.status == 401 && errorCode(wrong) == "unauthorized", "\(method) \(path)")
        }
        await server.stop()
    }

    @Test func tokensAreStoredHashedAndNamesChecked() throws {
        let dir = NSTemporaryDirectory() + "foodmoment-accounts-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try AccountStore(path: dir + "/accounts.sqlite")
        let a = try store.createToken(forUser: "alice"), b = try store.createToken(forUser: "bob"), a2 = try store.createToken(forUser: "alice")
        #expect(a.user == a2.user && a.user != b.user && a.token != a2.token)
        #expect(try store.user(forToken: a.token) == a.user && store.user(forToken: b.token) == b.user)
        #expect(try store.user(forToken: "fm_nope") == nil)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: dir + "/accounts.sqlite"))
        #expect(bytes.range(of: Data(a.token.utf8)) == nil, "the token itself must not be on disk")
        #expect(throws: AccountError.invalidUserName("bad name")) { try store.createToken(forUser: "bad name") }
        #expect(throws: AccountError.self) { try store.createToken(forUser: "") }
    }

    /// `serve token create` while the server holds the accounts file's write lock for a moment: it waits, then succeeds.
    @Test func aTokenIsCreatedWhileAnotherProcessHoldsTheLock() throws {
        let dir = NSTemporaryDirectory() + "foodmoment-accounts-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/accounts.sqlite"
        _ = try AccountStore(path: path).createToken(forUser: "alice")
        var configuration = GRDB.Configuration()
        configuration.allowsUnsafeTransactions = true  // the lock is held across two accesses
        let other = try DatabaseQueue(path: path, configuration: configuration)
        try other.writeWithoutTransaction { try $0.execute(sql: "BEGIN EXCLUSIVE") }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) {
            try? other.writeWithoutTransaction { try $0.execute(sql: "COMMIT") }
        }
        let store = try AccountStore(path: path)
        let bob = try store.createToken(forUser: "bob")
        #expect(try store.user(forToken: bob.token) == bob.user)
    }

    @Test func aPhotoIsAnalysedLikeTheCLIDoes() async throws {
        let server = try await LiveServer()
        let token = try await server.token(for: "alice")
        let photo = try Data(contentsOf: URL(fileURLWithPath: repoRoot + "/samples/banana.jpg"))
        let reply = try await server.request("POST", "/api/v1/food/analyze", token: token, contentType: "image/jpeg", body: photo)
        #expect(reply.status == 200)
        let foods = try #require(reply.json["detected_foods"] as? [[String: Any]])
        let first = try #require(foods.first)
        #expect(first["label"] as? String == "banana" && first["name"] as? String == "Banana" && first["name_zh"] as? String == "香蕉")
        #expect((first["grams"] as? Double ?? 0) > 0 && (first["calories"] as? Double ?? 0) > 0)
        #expect(first["bounding_box"] is [String: Any] && first["grams_source"] as? String == "box_area")
        #expect((reply.json["total_calories"] as? Double ?? 0) > 0 && reply.json["total_nutrition"] is [String: Any])
        #expect((reply.json["image_id"] as? String)?.count == 64)
        #expect((reply.json["ai_analysis"] as? String)?.contains("banana") == true && reply.json["tags"] is [Any])
        // The same photo as a file of multipart/form-data (what `curl -F photo=@banana.jpg` and most HTTP clients send).
        let boundary = "fm-\(UUID().uuidString)"
        var form = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nlunch\r\n".utf8)
        form += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"banana.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n".utf8)
        form += photo + Data("\r\n--\(boundary)--\r\n".utf8)
        let multipart = try await server.request("POST", "/api/v1/food/analyze", token: token,
                                                 contentType: "multipart/form-data; boundary=\(boundary)", body: form)
        #expect(multipart.status == 200 && multipart.json["image_id"] as? String == reply.json["image_id"] as? String)
        for (type, body, code) in [("multipart/form-data", form, "invalid_multipart"),
                                   ("multipart/form-data; boundary=\(boundary)", Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nb\r\n--\(boundary)--\r\n".utf8), "empty_body"),
                                   ("multipart/form-data; boundary=\(boundary)", Data("garbage".utf8), "empty_body"),
                                   // A header name with a non-ASCII byte crashed MultipartKit (and the server) before.
                                   ("multipart/form-data; boundary=\(boundary)",
                                    Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\nX-\u{00e9}: 1\r\n\r\nb\r\n--\(boundary)--\r\n".utf8),
                                    "invalid_multipart")] {
            let bad = try await server.request("POST", "/api/v1/food/analyze", token: token, contentType: type, body: body)
            #expect(bad.status == 400 && errorCode(bad) == code, "\(type): \(bad.status) \(String(decoding: bad.body, as: UTF8.self))")
        }
        await server.stop()
    }

    @Test func badPhotosGetA4xxThatSaysWhatToChange() async throws {
        let server = try await LiveServer(maxBodyBytes: 64 << 10)
        let token = try await server.token(for: "alice")
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: repoRoot + "/samples/banana.jpg"))
        let cases: [(String?, Data, Int, String)] = [
            ("text/plain", Data("hello".utf8), 415, "unsupported_media_type"),
            (nil, jpeg, 415, "unsupported_media_type"),
            ("image/jpeg", Data(), 400, "empty_body"),
            ("image/jpeg", Data("not a jpeg at all".utf8), 422, "unreadable_image"),
            ("image/jpeg", jpeg.prefix(600), 422, "unreadable_image"),
            ("image/png", Data(repeating: 7, count: 200 << 10), 413, "body_too_large"),
        ]
        for (type, body, status, code) in cases {
            let reply = try await server.request("POST", "/api/v1/food/analyze", token: token, contentType: type, body: body)
            #expect(reply.status == status && errorCode(reply) == code, "\(type ?? "no type"), \(body.count) bytes: \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        }
        // The server is still there and still answers.
        #expect(try await server.request("POST", "/api/v1/food/analyze", token: token, contentType: "image/jpeg", body: jpeg).status == 200)
        await server.stop()
    }

    @Test func searchAndBarcodes() async throws {
        let server = try await LiveServer()
        let token = try await server.token(for: "alice")
        let hits = try await server.request("GET", "/api/v1/food/search?q=banana&limit=3", token: token)
        let results = try #require(hits.json["results"] as? [[String: Any]])
        #expect(hits.status == 200 && (1...3).contains(results.count))
        #expect((results.first?["name"] as? String)?.lowercased().contains("banana") == true && results.first?["kcal_per_100g"] is Double)
        for hit in results {
            for key in ["kcal_per_100g", "protein_g_per_100g", "carbs_g_per_100g", "fat_g_per_100g"] {
                let v = hit[key] as? Double ?? 0
                #expect(abs(v * 1000 - (v * 1000).rounded()) < 1e-6, "\(key) \(v) is rounded to 0.001")
            }
        }
        let zh = try await server.request("GET", "/api/v1/food/search?q=%E9%A6%99%E8%95%89", token: token)  // 香蕉
        #expect(((zh.json["results"] as? [[String: Any]])?.first?["name"] as? String)?.lowercased().contains("banana") == true)
        for (query, code) in [("", "invalid_query"), ("?q=banana&limit=0", "invalid_limit"), ("?q=banana&limit=lots", "invalid_limit")] {
            let reply = try await server.request("GET", "/api/v1/food/search" + query, token: token)
            #expect(reply.status == 400 && errorCode(reply) == code, "\(query)")
        }
        let nutella = try await server.request("GET", "/api/v1/food/barcode/00000080050865", token: token)
        #expect(nutella.status == 200 && nutella.json["name"] as? String == "Nutella" && nutella.json["food_id"] as? String == "off:00000080050865")
        let bad = try await server.request("GET", "/api/v1/food/barcode/12345", token: token)
        #expect(bad.status == 400 && errorCode(bad) == "invalid_barcode")
        let checkDigit = try await server.request("GET", "/api/v1/food/barcode/5000112637923", token: token)
        #expect(checkDigit.status == 400 && errorCode(checkDigit) == "invalid_barcode")
        let unknown = try await server.request("GET", "/api/v1/food/barcode/00000000000000", token: token)
        #expect(unknown.status == 404 && errorCode(unknown) == "not_found")
        let nowhere = try await server.request("GET", "/api/v1/nowhere", token: token)
        #expect(nowhere.status == 404 && errorCode(nowhere) == "not_found")
        await server.stop()
    }

    @Test func mealsAreEachUsersOwn() async throws {
        let server = try await LiveServer()
        let alice = try await server.token(for: "alice"), bob = try await server.token(for: "bob")
        let body = Data(#"{"foods": [{"food": "banana", "grams": 120}, {"food": "rice_dish"}], "time": "2026-11-26T07:30:00Z", "tz": "Europe/Paris"}"#.utf8)
        let created = try await server.request("POST", "/api/v1/meals", token: alice, contentType: "application/json", body: body)
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        let id = try #require(created.json["id"] as? String)
        let foods = try #require(created.json["foods"] as? [[String: Any]])
        #expect(foods.count == 2 && foods[0]["grams"] as? Double == 120 && foods[1]["grams"] as? Double == 163)
        #expect(created.json["type"] as? String == "breakfast", "08:30 in Paris is breakfast")
        #expect(((created.json["totals"] as? [String: Any])?["kcal"] as? Double ?? 0) > 300)
        // Alice sees it by id and on its day (in her time zone); Bob gets a 404 for the same id and an empty day.
        #expect(try await server.request("GET", "/api/v1/meals/\(id)", token: alice).status == 200)
        let day = try await server.request("GET", "/api/v1/meals?date=2026-11-26&tz=Europe/Paris", token: alice)
        #expect((day.json["meals"] as? [[String: Any]])?.map { $0["id"] as? String } == [id])
        let bobsView = try await server.request("GET", "/api/v1/meals/\(id)", token: bob)
        #expect(bobsView.status == 404 && errorCode(bobsView) == "not_found")
        let bobsDelete = try await server.request("DELETE", "/api/v1/meals/\(id)", token: bob)
        #expect(bobsDelete.status == 404 && errorCode(bobsDelete) == "not_found")
        let bobsDay = try await server.request("GET", "/api/v1/meals?date=2026-11-26&tz=Europe/Paris", token: bob)
        #expect(bobsDay.status == 200 && (bobsDay.json["meals"] as? [Any])?.isEmpty == true)
        // A prefix of an id is not an id.
        #expect(try await server.request("GET", "/api/v1/meals/\(id.prefix(8))", token: alice).status == 404)
        // Still Alice's after Bob's attempts; then she deletes it.
        #expect(try await server.request("DELETE", "/api/v1/meals/\(id)", token: alice).status == 204)
        #expect(try await server.request("GET", "/api/v1/meals/\(id)", token: alice).status == 404)
        await server.stop()
    }

    @Test func badMealsGetA4xxThatSaysWhatToChange() async throws {
        let server = try await LiveServer()
        let token = try await server.token(for: "alice")
        let cases: [(String, Int, String)] = [
            ("not json", 400, "invalid_body"),
            (#"{"time": "2026-11-26T07:30:00Z"}"#, 400, "invalid_body"),
            (#"{"foods": []}"#, 400, "invalid_foods"),
            (#"{"foods": [{"food": "banana"}], "type": "brunch"}"#, 400, "invalid_body"),
            (#"{"foods": [{"food": "banana"}], "time": "yesterday"}"#, 400, "invalid_body"),
            (#"{"foods": [{"food": "banana"}], "tz": "Mars/Olympus"}"#, 400, "invalid_time_zone"),
            (#"{"foods": [{"food": "qqqzzzxxx"}]}"#, 422, "unknown_food"),
            (#"{"foods": [{"food": "banana", "grams": -5}]}"#, 400, "invalid_foods"),
            (#"{"foods": [{"food": " "}]}"#, 400, "invalid_foods"),
        ]
        for (body, status, code) in cases {
            let reply = try await server.request("POST", "/api/v1/meals", token: token, contentType: "application/json", body: Data(body.utf8))
            #expect(reply.status == status && errorCode(reply) == code, "\(body): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        }
        for query in ["", "?date=2026-13-01", "?date=26-11-2026", "?date=2026-11-26&tz=Nowhere"] {
            let reply = try await server.request("GET", "/api/v1/meals" + query, token: token)
            #expect(reply.status == 400 && errorCode(reply) != nil, "\(query)")
        }
        await server.stop()
    }

    @Test func waterIsEachUsersOwnAndAddsUp() async throws {
        let server = try await LiveServer()
        let alice = try await server.token(for: "alice"), bob = try await server.token(for: "bob")
        for (ml, time) in [(250.0, "2026-11-26T06:00:00Z"), (500.0, "2026-11-26T20:00:00Z"), (300.0, "2026-11-26T23:30:00Z")] {
            let body = Data(#"{"milliliters": \#(ml), "time": "\#(time)"}"#.utf8)
            let reply = try await server.request("POST", "/api/v1/water", token: alice, contentType: "application/json", body: body)
            #expect(reply.status == 201 && reply.json["milliliters"] as? Double == ml)
        }
        // 20:00 and 23:30 UTC are the next day in Shanghai (UTC+8): a day's total follows the caller's time zone.
        let utc = try await server.request("GET", "/api/v1/water?date=2026-11-26", token: alice)
        #expect(utc.json["total_ml"] as? Double == 1050 && (utc.json["water"] as? [Any])?.count == 3)
        let shanghai = try await server.request("GET", "/api/v1/water?date=2026-11-26&tz=Asia/Shanghai", token: alice)
        #expect(shanghai.json["total_ml"] as? Double == 250)
        let next = try await server.request("GET", "/api/v1/water?date=2026-11-27&tz=Asia/Shanghai", token: alice)
        #expect(next.json["total_ml"] as? Double == 800)
        let bobs = try await server.request("GET", "/api/v1/water?date=2026-11-26", token: bob)
        #expect(bobs.status == 200 && bobs.json["total_ml"] as? Double == 0)
        for body in [#"{"milliliters": 0}"#, #"{"milliliters": 20000}"#, #"{"ml": 250}"#, "250"] {
            let reply = try await server.request("POST", "/api/v1/water", token: alice, contentType: "application/json", body: Data(body.utf8))
            #expect(reply.status == 400 && errorCode(reply) != nil, "\(body): \(reply.status)")
        }
        await server.stop()
    }
}
