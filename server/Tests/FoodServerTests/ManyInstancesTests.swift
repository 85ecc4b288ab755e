import FoodServer
import Foundation
import PostgresNIO
import Testing

/// Several `serve` instances on one PostgreSQL, requests alternating between them: what one wrote, another reads;
/// tokens, refresh-token families and Idempotency-Keys hold across instances because they live in the database.
@Suite("Many instances, one PostgreSQL", .serialized, .enabled(if: postgresAvailable))
struct ManyInstancesTests {
    /// Two (or more) servers on one new database and one shared data folder (photos), as behind a load balancer.
    static func instances(_ n: Int, _ body: ([LiveServer], TestPostgres.Database) async throws -> Void) async throws {
        let database = try await TestPostgres.Database()
        let data = NSTemporaryDirectory() + "foodmoment-instances-" + UUID().uuidString
        var servers: [LiveServer] = []
        do {
            for _ in 0..<n { servers.append(try await LiveServer(database: database, data: data)) }
            try await body(servers, database)
        } catch {
            for s in servers { await s.stop() }
            await database.drop()
            throw error
        }
        for s in servers { await s.stop() }
        await database.drop()
    }

    @Test func aMealWrittenThroughOneIsReadEditedAndDeletedThroughTheOthers() async throws {
        try await Self.instances(3) { s, _ in
            let alice = try await s[0].token(for: "alice"), bob = try await s[1].token(for: "bob")
            let created = try await s[0].request("POST", "/api/v1/meals", token: alice, contentType: "application/json",
                                                 body: json(#"{"foods": [{"food": "banana", "grams": 120}], "time": "2026-11-26T07:30:00Z"}"#))
            #expect(created.status == 201)
            let id = try #require(created.json["id"] as? String)
            let read = try await s[1].request("GET", "/api/v1/meals/\(id)", token: alice)
            let again = try await s[2].request("GET", "/api/v1/meals/\(id)", token: alice)
            #expect(read.status == 200 && read.body == again.body)
            #expect(try await s[2].request("GET", "/api/v1/meals/\(id)", token: bob).status == 404, "Bob must not see Alice's meal on any instance")
            let edited = try await s[2].request("PUT", "/api/v1/meals/\(id)", token: alice, contentType: "application/json",
                                                body: json(#"{"foods": [{"index": 0, "grams": 60}]}"#))
            #expect(edited.status == 200)
            let day = try await s[0].request("GET", "/api/v1/meals?date=2026-11-26", token: alice)
            let foods = (day.json["meals"] as? [[String: Any]])?.first?["foods"] as? [[String: Any]]
            #expect(foods?.first?["grams"] as? Double == 60)
            let stats = try await s[1].request("GET", "/api/v1/stats/daily?date=2026-11-26", token: alice)
            #expect(stats.status == 200 && ((stats.json["current"] as? [String: Any])?["meals"] as? Int) == 1)
            #expect(try await s[1].request("DELETE", "/api/v1/meals/\(id)", token: alice).status == 204)
            #expect(try await s[0].request("GET", "/api/v1/meals/\(id)", token: alice).status == 404)
        }
    }

    @Test func refreshRotationAndReuseDetectionHoldAcrossInstances() async throws {
        try await Self.instances(2) { s, db in
            let (user, _) = try await db.store.createToken(forUser: "carol", now: Date())
            let first = try await db.store.createRefreshToken(for: user, family: nil, lifetime: 3600, now: Date())
            let other = try await db.store.createRefreshToken(for: user, family: nil, lifetime: 3600, now: Date())
            let rotated = try await s[0].request("POST", "/api/v1/auth/refresh", contentType: "application/json",
                                                 body: json(#"{"refresh_token": "\#(first)"}"#))
            #expect(rotated.status == 200)
            let next = try #require(rotated.json["refresh_token"] as? String)
            let access = try #require(rotated.json["access_token"] as? String)
            // The access token signed by one instance is good on the other (one shared secret).
            #expect(try await s[1].request("GET", "/api/v1/user/profile", token: access).status == 200)
            // The used token comes back on the other instance: the family is revoked there, so `next` stops working too.
            let reused = try await s[1].request("POST", "/api/v1/auth/refresh", contentType: "application/json",
                                                body: json(#"{"refresh_token": "\#(first)"}"#))
            #expect(reused.status == 401 && errorCode(reused) == "refresh_token_reused")
            let afterRevoke = try await s[0].request("POST", "/api/v1/auth/refresh", contentType: "application/json",
                                                     body: json(#"{"refresh_token": "\#(next)"}"#))
            #expect(afterRevoke.status == 401)
            // Another sign-in's family is untouched.
            #expect(try await s[1].request("POST", "/api/v1/auth/refresh", contentType: "application/json",
                                           body: json(#"{"refresh_token": "\#(other)"}"#)).status == 200)
        }
    }

    @Test func twoInstancesRotatingOneTokenAtOnceNeverBothSucceed() async throws {
        try await Self.instances(2) { s, db in
            let (user, _) = try await db.store.createToken(forUser: "dan", now: Date())
            for _ in 0..<5 {
                let token = try await db.store.createRefreshToken(for: user, family: nil, lifetime: 3600, now: Date())
                let body = json(#"{"refresh_token": "\#(token)"}"#)
                async let a = s[0].request("POST", "/api/v1/auth/refresh", contentType: "application/json", body: body)
                async let b = s[1].request("POST", "/api/v1/auth/refresh", contentType: "application/json", body: body)
                let statuses = [try await a.status, try await b.status].sorted()
                #expect(statuses == [200, 401], "one rotation wins, the other is a reuse: \(statuses)")
            }
        }
    }

    @Test func anIdempotencyKeyRetriedOnAnotherInstanceCreatesNothingTwice() async throws {
        try await Self.instances(2) { s, _ in
            let alice = try await s[0].token(for: "alice")
            let body = json(#"{"foods": [{"food": "banana", "grams": 100}], "time": "2026-11-20T12:00:00Z"}"#)
            let key = ["Idempotency-Key": UUID().uuidString]
            let first = try await s[0].request("POST", "/api/v1/meals", token: alice, contentType: "application/json", body: body, headers: key)
            let retry = try await s[1].request("POST", "/api/v1/meals", token: alice, contentType: "application/json", body: body, headers: key)
            #expect(first.status == 201 && retry.status == 201 && retry.headers["idempotent-replayed"] == "true")
            #expect(first.body == retry.body)
            // Racing the same key on both instances at once: one runs, the other replays or is told to wait.
            let key2 = ["Idempotency-Key": UUID().uuidString]
            async let a = s[0].request("POST", "/api/v1/meals", token: alice, contentType: "application/json", body: body, headers: key2)
            async let b = s[1].request("POST", "/api/v1/meals", token: alice, contentType: "application/json", body: body, headers: key2)
            let (ra, rb) = (try await a, try await b)
            #expect([ra.status, rb.status].allSatisfy { $0 == 201 || $0 == 409 }, "\(ra.status) \(rb.status)")
            let day = try await s[1].request("GET", "/api/v1/meals?date=2026-11-20", token: alice)
            #expect((day.json["meals"] as? [[String: Any]])?.count == 2, "two keys, two meals — never three")
        }
    }

    @Test func instancesStartingTogetherMigrateOnce() async throws {
        let database = try await TestPostgres.Database()
        // Database() migrated once already: a fresh database of its own, migrated by three stores at once.
        let name = "fm_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
        let base = try #require(TestPostgres.url)
        try await TestPostgres.withClient(base) { admin in
            _ = try await admin.query(.init(unsafeSQL: "CREATE DATABASE \(name)"), logger: TestPostgres.logger)
        }
        let url = TestPostgres.url(base, database: String(name))
        // Three instances start at once; each connects and migrates (under the advisory lock) before serving.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask { try await PostgresStore.with(url: url, logger: TestPostgres.logger) { _ in } }
            }
            try await group.waitForAll()
        }
        let versions = try await TestPostgres.withClient(url) { client in
            var n = 0
            for try await v in try await client.query("SELECT count(*) FROM foodmoment_migrations", logger: TestPostgres.logger).decode(Int.self) { n = v }
            return n
        }
        #expect(versions == PostgresStore.migrations.count, "each migration is recorded once, not once per instance")
        _ = try? await TestPostgres.withClient(base) { admin in
            try await admin.query(.init(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: TestPostgres.logger)
        }
        await database.drop()
    }

    @Test func anUnreachableDatabaseIsA503WithRetryAfterAndReadyzSaysSo() async throws {
        // A PostgreSQL URL where nothing listens (a port just freed): every diary request fails fast with 503.
        let port = try freeLoopbackPort()
        let url = "postgres://foodmoment:x@127.0.0.1:\(port)/nothing"
        let client = PostgresClient(configuration: try PostgresStore.configuration(url: url, deadline: .seconds(2)),
                                    backgroundLogger: TestPostgres.logger)
        let task = Task { await client.run() }
        defer { task.cancel() }
        let store = PostgresStore(client: client, logger: TestPostgres.logger, deadline: .seconds(2))
        let server = try await LiveServer(configure: { $0.store = store })
        let started = ContinuousClock.now
        let ready = try await server.request("GET", "/readyz")
        #expect(ready.status == 503)
        let meals = try await server.request("GET", "/api/v1/meals?date=2026-11-26", token: "fm_" + String(repeating: "a", count: 43))
        #expect(meals.status == 503 && meals.headers["retry-after"] == "2" && errorCode(meals) == "database_unavailable",
                "\(meals.status) \(String(decoding: meals.body, as: UTF8.self))")
        #expect(ContinuousClock.now - started < .seconds(10), "both answered within the deadlines, not after a long hang")
        await server.stop()
    }
}

/// A loopback port nothing listens on (bound, read and closed).
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    addr.sin_port = 0
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
    _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
    return Int(UInt16(bigEndian: addr.sin_port))
}
