import Foundation
import PostgresNIO
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// PostgreSQL stopped and started under load, and one of two server processes killed: a cluster of its own (the
/// suite's shared one keeps serving the other tests), two real `foodmoment-server` processes on it.
@Suite("PostgreSQL going away and coming back, an instance killed, under load", .serialized,
       .enabled(if: postgresAvailable && FileManager.default.isExecutableFile(atPath: LifecycleTests.binary)))
struct PostgresFaultTests {
    static let script = repoRoot + "/server/postgres-for-tests"

    /// `postgres-for-tests ARG` on the cluster in `dir`; its stdout.
    @discardableResult
    static func cluster(_ arg: String, dir: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: script)
        p.arguments = [arg]
        var env = ProcessInfo.processInfo.environment
        env["FOODMOMENT_TEST_POSTGRES_DIR"] = dir
        p.environment = env
        // A file, not a pipe: reading a pipe to its end would wait for the PostgreSQL server the script leaves running.
        let outPath = dir + ".out"
        guard FileManager.default.createFile(atPath: outPath, contents: nil) else { throw ClusterFailed(arg: arg) }
        defer { try? FileManager.default.removeItem(atPath: outPath) }
        p.standardOutput = FileHandle(forWritingAtPath: outPath)
        try p.run()
        p.waitUntilExit()
        let text = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        guard p.terminationStatus == 0 else { throw ClusterFailed(arg: arg) }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    struct ClusterFailed: Error { var arg: String }

    static func status(_ method: String, _ url: String, token: String? = nil, body: Data? = nil) async -> (Int, Data, [String: String]) {
        var r = URLRequest(url: URL(string: url)!, timeoutInterval: 15)
        r.httpMethod = method
        if let token { r.setValue("Bearer " + token, forHTTPHeaderField: "Authorization") }
        if body != nil { r.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        r.httpBody = body
        guard let (data, response) = try? await URLSession.shared.data(for: r), let http = response as? HTTPURLResponse else { return (0, Data(), [:]) }
        var headers: [String: String] = [:]
        for (k, v) in http.allHeaderFields { headers[String(describing: k).lowercased()] = String(describing: v) }
        return (http.statusCode, data, headers)
    }

    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private(set) var created: [String] = []
        private(set) var statuses: [Int: Int] = [:]
        private(set) var slowest503: Duration = .zero
        func add(_ status: Int, id: String?, took: Duration) {
            lock.withLock {
                statuses[status, default: 0] += 1
                if let id { created.append(id) }
                if status == 503 { slowest503 = max(slowest503, took) }
            }
        }
    }

    @Test func requestsFailFastWhileTheDatabaseIsDownAndEveryAcknowledgedMealIsKept() async throws {
        let dir = NSTemporaryDirectory() + "foodmoment-pgfault-" + UUID().uuidString
        let url = try Self.cluster("start", dir: dir)
        defer { _ = try? Self.cluster("stop", dir: dir) }
        let data = NSTemporaryDirectory() + "foodmoment-pgfault-data-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: data) }
        // The servers' logs, so that a failure says what the server saw (a 500 is logged with the error's type).
        let serverLog = NSTemporaryDirectory() + "foodmoment-pgfault-log-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: serverLog) }
        func serverErrors() -> String {
            let text = (try? String(contentsOfFile: serverLog, encoding: .utf8)) ?? ""
            let lines = text.split(separator: "\n").filter { $0.contains(" error ") || $0.contains(" critical ") }
            return lines.isEmpty ? "no error lines in the servers' log" : "the servers logged:\n" + lines.prefix(10).joined(separator: "\n")
        }
        let database = ["--database", url, "--database-timeout", "1"]
        let lifecycle = LifecycleTests()
        let (maker, tokenOut) = try lifecycle.run(["token", "create", "--user", "alice"] + database, data: data)
        maker.waitUntilExit()
        let token = String(decoding: tokenOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(maker.terminationStatus == 0 && token.hasPrefix("fm_"))

        var processes: [Process] = [], found: [String] = []
        defer { for p in processes where p.isRunning { p.terminate() } }
        for _ in 0..<2 {
            let (p, out) = try lifecycle.run(["--port", "0", "--analyzers", "1"] + database, data: data, log: serverLog)
            processes.append(p)
            var line = ""
            while !line.contains("listening on") {
                let chunk = out.fileHandleForReading.availableData
                guard !chunk.isEmpty else { break }
                line += String(decoding: chunk, as: UTF8.self)
            }
            found.append(try #require(line.range(of: #"http://[0-9.:]+"#, options: .regularExpression).map { String(line[$0]) }))
        }

        // Four clients log meals round-robin over both instances until told to stop.
        let bases = found
        let tally = Tally(), afterKill = Tally()
        let stop = ManagedFlag(), killed = ManagedFlag()
        let body = Data(#"{"foods": [{"food": "banana", "grams": 100}], "time": "2026-11-26T12:00:00Z"}"#.utf8)
        let load = Task {
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        var n = worker
                        while !stop.isSet {
                            let base = bases[n % 2]
                            n += 1
                            if killed.isSet && base == bases[0] { continue }
                            let bucket = killed.isSet ? afterKill : tally
                            let started = ContinuousClock.now
                            let (status, reply, _) = await Self.status("POST", base + "/api/v1/meals", token: token, body: body)
                            // A request in flight on the instance being killed gets no answer: not counted.
                            if status == 0 && base == bases[0] && killed.isSet { continue }
                            let id = status == 201 ? ((try? JSONSerialization.jsonObject(with: reply)) as? [String: Any])?["id"] as? String : nil
                            bucket.add(status, id: id, took: ContinuousClock.now - started)
                        }
                    }
                }
            }
        }
        try await Task.sleep(for: .seconds(1.5))
        try Self.cluster("down", dir: dir)
        var red = false
        for _ in 0..<30 where !red {
            red = await Self.status("GET", bases[1] + "/readyz").0 == 503
            if !red { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(red, "/readyz goes red while PostgreSQL is down")
        try await Task.sleep(for: .seconds(2))
        let restarted = ContinuousClock.now
        try Self.cluster("up", dir: dir)
        var green = false
        while !green && ContinuousClock.now - restarted < .seconds(30) {
            green = await Self.status("GET", bases[1] + "/readyz").0 == 200
            if !green { try await Task.sleep(for: .milliseconds(50)) }
        }
        let recovery = ContinuousClock.now - restarted
        #expect(green, "/readyz goes green again by itself once PostgreSQL is back")
        try await Task.sleep(for: .seconds(1))
        // One instance killed outright; the other keeps serving. The flag goes up first: a request the kill cuts off
        // (no answer) must already find it set, or it would be counted as a failure of the survivor's period.
        killed.set()
        kill(processes[0].processIdentifier, SIGKILL)
        try await Task.sleep(for: .seconds(1.5))
        stop.set()
        await load.value

        print("pgfault: before kill \(tally.statuses), after kill \(afterKill.statuses), slowest 503 \(tally.slowest503), ready again \(recovery) after PostgreSQL started")
        #expect(Set(tally.statuses.keys).isSubset(of: [201, 503]), "only 201 or 503 (never a 500): \(tally.statuses); \(serverErrors())")
        #expect((tally.statuses[503] ?? 0) > 0, "some requests met the database down")
        #expect(tally.slowest503 < .seconds(4), "a 503 comes within the database timeout (1 s), not after a hang")
        #expect((afterKill.statuses[201] ?? 0) > 0 && Set(afterKill.statuses.keys) == [201],
                "the surviving instance keeps serving: \(afterKill.statuses); \(serverErrors())")
        // Every meal a client was told was created is in the database.
        let acknowledged = Set(tally.created + afterKill.created)
        let stored = try await TestPostgres.withClient(url) { client in
            var ids = Set<String>()
            for try await id in try await client.query("SELECT id FROM meals", logger: TestPostgres.logger).decode(String.self) { ids.insert(id) }
            return ids
        }
        #expect(acknowledged.isSubset(of: stored), "\(acknowledged.subtracting(stored).count) acknowledged meals missing")
        #expect(acknowledged.count > 10)
    }
}

final class ManagedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
