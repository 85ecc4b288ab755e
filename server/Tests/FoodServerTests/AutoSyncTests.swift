import Foundation
import Testing

/// The CLI the root package's tests built (`./run-tests` builds it before the server's tests).
let foodmomentCLI = repoRoot + "/.build/debug/foodmoment"

/// Automatic sync, as a user sees it: the real `foodmoment` CLI (built by the root package's tests) against a real
/// `foodmoment-server` process that is stopped and started again.
@Suite("sync: commands send their changes as they end (the real CLI and server)", .serialized,
       .enabled(if: FileManager.default.isExecutableFile(atPath: LifecycleTests.binary)
                && FileManager.default.isExecutableFile(atPath: foodmomentCLI)))
struct AutoSyncTests {
    static let cli = foodmomentCLI

    struct Run {
        var status: Int32; var stdout: String; var stderr: String
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any] ?? [:] }
    }

    /// The CLI with its own data folder, as a user on another machine.
    static func foodmoment(_ home: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Run {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: cli)
        p.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["FOODMOMENT_HOME"] = home
        env["FOODMOMENT_MODELS"] = repoRoot + "/models"
        env["FOODMOMENT_NUTRITION_DB"] = repoRoot + "/nutrition-db"
        env["FOODMOMENT_SYNC_TOKEN"] = nil
        for (k, v) in environment { env[k] = v }
        p.environment = env
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Run(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    @Test func changesGoOutWhenTheServerAnswersAndWaitWhenItDoesNot() async throws {
        let dir = NSTemporaryDirectory() + "foodmoment-autosync-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let home = dir + "/phone"
        let (lifecycle, data, database, pg, token) = try await SyncTests.account("alice", dir: dir)
        var (server, base) = try SyncTests.start(lifecycle, port: 0, database: database, data: data)
        defer { if server.isRunning { server.terminate(); server.waitUntilExit() } }
        let port = Int(base.split(separator: ":").last!)!

        // Before any sync: a change waits, no line about sync.
        let first = try Self.foodmoment(home, ["water", "add", "250"])
        #expect(first.status == 0 && !first.stderr.contains("sync:"), "\(first.stderr)")
        // The first sync with a token sends it and keeps the token, for this user only.
        let bound = try Self.foodmoment(home, ["sync", "--server", base, "--token", token])
        #expect(bound.status == 0 && bound.stdout.contains("in sync"), "\(bound.stdout)\(bound.stderr)")
        let kept = home + "/meals.sqlite.sync-token"
        let mode = (try FileManager.default.attributesOfItem(atPath: kept)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600, "the kept token is readable by its owner only")

        // Now a command sends its own change as it ends.
        let weight = try Self.foodmoment(home, ["weight", "add", "70"])
        #expect(weight.status == 0 && weight.stderr.contains("sync: sent 1 change to \(base)"), "\(weight.stderr)")
        var status = try Self.foodmoment(home, ["sync", "--status", "--json"])
        #expect(status.json["pending"] as? Int == 0 && status.json["automatic"] as? Bool == true, "\(status.stdout)")

        // The server is down: the command still succeeds, says the change waits, and keeps it.
        server.terminate(); server.waitUntilExit()
        let offline = try Self.foodmoment(home, ["water", "add", "500"])
        #expect(offline.status == 0 && offline.stderr.contains("sync: not sent") && offline.stderr.contains("1 change waits"), "\(offline.stderr)")
        status = try Self.foodmoment(home, ["sync", "--status"])
        #expect(status.stdout.contains("queued changes: 1") && status.stdout.contains("automatic sync: on"), "\(status.stdout)")

        // Back (same address): the next command sends what waited and its own change.
        (server, base) = try SyncTests.start(lifecycle, port: port, database: database, data: data)
        let meal = try Self.foodmoment(home, ["meal", "add", "--food", "banana=120"])
        #expect(meal.status == 0 && meal.stderr.contains("sync: sent 2 changes"), "\(meal.stderr)")
        status = try Self.foodmoment(home, ["sync", "--status", "--json"])
        #expect(status.json["pending"] as? Int == 0, "\(status.stdout)")

        // Off by the environment: the change waits for `foodmoment sync`.
        let quiet = try Self.foodmoment(home, ["water", "add", "100"], environment: ["FOODMOMENT_AUTO_SYNC": "0"])
        #expect(quiet.status == 0 && !quiet.stderr.contains("sync:"), "\(quiet.stderr)")
        let later = try Self.foodmoment(home, ["sync", "--server", base])
        #expect(later.status == 0 && later.stdout.contains("pushed 1 of 1"), "the kept token is used: \(later.stdout)\(later.stderr)")
        // Forgotten: no more automatic sync.
        #expect(try Self.foodmoment(home, ["sync", "--forget-token"]).stdout.contains("forgot"))
        let after = try Self.foodmoment(home, ["water", "add", "100"])
        #expect(after.status == 0 && !after.stderr.contains("sync:"), "\(after.stderr)")
        server.terminate(); server.waitUntilExit()
        await pg?.drop()
    }
}
