import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real `foodmoment-server` binary (the debug build `swift build --build-tests` makes beside the tests).
@Suite("The server process", .serialized)
struct LifecycleTests {
    static let binary = repoRoot + "/server/.build/debug/foodmoment-server"

    /// `log`: where the server's log goes when `FOODMOMENT_TEST_SERVER_LOG` is not set (appended); nil = dropped.
    func run(_ arguments: [String], data: String, log: String? = nil) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments + ["--data", data]
        var env = ProcessInfo.processInfo.environment
        env["FOODMOMENT_MODELS"] = repoRoot + "/models"
        env["FOODMOMENT_NUTRITION_DB"] = repoRoot + "/nutrition-db"
        process.environment = env
        let out = Pipe()
        process.standardOutput = out
        // FOODMOMENT_TEST_SERVER_LOG=FILE keeps the servers' logs (appended) for a failure to be read; else dropped.
        if let log = ProcessInfo.processInfo.environment["FOODMOMENT_TEST_SERVER_LOG"] ?? log,
           FileManager.default.fileExists(atPath: log) || FileManager.default.createFile(atPath: log, contents: nil),
           let handle = FileHandle(forWritingAtPath: log) {
            handle.seekToEndOfFile()
            process.standardError = handle
        } else {
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
        return (process, out)
    }

    /// SIGTERM while photos are queued and being analysed: every one is answered 200, then the process exits 0.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: binary)))
    func sigtermLetsRequestsInFlightFinish() async throws {
        let data = NSTemporaryDirectory() + "foodmoment-lifecycle-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: data) }
        let (maker, tokenOut) = try run(["token", "create", "--user", "alice"], data: data)
        maker.waitUntilExit()
        let token = String(decoding: tokenOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(maker.terminationStatus == 0 && token.hasPrefix("fm_"))

        let (server, out) = try run(["--port", "0", "--analyzers", "1"], data: data)
        var line = ""
        while !line.contains("listening on") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            line += String(decoding: chunk, as: UTF8.self)
        }
        let base = try #require(line.range(of: #"http://[0-9.:]+"#, options: .regularExpression).map { String(line[$0]) })
        let photo = try Data(contentsOf: URL(fileURLWithPath: repoRoot + "/samples/thali-phone-rotated.jpg"))

        func analyze() async throws -> Int {
            var r = URLRequest(url: URL(string: base + "/api/v1/food/analyze")!)
            r.httpMethod = "POST"
            r.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
            r.setValue("image/jpeg", forHTTPHeaderField: "Content-Type")
            r.httpBody = photo
            let (_, response) = try await URLSession.shared.data(for: r)
            return (response as? HTTPURLResponse)?.statusCode ?? 0
        }
        func scrape() async throws -> (active: Int, done: Int) {
            let (metrics, _) = try await URLSession.shared.data(from: URL(string: base + "/metrics")!)
            var active = 0, done = 0
            for line in String(decoding: metrics, as: UTF8.self).split(separator: "\n") {
                let value = Int(Double(line.split(separator: " ").last ?? "") ?? 0)
                if line.hasPrefix("http_server_active_requests{") && line.contains("POST") { active += value }
                if line.hasPrefix("hb_requests{") && line.contains("/api/v1/food/analyze") { done += value }
            }
            return (active, done)
        }
        _ = try await scrape()  // the scraping connection is open before the photos go
        // Rounds of four photos on one analyzer: once all four of a round have reached the server (in flight or done)
        // and at least one is still in flight, SIGTERM. On a busy machine the first round usually does; a round that
        // finished before it was seen is awaited and another is sent.
        let count = 4
        var requests: [Task<Int, any Error>] = []
        var sent = false
        for round in 1...6 where !sent {
            requests = (0..<count).map { _ in Task { try await analyze() } }
            for _ in 0..<2000 {
                let (active, done) = try await scrape()
                if active + done >= count * round {
                    if active >= 1 { sent = true }
                    break
                }
                try await Task.sleep(for: .milliseconds(2))
            }
            if !sent { for request in requests { #expect(try await request.value == 200) } }
        }
        #expect(sent, "SIGTERM found requests in flight")
        kill(server.processIdentifier, SIGTERM)
        for request in requests { #expect(try await request.value == 200) }
        server.waitUntilExit()
        #expect(server.terminationReason == .exit && server.terminationStatus == 0)
    }
}
