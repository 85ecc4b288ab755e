import CurlTransport
import FoodCore
import Foundation
import FoundationNetworking
import MealStore
import Testing

/// `foodmoment sync`'s engine against a real `foodmoment-server` process over loopback (on SQLite, or on PostgreSQL
/// when the suite runs with FOODMOMENT_TEST_STORE=postgres), the server SIGKILLed in the middle of a push.
@Suite("sync: the CLI's offline queue against a real server killed mid-sync", .serialized,
       .enabled(if: FileManager.default.isExecutableFile(atPath: LifecycleTests.binary)))
struct SyncTests {
    final class Clock: @unchecked Sendable {
        private let lock = NSLock()
        private var t = Date(timeIntervalSince1970: 1_795_400_000)
        var now: Date { lock.withLock { t } }
        func advance(_ s: TimeInterval) { lock.withLock { t = t.addingTimeInterval(s) } }
    }

    /// Starts the server on `port` (0: any) and returns it with its base URL.
    static func start(_ lifecycle: LifecycleTests, port: Int, database: [String], data: String) throws -> (Process, String) {
        let (p, out) = try lifecycle.run(["--port", String(port), "--analyzers", "1"] + database, data: data)
        var line = ""
        while !line.contains("listening on") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            line += String(decoding: chunk, as: UTF8.self)
        }
        guard let r = line.range(of: #"http://[0-9.]+:[0-9]+"#, options: .regularExpression) else { throw NoServer(output: line) }
        return (p, String(line[r]))
    }

    /// A user's token in a new data folder (on PostgreSQL when the suite runs with it), made by the server's own
    /// `token create`.
    static func account(_ user: String, dir: String) async throws -> (lifecycle: LifecycleTests, data: String, database: [String],
                                                                      pg: TestPostgres.Database?, token: String) {
        let data = dir + "/server"
        let pg = TestPostgres.everyServer ? try await TestPostgres.Database() : nil
        let database = pg.map { ["--database", $0.url] } ?? []
        let lifecycle = LifecycleTests()
        let (maker, tokenOut) = try lifecycle.run(["token", "create", "--user", user] + database, data: data)
        maker.waitUntilExit()
        let token = String(decoding: tokenOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        try #require(maker.terminationStatus == 0 && token.hasPrefix("fm_"))
        return (lifecycle, data, database, pg, token)
    }

    struct NoServer: Error { var output: String }

    func diary(_ dir: String, _ name: String, _ clock: Clock) throws -> MealStore {
        try MealStore(path: dir + "/\(name)/meals.sqlite", now: { clock.now }, timeZone: TimeZone(identifier: "UTC")!)
    }

    static func food(_ name: String, _ grams: Double) -> MealFood {
        MealFood(label: name.lowercased(), name: name, grams: grams, gramsSource: .user, source: .user, foodId: "sr:1",
                 per100g: Macros(kcal: 100, proteinG: 5, carbsG: 10, fatG: 3, fiberG: 1))
    }

    /// Everything a diary holds that sync carries, for comparing two diaries.
    static func contents(_ s: MealStore) throws -> (meals: [MealRecord], water: [WaterLog], weight: [WeightLog]) {
        let all = (Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 4e9))
        return (try s.allMeals(), try s.waterLogs(from: all.0, to: all.1), try s.weightLogs(from: all.0, to: all.1))
    }

    @Test func killedMidSyncLosesNothingAndDoublesNothingAndConflictsFollowTheRule() async throws {
        let dir = NSTemporaryDirectory() + "foodmoment-sync-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (lifecycle, data, database, pg, token) = try await Self.account("alice", dir: dir)
        var (server, base) = try Self.start(lifecycle, port: 0, database: database, data: data)
        defer { if server.isRunning { server.terminate(); server.waitUntilExit() } }
        let port = Int(base.split(separator: ":").last!)!

        // Device A: 40 meals over 20 days, 20 water and 10 weight logs, some edited, some deleted, all offline.
        let clockA = Clock(), clockB = Clock()
        let a = try diary(dir, "a", clockA)
        var meals: [MealRecord] = []
        for i in 0..<40 {
            clockA.advance(1)
            meals.append(try a.addMeal(time: Date(timeIntervalSince1970: 1_795_000_000 + Double(i) * 43_200), type: .lunch,
                                       foods: [Self.food("Rice", 100 + Double(i)), Self.food("Egg", 50)]))
        }
        for i in 0..<20 { clockA.advance(1); _ = try a.addWater(milliliters: 250, at: Date(timeIntervalSince1970: 1_795_000_000 + Double(i) * 3600)) }
        for i in 0..<10 { clockA.advance(1); _ = try a.addWeight(kilograms: 70 + Double(i) / 10, at: Date(timeIntervalSince1970: 1_795_000_000 + Double(i) * 86_400)) }
        clockA.advance(1)
        _ = try a.edit(mealID: meals[3].id, [.grams(index: 0, grams: 333)])
        #expect(try a.deleteMeal(id: meals[5].id))
        let queued = try a.syncState().pending
        #expect(queued == 70)

        // Small pages, so both the queue and the feed are read a page at a time.
        var client = SyncClient(store: a, transport: CurlHTTPTransport(userAgent: "FoodMoment tests"), server: base, token: token)
        client.pageSize = 7
        // The server is SIGKILLed after the 25th change was acknowledged: the 26th finds no server.
        let pid = server.processIdentifier
        let first = try await client.run { step in
            if case let .pushed(_, _, remaining) = step, remaining == queued - 25 { kill(pid, SIGKILL) }
        }
        server.waitUntilExit()
        #expect(first.pushed == 25 && !first.complete && first.pending == queued - 25)
        #expect(first.failure?.contains("pushing") == true)

        // Restarted on the same address. The last five acknowledged changes are sent again (as after answers lost on
        // the way back): their Idempotency-Keys replay the first answers and nothing is stored twice.
        (server, base) = try Self.start(lifecycle, port: port, database: database, data: data)
        let pushedBefore = try a.syncState().pushed
        try a.markPushed(pushedBefore - 5)
        let second = try await client.run()
        #expect(second.complete && second.failure == nil, "\(second.failure ?? "")")
        #expect(second.pushed == queued - 25 + 5 && second.pending == 0 && second.conflicts.isEmpty)
        // A's own changes come back in the pull and change nothing.
        #expect(second.pulledApplied == 0)

        // Device B, a new diary on the same account, pulls the whole diary: the same meals, water and weight as A.
        let b = try diary(dir, "b", clockB)
        var clientB = SyncClient(store: b, transport: CurlHTTPTransport(userAgent: "FoodMoment tests"), server: base, token: token)
        clientB.pageSize = 7
        let pulledB = try await clientB.run()
        #expect(pulledB.complete && pulledB.pushed == 0)
        #expect(pulledB.pulledApplied == 39 + 20 + 10)
        let (am, aw, ag) = try Self.contents(a), (bm, bw, bg) = try Self.contents(b)
        #expect(am.count == 39 && bm == am && bw == aw && bg == ag)
        #expect(bm.first { $0.id == meals[3].id }?.foods[0].grams == 333)
        #expect(!bm.contains { $0.id == meals[5].id })

        // Conflicts: B edits meal 7 after A does, and deletes meal 8, which A then edits. B syncs first.
        clockA.advance(100); clockB.advance(200)
        _ = try a.edit(mealID: meals[7].id, [.title("A's title")])
        _ = try b.edit(mealID: meals[7].id, [.title("B's title")])
        #expect(try b.deleteMeal(id: meals[8].id))
        clockA.advance(200)
        _ = try a.edit(mealID: meals[8].id, [.title("edited after B deleted it")])
        let bSync = try await clientB.run()
        #expect(bSync.complete && bSync.pushed == 2 && bSync.conflicts.isEmpty)
        let aSync = try await client.run()
        #expect(aSync.complete && aSync.pushed == 2)
        #expect(aSync.conflicts.map { "\($0.id) \($0.outcome.rawValue) \($0.side)" }.sorted()
                == ["\(meals[7].id) kept_newer server", "\(meals[8].id) deleted server"].sorted())
        // After one more round both diaries hold the same: B's later title, meal 8 gone on both.
        _ = try await clientB.run()
        let (am2, aw2, _) = try Self.contents(a), (bm2, bw2, _) = try Self.contents(b)
        #expect(am2 == bm2 && aw2 == bw2 && am2.count == 38)
        #expect(am2.first { $0.id == meals[7].id }?.title == "B's title")
        #expect(!am2.contains { $0.id == meals[8].id })

        server.terminate()
        server.waitUntilExit()
        await pg?.drop()
    }

    /// Goals are one entry per user: what the app sets (`PUT /api/v1/user/goals`) and what a device sets meet in the
    /// feed, and the later goals win on every side.
    @Test func goalsSyncBetweenDevicesAndTheAppAndTheLaterGoalsWin() async throws {
        let dir = NSTemporaryDirectory() + "foodmoment-sync-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (lifecycle, data, database, pg, token) = try await Self.account("goals", dir: dir)
        let (server, base) = try Self.start(lifecycle, port: 0, database: database, data: data)
        defer { if server.isRunning { server.terminate(); server.waitUntilExit() } }
        func client(_ s: MealStore) -> SyncClient {
            SyncClient(store: s, transport: CurlHTTPTransport(userAgent: "FoodMoment tests"), server: base, token: token)
        }
        func appGoals(_ body: String? = nil) async throws -> (Int, Goals?) {
            var r = URLRequest(url: URL(string: base + "/api/v1/user/goals")!)
            r.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
            if let body {
                r.httpMethod = "PUT"
                r.setValue("application/json", forHTTPHeaderField: "Content-Type")
                r.httpBody = Data(body.utf8)
            }
            let (reply, response) = try await URLSession.shared.data(for: r)
            return ((response as! HTTPURLResponse).statusCode, try? JSONDecoder().decode(Goals.self, from: reply))
        }

        // The devices' clocks stand a week before the server's, so what the app sets now is later than theirs.
        let clockA = Clock(), clockB = Clock()
        let a = try diary(dir, "a", clockA), b = try diary(dir, "b", clockB)
        try a.setGoals(Goals(dailyKcal: 2100, proteinG: 90))
        let first = try await client(a).run()
        #expect(first.complete && first.pushed == 1 && first.conflicts.isEmpty, "\(first.failure ?? "")")
        #expect(try await appGoals() == (200, Goals(dailyKcal: 2100, proteinG: 90)))

        // B, a new device, gets A's goals.
        let pulled = try await client(b).run()
        #expect(pulled.complete && pulled.pulledApplied == 1)
        #expect(try b.goals() == Goals(dailyKcal: 2100, proteinG: 90))

        // The app sets goals; A then changes its own (at an earlier time): A's push is refused, the app's come down.
        #expect(try await appGoals(#"{"daily_kcal": 1900, "water_ml": 2500}"#).0 == 200)
        clockA.advance(60)
        try a.setGoals(Goals(dailyKcal: 2400))
        let conflict = try await client(a).run()
        #expect(conflict.complete && conflict.pushed == 1)
        #expect(conflict.conflicts.map { "\($0.kind.rawValue) \($0.outcome.rawValue) \($0.side)" } == ["goals kept_newer server"])
        #expect(try a.goals() == Goals(dailyKcal: 1900, waterMl: 2500))

        // A sets goals later than the app (its clock moved on past the server's): they win everywhere.
        clockA.advance(30 * 86_400)
        try a.setGoals(Goals(dailyKcal: 2000, targetWeightKg: 68))
        let later = try await client(a).run()
        #expect(later.complete && later.conflicts.isEmpty)
        #expect(try await appGoals() == (200, Goals(dailyKcal: 2000, targetWeightKg: 68)))
        _ = try await client(b).run()
        #expect(try b.goals() == Goals(dailyKcal: 2000, targetWeightKg: 68))

        // A deletion of the goals, or goals out of range, is a 422 that says why.
        for body in [#"{"kind": "goals", "id": "goals", "op": "delete", "changed_at": "2026-12-01T00:00:00.000Z", "seq": 1}"#,
                     #"{"kind": "goals", "id": "goals", "op": "upsert", "changed_at": "2026-12-01T00:00:00.000Z", "seq": 1, "goals": {"daily_kcal": 90000}}"#] {
            var r = URLRequest(url: URL(string: base + "/api/v1/sync/push")!)
            r.httpMethod = "POST"
            r.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
            r.setValue("application/json", forHTTPHeaderField: "Content-Type")
            r.httpBody = Data(body.utf8)
            let (reply, response) = try await URLSession.shared.data(for: r)
            let text = String(decoding: reply, as: UTF8.self)
            #expect((response as! HTTPURLResponse).statusCode == 422, "\(text)")
            #expect(text.contains("goals"), "\(text)")
        }
        #expect(try await appGoals() == (200, Goals(dailyKcal: 2000, targetWeightKg: 68)))

        // The feed sends goals only to a client that asks for them: earlier clients cannot decode the kind.
        func feed(_ query: String) async throws -> (Int, String) {
            var r = URLRequest(url: URL(string: base + "/api/v1/sync/changes?since=0" + query)!)
            r.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
            let (reply, response) = try await URLSession.shared.data(for: r)
            return ((response as! HTTPURLResponse).statusCode, String(decoding: reply, as: UTF8.self))
        }
        let plain = try await feed(""), asked = try await feed("&kinds=meal,water,weight,goals"), bad = try await feed("&kinds=meal,photos")
        #expect(plain.0 == 200 && !plain.1.contains("\"goals\"") && plain.1.contains("\"changes\""), "\(plain.1)")
        #expect(asked.0 == 200 && asked.1.contains("\"kind\" : \"goals\"") || asked.1.contains("\"kind\":\"goals\""), "\(asked.1)")
        #expect(bad.0 == 400 && bad.1.contains("invalid_kinds") && bad.1.contains("meal,water,weight,goals"), "\(bad.1)")

        // Goals a device set before goals had limits are refused by the server; they must not hold back the meal
        // queued after them. (Written past the store's check, as an earlier version could.)
        let c = try diary(dir, "c", Clock())
        try c.setGoals(Goals(dailyKcal: 2000))
        try RawSQL.execute("UPDATE goals SET daily_kcal = 25000, updated_ms = updated_ms + 1", in: dir + "/c/meals.sqlite")
        let meal = try c.addMeal(time: Date(timeIntervalSince1970: 1_795_000_000), type: .lunch, foods: [Self.food("Rice", 150)])
        let stuck = try await client(c).run()
        #expect(stuck.complete && stuck.pushed == 1 && stuck.pending == 0, "\(stuck)")
        #expect(stuck.notSynced.count == 1 && stuck.notSynced[0].contains("HTTP 422") && stuck.notSynced[0].contains("20000"), "\(stuck.notSynced)")
        #expect(try await client(b).run().pulledApplied >= 1)
        #expect(try b.meal(id: meal.id) != nil)
        #expect(try await appGoals() == (200, Goals(dailyKcal: 2000, targetWeightKg: 68)), "the server's goals stay")

        server.terminate()
        server.waitUntilExit()
        await pg?.drop()
    }
}
