import FoodMomentTestSupport
import Foundation
import Testing

/// `foodmoment analyze --refine` and `foodmoment llm check`, the real binary against a loopback provider.
/// The time limit only guards against a hang (each run of the binary also has `runProcess`'s own limit): the binary
/// may be a sanitizer build, on a 2-core machine shared with CPU-bound tests.
@Suite("foodmoment analyze --refine (real binary, loopback provider)", .timeLimit(.minutes(10)))
struct RefineCLITests {
    static let key = "sk-cli-SECRET-777"

    /// An OpenAI-compatible server that answers every photo with one banana of 140 g over the left half.
    static func provider(status: Int = 200) throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer(respond: { r in
            if r.path.hasSuffix("/models") { return .json(#"{"data":[{"id":"m"}]}"#) }
            guard status == 200 else { return .json(#"{"error":{"message":"overloaded"}}"#, status: status, headers: ["retry-after-ms": "10"]) }
            let content = #"{\"foods\":[{\"name\":\"Banana\",\"name_zh\":\"香蕉\",\"grams\":140,\"confidence\":0.93,\"box\":{\"x\":0.05,\"y\":0.1,\"w\":0.5,\"h\":0.8}}]}"#
            return .json(#"{"choices":[{"index":0,"message":{"role":"assistant","content":"\#(content)"},"finish_reason":"stop"}]}"#)
        })
    }

    static func run(_ server: LoopbackHTTPServer, _ args: [String], home: String) throws -> ProcessResult {
        try runProcess(foodmomentBinary, args, environment: SecretsCLITests.environment(server, home: home, key: key))
    }

    @Test func refinedPhotoHasLLMGramsAndTheKeyNeverShows() throws {
        let server = try Self.provider()
        let home = TestPaths.makeTempDirectory("refine-home")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let photo = TestPaths.repoRoot + "/samples/banana.jpg"
        let r = try Self.run(server, ["analyze", photo, "--refine", "--json"], home: home)
        #expect(r.status == 0, "\(r.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        let refinement = try #require(doc.first?["refinement"] as? [String: Any])
        #expect(refinement["status"] as? String == "refined" && refinement["cached"] as? Bool == false)
        let food = try #require((doc.first?["foods"] as? [[String: Any]])?.first)
        #expect(food["grams"] as? Double == 140 && food["grams_source"] as? String == "llm" && food["label"] as? String == "banana")
        #expect(server.requests.count == 1 && server.requests[0].headers["authorization"] == "Bearer \(Self.key)")
        #expect(!r.stdout.contains(Self.key) && !r.stderr.contains(Self.key))
        // A re-run comes from the batch journal; one without the journal from the LLM cache: nothing is sent.
        let again = try Self.run(server, ["analyze", photo, "--refine", "--json"], home: home)
        #expect(again.status == 0 && again.stdout.contains(#""status" : "refined""#) && server.requests.count == 1)
        #expect(again.stderr.contains("1 from the journal"))
        let uncached = try Self.run(server, ["analyze", photo, "--refine", "--json", "--no-journal"], home: home)
        #expect(uncached.status == 0 && uncached.stdout.contains(#""cached" : true"#) && server.requests.count == 1)
        for f in try FileManager.default.subpathsOfDirectory(atPath: home) where f.hasSuffix(".json") {
            #expect(!String(decoding: TestPaths.read(home + "/" + f), as: UTF8.self).contains(Self.key))
        }
    }

    @Test func failingProviderLeavesStageOneMarkedUnrefined() throws {
        let server = try Self.provider(status: 503)
        let home = TestPaths.makeTempDirectory("refine-home")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let r = try Self.run(server, ["analyze", TestPaths.repoRoot + "/samples/banana.jpg", "--refine", "--json"], home: home)
        #expect(r.status == 0, "a failed refinement costs no photo")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        let refinement = try #require(doc.first?["refinement"] as? [String: Any])
        #expect(refinement["status"] as? String == "unrefined" && refinement["kind"] as? String == "server_error" && refinement["attempts"] as? Int == 4)
        #expect((doc.first?["foods"] as? [[String: Any]])?.first?["grams_source"] as? String == "box_area")
        #expect(r.stderr.contains("not refined") && !r.stderr.contains(Self.key))
    }

    @Test func explainNetworkSendsNothing() throws {
        let server = try Self.provider()
        let r = try Self.run(server, ["analyze", TestPaths.repoRoot + "/samples", "--refine", "--explain-network"], home: emptyHome)
        #expect(r.status == 0 && r.stdout.contains("POST \(server.baseURL)/v1/chat/completions") && r.stdout.contains("without EXIF"))
        #expect(!r.stdout.contains(Self.key) && server.requests.isEmpty)
    }

    @Test func llmCheckReportsTheProvider() throws {
        let server = try Self.provider()
        let r = try Self.run(server, ["llm", "check", "--json"], home: emptyHome)
        #expect(r.status == 0, "\(r.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(doc["ok"] as? Bool == true && doc["local"] as? Bool == true && doc["latency_ms"] is Double)
        #expect(server.requests.first?.path == "/v1/models" && !r.stdout.contains(Self.key))
        let down = try runProcess(foodmomentBinary, ["llm", "check"], environment: ["FOODMOMENT_HOME": emptyHome, "FOODMOMENT_LLM_PROVIDER": "ollama",
                                                                                   "FOODMOMENT_LLM_MODEL": "x", "FOODMOMENT_LLM_BASE_URL": "http://127.0.0.1:1"])
        #expect(down.status == 1 && down.stdout.contains("FAILED"))
    }

    @Test func refineWithoutAProviderIsAUsageError() throws {
        let r = try runProcess(foodmomentBinary, ["analyze", TestPaths.repoRoot + "/samples/banana.jpg", "--refine"], environment: ["FOODMOMENT_HOME": emptyHome])
        #expect(r.status == 2 && r.stderr.contains("FOODMOMENT_LLM_PROVIDER"))
    }
}
