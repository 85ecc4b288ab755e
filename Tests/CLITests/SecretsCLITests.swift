import FoodMomentTestSupport
import Foundation
import Testing

/// The API key never leaves the request header: real `foodmoment` runs (refinement, cache hits, `llm check`,
/// `--explain-network`, `--json`, provider errors that echo the key back) with a distinctive key, then every byte
/// of stdout, stderr and every file under the temporary FOODMOMENT_HOME is searched for it.
/// The time limit only guards against a hang (each run of the binary also has `runProcess`'s own limit): the binary
/// may be a sanitizer build, on a 2-core machine shared with CPU-bound tests.
@Suite("Secrets never leak (real binary, loopback provider)", .timeLimit(.minutes(10)))
struct SecretsCLITests {
    static let key = "sk-fm-LEAKCANARY-9f3b7c2e1d"

    /// An OpenAI-compatible provider: good answers, or (with `rejectKey`) a 401 whose message, header and body echo
    /// the key back, as real providers partly do ("Incorrect API key provided: sk-…").
    static func provider(rejectKey: Bool = false) throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer(respond: { r in
            if rejectKey {
                return .json(#"{"error":{"message":"Incorrect API key provided: \#(key). You can find your API key at …","type":"invalid_request_error","code":"invalid_api_key"}}"#,
                             status: 401, headers: ["x-echo-key": key])
            }
            if r.path.hasSuffix("/models") { return .json(#"{"data":[{"id":"m"}]}"#) }
            let content = #"{\"foods\":[{\"name\":\"Banana\",\"name_zh\":\"香蕉\",\"grams\":150,\"confidence\":0.9,\"box\":{\"x\":0.1,\"y\":0.1,\"w\":0.5,\"h\":0.8}}]}"#
            return .json(#"{"choices":[{"index":0,"message":{"role":"assistant","content":"\#(content)"},"finish_reason":"stop"}]}"#)
        })
    }

    /// The binary's environment for an OpenAI-compatible provider on `server` (also used by RefineCLITests): only
    /// what is set here configures the LLM (no key file, no config file from the developer's environment).
    static func environment(_ server: LoopbackHTTPServer, home: String, key: String? = Self.key) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["FOODMOMENT_HOME"] = home
        env["FOODMOMENT_LLM_PROVIDER"] = "openai"
        env["FOODMOMENT_LLM_BASE_URL"] = server.baseURL + "/v1"
        env["FOODMOMENT_LLM_MODEL"] = "m"
        env["FOODMOMENT_LLM_API_KEY"] = key
        env["FOODMOMENT_LLM_API_KEY_FILE"] = nil
        env["FOODMOMENT_LLM_CONFIG"] = nil
        return env
    }

    /// Every place the key must not be: the run's outputs and every file (any name, any size) under `directories`.
    static func expectNoKey(_ r: ProcessResult, in directories: [String], _ what: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(!r.stdout.contains(key), "\(what): key on stdout", sourceLocation: sourceLocation)
        #expect(!r.stderr.contains(key), "\(what): key on stderr", sourceLocation: sourceLocation)
        #expect(!r.stderr.contains("LEAKCANARY") && !r.stdout.contains("LEAKCANARY"), "\(what): part of the key shown", sourceLocation: sourceLocation)
        let needle = Array(key.utf8)
        for dir in directories {
            for f in (try? FileManager.default.subpathsOfDirectory(atPath: dir)) ?? [] {
                var isDir: ObjCBool = false
                guard FileManager.default.fileExists(atPath: dir + "/" + f, isDirectory: &isDir), !isDir.boolValue else { continue }
                let bytes = TestPaths.read(dir + "/" + f)
                #expect(!contains(bytes, needle), "\(what): key written to \(f)", sourceLocation: sourceLocation)
            }
        }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains { i in haystack[i..<(i + needle.count)].elementsEqual(needle) }
    }

    @Test func refineJSONCacheCheckAndExplainNeverShowTheKey() throws {
        let server = try Self.provider()
        let home = TestPaths.makeTempDirectory("secrets-home")
        let out = TestPaths.makeTempDirectory("secrets-out")
        defer { for d in [home, out] { try? FileManager.default.removeItem(atPath: d) } }
        let env = Self.environment(server, home: home)
        let photo = TestPaths.repoRoot + "/samples/banana.jpg"

        let refined = try runProcess(foodmomentBinary, ["analyze", photo, "--refine", "--json", "--csv", out + "/r.csv"], environment: env)
        #expect(refined.status == 0, "\(refined.stderr)")
        #expect(refined.stdout.contains(#""status" : "refined""#), "the run really refined: \(refined.stdout.prefix(400))")
        #expect(server.requests.first?.headers["authorization"] == "Bearer \(Self.key)", "the key was really sent")
        try Self.expectNoKey(refined, in: [home, out], "analyze --refine --json")

        let cached = try runProcess(foodmomentBinary, ["analyze", photo, "--refine", "--ndjson", "--force"], environment: env)
        #expect(cached.status == 0 && cached.stdout.contains("cached"), "\(cached.stderr)")
        try Self.expectNoKey(cached, in: [home], "analyze --refine --ndjson (cache hit)")

        for args in [["llm", "check"], ["llm", "check", "--json"]] {
            let check = try runProcess(foodmomentBinary, args, environment: env)
            #expect(check.status == 0, "\(args): \(check.stderr)")
            try Self.expectNoKey(check, in: [home], args.joined(separator: " "))
        }

        let explain = try runProcess(foodmomentBinary, ["analyze", photo, "--refine", "--explain-network"], environment: env)
        #expect(explain.status == 0 && explain.stdout.contains("/v1/chat/completions"), "\(explain.stderr)")
        try Self.expectNoKey(explain, in: [home], "analyze --explain-network")
    }

    @Test func aProviderEchoingTheKeyInItsErrorIsRedacted() throws {
        let server = try Self.provider(rejectKey: true)
        let home = TestPaths.makeTempDirectory("secrets-home")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let env = Self.environment(server, home: home)
        let photo = TestPaths.repoRoot + "/samples/banana.jpg"

        let json = try runProcess(foodmomentBinary, ["analyze", photo, "--refine", "--json"], environment: env)
        #expect(json.stdout.contains("unauthorized") || json.stdout.contains("401"), "the failure is reported: \(json.stdout.prefix(600))")
        try Self.expectNoKey(json, in: [home], "analyze --refine --json with a rejected key")

        let text = try runProcess(foodmomentBinary, ["analyze", photo, "--refine"], environment: env)
        #expect(text.stderr.contains("401") || text.stderr.contains("key"), "\(text.stderr)")
        try Self.expectNoKey(text, in: [home], "analyze --refine with a rejected key")

        for args in [["llm", "check"], ["llm", "check", "--json"]] {
            let check = try runProcess(foodmomentBinary, args, environment: env)
            #expect(check.status != 0, "\(args) must fail with a rejected key")
            try Self.expectNoKey(check, in: [home], args.joined(separator: " ") + " with a rejected key")
        }
    }

    @Test func keyFileReadableByOthersIsRefusedAndOwnerOnlyIsUsed() throws {
        let server = try Self.provider()
        let home = TestPaths.makeTempDirectory("secrets-home")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let keyFile = home + "/openai.key"
        try Data((Self.key + "\n").utf8).write(to: URL(fileURLWithPath: keyFile))
        var env = Self.environment(server, home: home, key: nil)
        env["FOODMOMENT_LLM_API_KEY_FILE"] = keyFile

        for mode in [0o644, 0o604, 0o640] {
            #expect(chmod(keyFile, mode_t(mode)) == 0)
            let r = try runProcess(foodmomentBinary, ["llm", "check"], environment: env)
            #expect(r.status != 0, "mode \(String(mode, radix: 8)) must be refused")
            #expect(r.stderr.contains("readable by others") && r.stderr.contains("chmod 600 \(keyFile)"), "\(r.stderr)")
            try Self.expectNoKey(r, in: [], "key file mode \(String(mode, radix: 8))")
            let analyze = try runProcess(foodmomentBinary, ["analyze", TestPaths.repoRoot + "/samples/banana.jpg", "--refine"], environment: env)
            #expect(analyze.status != 0 && analyze.stderr.contains("readable by others"), "\(analyze.stderr)")
        }
        #expect(server.requests.isEmpty, "nothing is sent with a refused key file")

        #expect(chmod(keyFile, 0o600) == 0)
        let ok = try runProcess(foodmomentBinary, ["llm", "check", "--json"], environment: env)
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(server.requests.last?.headers["authorization"] == "Bearer \(Self.key)", "the owner-only file's key is used")
        #expect(!ok.stdout.contains(Self.key) && !ok.stderr.contains(Self.key))
    }
}
