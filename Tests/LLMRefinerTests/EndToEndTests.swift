import CurlTransport
import FoodCore
import FoodMomentTestSupport
import Foundation
@testable import LLMRefiner
import Testing

/// The real libcurl transport against a real HTTP server on 127.0.0.1 that speaks the three protocols and
/// injects faults. Waits go through `RecordingClock`, so nothing here sleeps for a retry, and no outcome depends on
/// how fast the machine is: the slow server is 75 times slower than the client's timeout and lets go when the client
/// hangs up, the concurrency gauge meets requests at a barrier, the cancellation waits for the server's signal.
/// The time limit only guards against a hang: each test takes seconds, but under a sanitizer on 2 cores a test can
/// wait minutes for a thread while CPU-bound tests run beside it.
@Suite("LLM over libcurl (loopback)", .timeLimit(.minutes(5)))
struct EndToEndTests {
    static let key = "sk-test-SECRET-4242"
    let transport = CurlHTTPTransport(userAgent: "FoodMoment-tests")

    final class Notes: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func add(_ s: String) { lock.withLock { lines.append(s) } }
        var all: [String] { lock.withLock { lines } }
    }

    func client(_ provider: any LLMProvider, clock: RecordingClock = RecordingClock(), cache: LLMCache? = nil,
                policy: RetryPolicy = RetryPolicy(maxAttempts: 4, random: { 0.5 }), concurrency: Int = 2,
                timeout: Duration = .seconds(20), maxAnswerBytes: Int = 1 << 20, notes: Notes = Notes()) -> LLMClient {
        LLMClient(provider: provider, transport: transport, clock: clock, policy: policy, cache: cache, concurrency: concurrency,
                  timeout: timeout, maxAnswerBytes: maxAnswerBytes, apiKey: LLMSecret(Self.key),
                  now: { Date(timeIntervalSince1970: 1_700_000_000) }, note: { notes.add($0) })
    }

    func openAI(_ s: LoopbackHTTPServer) -> OpenAICompatibleProvider {
        OpenAICompatibleProvider(baseURL: s.baseURL + "/v1", model: "gpt-test", apiKey: LLMSecret(Self.key))
    }

    func json(_ body: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
    }

    // MARK: the three protocols

    @Test func openAIRoundTrip() async throws {
        let s = try LoopbackHTTPServer(script: [.json(Wire.openAI())])
        let outcome = try await client(openAI(s)).refine(Wire.input).get()
        #expect(outcome.foods.map(\.name) == ["Banana"] && outcome.attempts == 1 && !outcome.cached)
        let r = try #require(s.requests.first)
        #expect(r.method == "POST" && r.path == "/v1/chat/completions")
        #expect(r.headers["authorization"] == "Bearer \(Self.key)" && r.headers["content-type"] == "application/json")
        let body = try json(r.body)
        #expect(body["model"] as? String == "gpt-test" && (body["temperature"] as? NSNumber)?.doubleValue == 0)
        let format = try #require(body["response_format"] as? [String: Any])
        let schema = try #require(format["json_schema"] as? [String: Any])
        #expect(format["type"] as? String == "json_schema" && schema["strict"] as? Bool == true)
        let user = try #require((body["messages"] as? [[String: Any]])?.last?["content"] as? [[String: Any]])
        let text = try #require(user.first?["text"] as? String)
        #expect(text.contains("Banana (香蕉), confidence 0.80, box [0.100, 0.200, 0.500, 0.400], 118 g"))
        let url = try #require((user.last?["image_url"] as? [String: Any])?["url"] as? String)
        #expect(url == "data:image/jpeg;base64," + Data(Wire.input.jpeg).base64EncodedString())
    }

    @Test func geminiRoundTrip() async throws {
        let s = try LoopbackHTTPServer(script: [.json(Wire.gemini())])
        let p = GeminiProvider(baseURL: s.baseURL + "/v1beta", model: "gemini-test", apiKey: LLMSecret(Self.key))
        let outcome = try await client(p).refine(Wire.input).get()
        #expect(outcome.foods.first?.grams == 120)
        let r = try #require(s.requests.first)
        #expect(r.path == "/v1beta/models/gemini-test:generateContent" && r.headers["x-goog-api-key"] == Self.key)
        let body = try json(r.body)
        let config = try #require(body["generationConfig"] as? [String: Any])
        #expect(config["responseMimeType"] as? String == "application/json" && config["responseSchema"] != nil)
        let parts = try #require((body["contents"] as? [[String: Any]])?.first?["parts"] as? [[String: Any]])
        #expect((parts.last?["inline_data"] as? [String: Any])?["mime_type"] as? String == "image/jpeg")
    }

    @Test func ollamaRoundTrip() async throws {
        let s = try LoopbackHTTPServer(script: [.json(Wire.ollama())])
        let outcome = try await client(OllamaProvider(baseURL: s.baseURL, model: "qwen2.5vl")).refine(Wire.input).get()
        #expect(outcome.foods.first?.nameZh == "香蕉")
        let r = try #require(s.requests.first)
        let body = try json(r.body)
        #expect(r.path == "/api/chat" && body["stream"] as? Bool == false && body["format"] is [String: Any])
        #expect(((body["messages"] as? [[String: Any]])?.last?["images"] as? [String])?.count == 1)
        #expect(r.headers["authorization"] == nil, "no key configured for the local provider")
    }

    /// Text-only requests (the server's written insights): no photo, no schema, the answer's text as it came.
    @Test func textRoundTripsOnAllThree() async throws {
        let text = "You logged 3 of 7 days."
        let s = try LoopbackHTTPServer(script: [.json(Wire.openAI(content: text)), .json(Wire.gemini(text: text)), .json(Wire.ollama(content: text))])
        let providers: [any LLMProvider] = [openAI(s), GeminiProvider(baseURL: s.baseURL + "/v1beta", model: "gemini-test", apiKey: LLMSecret(Self.key)),
                                            OllamaProvider(baseURL: s.baseURL, model: "qwen2.5vl")]
        for p in providers {
            #expect(try await client(p).write(system: "be brief", user: "facts").get() == text, "\(p.kind)")
        }
        #expect(s.requests.count == 3)
        for r in s.requests {
            let body = String(decoding: r.body, as: UTF8.self)
            #expect(body.contains("be brief") && body.contains("facts"))
            #expect(!body.contains("image") && !body.contains("json_schema") && !body.contains("responseSchema") && !body.contains("\"format\""), "\(r.path)")
        }
        let failing = try LoopbackHTTPServer(script: [.json(#"{"error":{"message":"bad"}}"#, status: 400)])
        guard case .failure = await client(openAI(failing)).write(system: "s", user: "u") else { Issue.record("a 400 is a failure"); return }
    }

    // MARK: retries and waits

    @Test(arguments: [
        (["retry-after-ms": "250"], Duration.milliseconds(250)),
        (["Retry-After": "2"], Duration.seconds(2)),
        (["Retry-After": "Tue, 14 Nov 2023 22:13:25 GMT"], Duration.seconds(5)),
    ])
    func rateLimitHeadersAreHonoured(_ c: ([String: String], Duration)) async throws {
        let s = try LoopbackHTTPServer(script: [.json(#"{"error":{"message":"Rate limit reached","type":"requests"}}"#, status: 429, headers: c.0),
                                                .json(Wire.openAI())])
        let clock = RecordingClock()
        let outcome = try await client(openAI(s), clock: clock).refine(Wire.input).get()
        #expect(outcome.attempts == 2 && clock.sleeps == [c.1] && outcome.waited == c.1 && s.requests.count == 2)
    }

    @Test func geminiRetryInfoIsHonoured() async throws {
        let busy = #"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"per minute","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"3.5s"}]}}"#
        let s = try LoopbackHTTPServer(script: [.json(busy, status: 429), .json(Wire.gemini())])
        let clock = RecordingClock()
        let p = GeminiProvider(baseURL: s.baseURL, model: "g", apiKey: LLMSecret(Self.key))
        _ = try await client(p, clock: clock).refine(Wire.input).get()
        #expect(clock.sleeps == [.milliseconds(3500)])
    }

    @Test func serverErrorsBackOffExponentially() async throws {
        let s = try LoopbackHTTPServer(script: [.json("{}", status: 500), .json("{}", status: 503), .json(Wire.openAI())])
        let clock = RecordingClock()
        let policy = RetryPolicy(maxAttempts: 4, baseDelay: .seconds(1), random: { 0.5 })
        let outcome = try await client(openAI(s), clock: clock, policy: policy).refine(Wire.input).get()
        // 0.1 + 0.9·0.5 = 55 % of 1 s, then of 2 s.
        #expect(outcome.attempts == 3 && clock.sleeps == [.milliseconds(550), .milliseconds(1100)])
    }

    @Test func persistentOutageGivesUpAfterTheAttempts() async throws {
        let s = try LoopbackHTTPServer(script: [.json(#"{"error":{"message":"overloaded"}}"#, status: 503)])
        let clock = RecordingClock()
        let failure = try #require(await client(openAI(s), clock: clock).refine(Wire.input).failureValue)
        #expect(failure.error.kind == "server_error" && failure.attempts == 4 && s.requests.count == 4 && clock.sleeps.count == 3)
    }

    @Test func waitLongerThanTheCapIsNotRetried() async throws {
        let s = try LoopbackHTTPServer(script: [.json("{}", status: 429, headers: ["Retry-After": "86400"])])
        let failure = try #require(await client(openAI(s)).refine(Wire.input).failureValue)
        #expect(failure.error.kind == "rate_limited" && failure.attempts == 1 && failure.error.description.contains("over the 60.0 s cap"))
    }

    @Test func connectionResetIsRetried() async throws {
        let s = try LoopbackHTTPServer(script: [LoopbackHTTPServer.Reply(drop: true), .json(Wire.openAI())])
        let outcome = try await client(openAI(s)).refine(Wire.input).get()
        #expect(outcome.attempts == 2)
    }

    @Test func slowServerTimesOut() async throws {
        // 30 s against a 400 ms timeout: the answer cannot win the race even on a machine 10× slower than usual,
        // and the server drops it as soon as curl gives up, so the test takes two timeouts, not two delays.
        let s = try LoopbackHTTPServer(script: [LoopbackHTTPServer.Reply(body: Array(Wire.openAI().utf8), delay: .seconds(30))])
        let failure = try #require(await client(openAI(s), policy: RetryPolicy(maxAttempts: 2, random: { 0 }), timeout: .milliseconds(400))
            .refine(Wire.input).failureValue)
        #expect(failure.error.kind == "timed_out" && failure.attempts == 2)
    }

    // MARK: terminal failures

    @Test func quotaExhaustedFailsFastAndStopsTheBatch() async throws {
        let s = try LoopbackHTTPServer(script: [.json(#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#, status: 429)])
        let c = client(openAI(s))
        let first = try #require(await c.refine(Wire.input).failureValue)
        #expect(first.error.kind == "quota_exhausted" && first.attempts == 1)
        let second = try #require(await c.refine(Wire.input).failureValue)
        #expect(second.error.kind == "quota_exhausted" && second.attempts == 0 && s.requests.count == 1, "nothing more is sent")
    }

    @Test func badKeyIsTerminalAndNeverEchoed() async throws {
        let echo = #"{"error":{"message":"Incorrect API key provided: \#(Self.key).","type":"invalid_request_error","code":"invalid_api_key"}}"#
        let s = try LoopbackHTTPServer(script: [.json(echo, status: 401)])
        let notes = Notes()
        let failure = try #require(await client(openAI(s), notes: notes).refine(Wire.input).failureValue)
        #expect(failure.error.kind == "unauthorized" && failure.attempts == 1)
        #expect(!failure.error.description.contains(Self.key) && failure.error.description.contains("<redacted>"))
    }

    @Test(arguments: [400, 404, 413]) func clientErrorsAreNotRetried(_ status: Int) async throws {
        let s = try LoopbackHTTPServer(script: [.json(#"{"error":"model \"qwen\" not found"}"#, status: status)])
        let failure = try #require(await client(OllamaProvider(baseURL: s.baseURL, model: "qwen")).refine(Wire.input).failureValue)
        #expect(failure.error.kind == "bad_request" && failure.attempts == 1 && failure.error.description.contains("HTTP \(status)"))
    }

    // MARK: bad answers

    @Test func badAnswersAreRecordedFailures() async throws {
        let cases: [(LoopbackHTTPServer.Reply, String)] = [
            (.json(Wire.openAI(content: #"{"foods":[{"name":"Banana""#)), "malformed_json"),
            (.json(Wire.openAIRefusal("I'm sorry, I can't help with that.")), "refused"),
            (.json(Wire.openAI(content: #"{"foods":[{"name":"Ban"#, finish: "length")), "truncated"),
            (.json(Wire.openAI(content: #"{"foods":[{"name":"Banana","name_zh":"","grams":-5,"confidence":0.9,"box":{"x":0,"y":0,"w":1,"h":1}}]}"#)), "schema_violation"),
            (.json(#"{"choices":[{"message":{"content":"{\"foods\":[]}"#), "malformed_json"),
        ]
        for (reply, kind) in cases {
            let s = try LoopbackHTTPServer(script: [reply])
            let failure = try #require(await client(openAI(s)).refine(Wire.input).failureValue)
            #expect(failure.error.kind == kind && failure.attempts == 1, "\(kind)")
        }
    }

    @Test func bodyCutShortIsANetworkErrorAndRetried() async throws {
        var cut = LoopbackHTTPServer.Reply.json(Wire.openAI())
        cut.truncateAfter = 40
        let s = try LoopbackHTTPServer(script: [cut, .json(Wire.openAI())])
        let outcome = try await client(openAI(s)).refine(Wire.input).get()
        #expect(outcome.attempts == 2)
    }

    @Test func hugeBodyIsRefused() async throws {
        let s = try LoopbackHTTPServer(script: [LoopbackHTTPServer.Reply(body: Array(repeating: UInt8(ascii: "x"), count: 8 << 20))])
        let failure = try #require(await client(openAI(s), maxAnswerBytes: 1 << 20).refine(Wire.input).failureValue)
        #expect(failure.error == .tooLarge(limit: 1 << 20) && failure.attempts == 1)
    }

    // MARK: cache, concurrency, cancellation, secrecy

    @Test func cacheMakesARerunFreeAndHoldsNoKey() async throws {
        let dir = TestPaths.makeTempDirectory("llm-cache")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = try LoopbackHTTPServer(script: [.json(Wire.openAI())])
        let cache = LLMCache(directory: dir)
        let first = try await client(openAI(s), cache: cache).refine(Wire.input).get()
        let second = try await client(openAI(s), cache: cache).refine(Wire.input).get()
        #expect(!first.cached && second.cached && second.foods == first.foods && s.requests.count == 1)
        var other = Wire.input
        other.promptVersion = "another-prompt"
        _ = await client(openAI(s), cache: cache).refine(other)
        #expect(s.requests.count == 2, "a new prompt version is a new key")
        for f in try FileManager.default.contentsOfDirectory(atPath: dir) {
            let text = String(decoding: TestPaths.read(dir + "/" + f), as: UTF8.self)
            #expect(!text.contains(Self.key) && text.contains("Banana"))
        }
    }

    @Test func concurrencyLimitHolds() async throws {
        /// Requests in the server at once. Each one waits at a barrier until a second one is in too (or every request
        /// has arrived), so with a limit of 2 the first two always overlap and the peak is exactly 2 however the
        /// threads are scheduled. The client's timeout is longer than anything the barrier can wait for a task that
        /// has to share the machine with CPU-bound tests; the barrier's own bound only turns a client that never sends
        /// a second request into a failure instead of a hang.
        final class Gauge: @unchecked Sendable {
            let condition = NSCondition(); let total: Int
            var now = 0, peak = 0, arrived = 0
            init(total: Int) { self.total = total }
            func enter() {
                condition.lock(); defer { condition.unlock() }
                now += 1; arrived += 1; peak = max(peak, now)
                condition.broadcast()
                let bound = Date(timeIntervalSinceNow: 180)
                while now < 2, arrived < total, condition.wait(until: bound) {}
            }
            func leave() { condition.lock(); now -= 1; condition.unlock() }
        }
        let gauge = Gauge(total: 6)
        let s = try LoopbackHTTPServer(respond: { _ in
            gauge.enter()
            // Not a synchronisation: a window in which a third request, were the limit broken, would be counted.
            Thread.sleep(forTimeInterval: 0.1)
            gauge.leave()
            return .json(Wire.openAI())
        })
        let c = client(openAI(s), concurrency: 2, timeout: .seconds(240))
        await withTaskGroup(of: Void.self) { g in
            for _ in 0..<6 { g.addTask { _ = await c.refine(Wire.input) } }
        }
        #expect(s.requests.count == 6 && gauge.peak == 2)
    }

    @Test func cancellationAbortsTheTransfer() async throws {
        // The server signals when the request is in, then holds the answer until the client hangs up. The delay and
        // the client's timeout are far longer than this test may wait for a thread before it cancels, so only the
        // cancellation can end the transfer.
        let (inFlight, signal) = AsyncStream<Void>.makeStream()
        let s = try LoopbackHTTPServer(respond: { _ in
            signal.yield(())
            return LoopbackHTTPServer.Reply(body: Array(Wire.openAI().utf8), delay: .seconds(600))
        })
        let c = client(openAI(s), timeout: .seconds(240))
        let task = Task { await c.refine(Wire.input) }
        for await _ in inFlight { break }
        task.cancel()
        let failure = try #require(await task.value.failureValue)
        #expect(failure.error == .cancelled)
    }

    @Test func checkReportsLatencyAndModelPresence() async throws {
        let s = try LoopbackHTTPServer(respond: { r in
            r.path == "/api/tags" ? .json(#"{"models":[{"name":"qwen2.5vl:latest"}]}"#) : .json("{}", status: 404)
        })
        let ok = await client(OllamaProvider(baseURL: s.baseURL, model: "qwen2.5vl")).check()
        #expect(ok.ok && ok.status == 200 && ok.message.contains("is pulled"))
        #expect(s.requests.first?.method == "GET" && s.requests.first?.body.isEmpty == true)
        let missing = await client(OllamaProvider(baseURL: s.baseURL, model: "llava")).check()
        #expect(missing.ok && missing.message.contains("NOT pulled"))
        let down = await client(OllamaProvider(baseURL: "http://127.0.0.1:1", model: "x")).check()
        #expect(!down.ok && down.status == nil && down.message.contains("cannot reach ollama"))
    }

    @Test func keyNeverAppearsInNotesOrErrors() async throws {
        let s = try LoopbackHTTPServer(script: [
            .json(#"{"error":{"message":"slow down \#(Self.key)"}}"#, status: 429, headers: ["retry-after-ms": "1"]),
            .json(#"{"error":{"message":"boom \#(Self.key)"}}"#, status: 500),
            .json(#"{"error":{"message":"quota for \#(Self.key)","code":"insufficient_quota"}}"#, status: 429),
        ])
        let notes = Notes()
        let failure = try #require(await client(openAI(s), notes: notes).refine(Wire.input).failureValue)
        #expect(notes.all.count == 2)
        for text in notes.all + [failure.error.description, "\(failure)", String(reflecting: failure)] {
            #expect(!text.contains(Self.key), "\(text)")
        }
    }
}

extension Result {
    var failureValue: Failure? { if case .failure(let f) = self { f } else { nil } }
}
