import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real `foodmoment-server` binary (the debug build `swift build --build-tests` makes beside the tests).
@Suite("The server process", .serialized)
struct LifecycleTests {
    static let binary = repoRoot + "/server/.build/debug/foodmoment-server"

    func run(_ arguments: [String], data: String) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = arguments + ["--data", data]
        var env = ProcessInfo.processInfo.environment
        env["FOODMOMENT_MODELS"] = repoRoot + "/models"
        env["FOODMOMENT_NUTRITION_DB"] = repoRoot + "/nutrition-db"
        process.environment = env
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
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
        let count = 4
        let requests = (0..<count).map { _ in Task { try await analyze() } }
        // Wait until all are inside the server (its active-requests gauge, less this scrape), then SIGTERM.
        var inFlight = 0
        for _ in 0..<500 where inFlight < count {
            let (metrics, _) = try await URLSession.shared.data(from: URL(string: base + "/metrics")!)
            let text = String(decoding: metrics, as: UTF8.self)
            inFlight = text.split(separator: "\n").filter { $0.hasPrefix("http_server_active_requests{") && $0.contains("POST") }
                .compactMap { Double($0.split(separator: " ").last ?? "") }.reduce(0) { $0 + Int($1) }
            if inFlight < count { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(inFlight >= count, "all \(count) analyses were in the server before SIGTERM (saw \(inFlight))")
        kill(server.processIdentifier, SIGTERM)
        for request in requests { #expect(try await request.value == 200) }
        server.waitUntilExit()
        #expect(server.terminationReason == .exit && server.terminationStatus == 0)
    }
}
