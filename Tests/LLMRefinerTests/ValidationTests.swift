import FoodCore
import Foundation
@testable import LLMRefiner
import Testing

@Suite("Answer validation")
struct ValidationTests {
    @Test func goodAnswerParses() throws {
        let foods = try AnswerValidator.foods(fromAnswer: Wire.foodsJSON)
        #expect(foods == [LLMFood(name: "Banana", nameZh: "香蕉", grams: 120, confidence: 0.9, box: NormalizedBox(x: 0.1, y: 0.2, w: 0.5, h: 0.4))])
    }

    @Test func oneCodeFenceIsTolerated() throws {
        #expect(try AnswerValidator.foods(fromAnswer: "```json\n" + Wire.foodsJSON + "\n```").count == 1)
    }

    @Test func emptyFoodListIsValid() throws {
        #expect(try AnswerValidator.foods(fromAnswer: #"{"foods":[]}"#).isEmpty)
    }

    static let malformed = ["", "not json", #"{"foods":[{"name":"Banana""#, "{'foods': []}", "Sure! Here is the JSON"]

    @Test(arguments: malformed) func malformedJSONIsRecorded(_ text: String) {
        #expect { try AnswerValidator.foods(fromAnswer: text) } throws: { ($0 as? LLMError)?.kind == "malformed_json" }
    }

    static let violations: [(String, String)] = [
        (#"[]"#, "not a JSON object"),
        (#"{"items":[]}"#, "missing \"foods\""),
        (#"{"foods":{}}"#, "not an array"),
        (#"{"foods":[{"name_zh":"x","grams":1,"confidence":0.5,"box":{"x":0,"y":0,"w":1,"h":1}}]}"#, "foods[0].name"),
        (#"{"foods":[{"name":" ","name_zh":"x","grams":1,"confidence":0.5,"box":{"x":0,"y":0,"w":1,"h":1}}]}"#, "foods[0].name is empty"),
        (#"{"foods":[{"name":"a","grams":1,"confidence":0.5,"box":{"x":0,"y":0,"w":1,"h":1}}]}"#, "foods[0].name_zh"),
        (#"{"foods":[{"name":"a","name_zh":"","grams":"120","confidence":0.5,"box":{"x":0,"y":0,"w":1,"h":1}}]}"#, "foods[0].grams is missing or not a number"),
        (#"{"foods":[{"name":"a","name_zh":"","grams":true,"confidence":0.5,"box":{"x":0,"y":0,"w":1,"h":1}}]}"#, "foods[0].grams is missing or not a number"),
        (#"{"foods":[{"name":"a","name_zh":"","grams":0,"confidence":0.5,"box":{"x":0,"y":0,"w":1,"h":1}}]}"#, "not a plausible portion"),
        (#"{"foods":[{"name":"a","name_zh":"","grams":25000,"confidence":0.5,"box":{"x":0,"y":0,"w":1,"h":1}}]}"#, "not a plausible portion"),
        (#"{"foods":[{"name":"a","name_zh":"","grams":100,"confidence":1.5,"box":{"x":0,"y":0,"w":1,"h":1}}]}"#, "outside 0…1"),
        (#"{"foods":[{"name":"a","name_zh":"","grams":100,"confidence":0.5,"box":{"x":0.6,"y":0,"w":0.6,"h":1}}]}"#, "not inside the photo"),
        (#"{"foods":[{"name":"a","name_zh":"","grams":100,"confidence":0.5,"box":{"x":0.1,"y":0.1,"w":0,"h":0.2}}]}"#, "not inside the photo"),
        (#"{"foods":[{"name":"a","name_zh":"","grams":100,"confidence":0.5,"box":{"x":120,"y":40,"w":300,"h":200}}]}"#, "not inside the photo"),
        (#"{"foods":[{"name":"a","name_zh":"","grams":100,"confidence":0.5,"box":[0,0,1,1]}]}"#, "box is missing or not an object"),
        (#"{"foods":[{"name":"a","name_zh":"","grams":100,"confidence":0.5,"box":{"x":0,"y":0,"w":1}}]}"#, "box.h"),
    ]

    @Test(arguments: violations) func schemaViolationsSayWhere(_ c: (String, String)) {
        #expect {
            try AnswerValidator.foods(fromAnswer: c.0)
        } throws: { e in
            guard case .schemaViolation(let m) = e as? LLMError else { return false }
            return m.contains(c.1)
        }
    }

    @Test func tooManyFoodsIsAViolation() {
        let one = #"{"name":"a","name_zh":"","grams":100,"confidence":0.5,"box":{"x":0,"y":0,"w":1,"h":1}}"#
        let text = #"{"foods":["# + Array(repeating: one, count: 30).joined(separator: ",") + "]}"
        #expect { try AnswerValidator.foods(fromAnswer: text) } throws: { ($0 as? LLMError)?.kind == "schema_violation" }
    }
}

@Suite("Provider envelopes")
struct EnvelopeTests {
    let openai = OpenAICompatibleProvider(baseURL: "http://127.0.0.1:9/v1", model: "m", apiKey: nil)
    let gemini = GeminiProvider(baseURL: "http://127.0.0.1:9/v1beta", model: "g", apiKey: nil)
    let ollama = OllamaProvider(baseURL: "http://127.0.0.1:9", model: "o")

    func response(_ s: String, status: Int = 200) -> HTTPResponse { HTTPResponse(status: status, body: Array(s.utf8)) }

    func kind(_ p: any LLMProvider, _ body: String) -> String? {
        do { _ = try p.answerText(from: response(body)); return nil } catch { return error.kind }
    }

    @Test func openAIRefusalLengthAndFilter() throws {
        #expect(try openai.answerText(from: response(Wire.openAI())) == Wire.foodsJSON)
        #expect(kind(openai, Wire.openAIRefusal("I can't help with that.")) == "refused")
        #expect(kind(openai, Wire.openAI(content: "{\"foods\":[", finish: "length")) == "truncated")
        #expect(kind(openai, Wire.openAI(finish: "content_filter")) == "refused")
        #expect(kind(openai, #"{"choices":[]}"#) == "malformed_json")
        #expect(kind(openai, #"<html>bad gateway</html>"#) == "malformed_json")
    }

    @Test func geminiFinishReasonsAndBlocks() throws {
        #expect(try gemini.answerText(from: response(Wire.gemini())) == Wire.foodsJSON)
        let split = #"{"candidates":[{"content":{"parts":[{"text":"{\"foods\":"},{"text":"[]}"}]},"finishReason":"STOP"}]}"#
        #expect(try gemini.answerText(from: response(split)) == #"{"foods":[]}"#)
        #expect(kind(gemini, Wire.gemini(finish: "MAX_TOKENS")) == "truncated")
        #expect(kind(gemini, Wire.gemini(finish: "SAFETY")) == "refused")
        #expect(kind(gemini, #"{"promptFeedback":{"blockReason":"SAFETY"}}"#) == "refused")
    }

    @Test func ollamaDoneReason() throws {
        #expect(try ollama.answerText(from: response(Wire.ollama())) == Wire.foodsJSON)
        #expect(kind(ollama, Wire.ollama(doneReason: "length")) == "truncated")
        #expect(kind(ollama, #"{"error":"model 'o' not found"}"#) == "malformed_json")
    }

    @Test func classificationOfErrors() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        func classify(_ status: Int, _ body: String, _ headers: [String: String] = [:], _ p: any LLMProvider) -> ProviderFailure {
            p.classify(HTTPResponse(status: status, body: Array(body.utf8), headers: headers), now: now)
        }
        let quota = classify(429, #"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#, [:], openai)
        #expect(quota.error.kind == "quota_exhausted" && !quota.retryable && quota.error.isTerminal)
        let perDay = classify(429, #"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"Quota exceeded","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"17s"}]}}"#, [:], gemini)
        #expect(perDay.error.kind == "quota_exhausted" && !perDay.retryable)
        let perMinute = classify(429, #"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"slow down","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}"#, [:], gemini)
        #expect(perMinute.retryable && perMinute.serverWait == .milliseconds(1500))
        let badKey = classify(400, #"{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT","details":[{"reason":"API_KEY_INVALID"}]}}"#, [:], gemini)
        #expect(badKey.error.kind == "unauthorized" && !badKey.retryable)
        #expect(classify(401, #"{"error":{"message":"Incorrect API key","code":"invalid_api_key"}}"#, [:], openai).error.kind == "unauthorized")
        #expect(classify(403, "forbidden", [:], openai).error.kind == "unauthorized")
        for s in [400, 404, 413] { #expect(classify(s, #"{"error":"nope"}"#, [:], ollama).error.kind == "bad_request" && !classify(s, "", [:], ollama).retryable) }
        for s in [408, 409, 429] { #expect(classify(s, "", [:], openai).retryable && classify(s, "", [:], openai).error.kind == "rate_limited") }
        for s in [500, 502, 503] { #expect(classify(s, "", [:], openai).retryable && classify(s, "", [:], openai).error.kind == "server_error") }
    }
}

@Suite("Retry policy")
struct RetryPolicyTests {
    let now = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func serverWaitHeaders() {
        #expect(RetryPolicy.serverWait(headers: ["retry-after-ms": "250"], body: nil, now: now) == .milliseconds(250))
        #expect(RetryPolicy.serverWait(headers: ["retry-after-ms": "250", "retry-after": "9"], body: nil, now: now) == .milliseconds(250))
        #expect(RetryPolicy.serverWait(headers: ["retry-after": "3"], body: nil, now: now) == .seconds(3))
        // 1_700_000_000 is Tue, 14 Nov 2023 22:13:20 GMT.
        #expect(RetryPolicy.serverWait(headers: ["retry-after": "Tue, 14 Nov 2023 22:13:27 GMT"], body: nil, now: now) == .seconds(7))
        #expect(RetryPolicy.serverWait(headers: ["retry-after": "Tue, 14 Nov 2023 22:00:00 GMT"], body: nil, now: now) == .zero)
        #expect(RetryPolicy.serverWait(headers: ["retry-after": "soon"], body: nil, now: now) == nil)
        let gemini: [String: Any] = ["error": ["details": [["@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"]]]]
        #expect(RetryPolicy.serverWait(headers: [:], body: gemini, now: now) == .seconds(37))
    }

    @Test func backoffGrowsWithJitterAndIsCapped() {
        let p = RetryPolicy(maxAttempts: 10, baseDelay: .seconds(1), maxBackoff: .seconds(8), random: { 1 })
        #expect(p.decide(attempt: 1, retryable: true, serverWait: nil) == .retry(after: .seconds(1)))
        #expect(p.decide(attempt: 2, retryable: true, serverWait: nil) == .retry(after: .seconds(2)))
        #expect(p.decide(attempt: 3, retryable: true, serverWait: nil) == .retry(after: .seconds(4)))
        #expect(p.decide(attempt: 6, retryable: true, serverWait: nil) == .retry(after: .seconds(8)))
        let low = RetryPolicy(maxAttempts: 10, baseDelay: .seconds(1), random: { 0 })
        #expect(low.decide(attempt: 3, retryable: true, serverWait: nil) == .retry(after: .milliseconds(400)))
    }

    @Test func serverWaitHonouredUpToTheCap() {
        let p = RetryPolicy(maxAttempts: 4, maxServerWait: .seconds(60))
        #expect(p.decide(attempt: 1, retryable: true, serverWait: .seconds(30)) == .retry(after: .seconds(30)))
        #expect(p.decide(attempt: 1, retryable: true, serverWait: .seconds(3600)) == .waitTooLong(.seconds(3600)))
        #expect(p.decide(attempt: 4, retryable: true, serverWait: .seconds(1)) == .giveUp)
        #expect(p.decide(attempt: 1, retryable: false, serverWait: .seconds(1)) == .giveUp)
    }
}

@Suite("Configuration")
struct ConfigurationTests {
    let home = NSTemporaryDirectory() + "fm-llm-config-\(UUID().uuidString)"

    func load(_ env: [String: String]) throws(LLMError) -> LLMConfiguration? {
        try LLMConfiguration.load(environment: env, userDataDirectory: home)
    }

    func message(_ env: [String: String]) -> String? {
        do { _ = try load(env); return nil } catch { return error.description }
    }

    @Test func nothingConfiguredMeansNoRefinement() throws {
        #expect(try load([:]) == nil)
    }

    @Test func environmentVariables() throws {
        let c = try #require(try load(["FOODMOMENT_LLM_PROVIDER": "gemini", "FOODMOMENT_LLM_MODEL": "gemini-2.5-flash", "FOODMOMENT_LLM_API_KEY": "k-123"]))
        #expect(c.provider == .gemini && c.baseURL == "https://generativelanguage.googleapis.com/v1beta" && !c.isLocal)
        #expect(c.makeProvider().endpoint == "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent")
        #expect(c.keySource == "FOODMOMENT_LLM_API_KEY" && !"\(c)".contains("k-123") && !String(reflecting: c).contains("k-123"))
        let o = try #require(try load(["FOODMOMENT_LLM_PROVIDER": "ollama", "FOODMOMENT_LLM_MODEL": "qwen2.5vl:7b"]))
        #expect(o.isLocal && o.makeProvider().endpoint == "http://127.0.0.1:11434/api/chat" && o.apiKey == nil)
    }

    @Test func azureDeploymentURL() throws {
        let c = try #require(try load(["FOODMOMENT_LLM_PROVIDER": "azure", "FOODMOMENT_LLM_MODEL": "gpt4o-deploy",
                                       "FOODMOMENT_LLM_BASE_URL": "https://acme.openai.azure.com/", "FOODMOMENT_LLM_API_KEY": "az"]))
        #expect(c.makeProvider().endpoint == "https://acme.openai.azure.com/openai/deployments/gpt4o-deploy/chat/completions?api-version=2024-10-21")
        let r = c.makeProvider().request(for: Wire.input, timeout: .seconds(5), maxAnswerBytes: 1000)
        #expect(r.headers["api-key"] == "az" && r.headers["Authorization"] == nil)
    }

    @Test func mistakesSayWhatToFix() {
        #expect(message(["FOODMOMENT_LLM_MODEL": "x"])?.contains("FOODMOMENT_LLM_PROVIDER") == true)
        #expect(message(["FOODMOMENT_LLM_PROVIDER": "claude", "FOODMOMENT_LLM_MODEL": "x"])?.contains("unknown provider") == true)
        #expect(message(["FOODMOMENT_LLM_PROVIDER": "openai"])?.contains("FOODMOMENT_LLM_MODEL") == true)
        #expect(message(["FOODMOMENT_LLM_PROVIDER": "openai", "FOODMOMENT_LLM_MODEL": "m"])?.contains("needs a key") == true)
        #expect(message(["FOODMOMENT_LLM_PROVIDER": "openai", "FOODMOMENT_LLM_MODEL": "m", "FOODMOMENT_LLM_BASE_URL": "ftp://x"])?.contains("not an http(s) URL") == true)
        #expect(message(["FOODMOMENT_LLM_PROVIDER": "openai", "FOODMOMENT_LLM_MODEL": "m", "FOODMOMENT_LLM_API_KEY": "k",
                         "FOODMOMENT_LLM_BASE_URL": "http://api.example.com/v1"])?.contains("plain http") == true)
    }

    @Test func keyFileMustBeOwnerOnly() throws {
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let path = home + "/key"
        try Data("sk-from-file\n".utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let env = ["FOODMOMENT_LLM_PROVIDER": "openai", "FOODMOMENT_LLM_MODEL": "m", "FOODMOMENT_LLM_API_KEY_FILE": path]
        let refused = try #require(message(env))
        #expect(refused.contains("readable by others") && refused.contains("chmod 600") && !refused.contains("sk-from-file"))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        let c = try #require(try load(env))
        #expect(c.apiKey == LLMSecret("sk-from-file") && c.keySource == "key file \(path)")
    }

    @Test func configFileNeverHoldsTheKeyAndLocalIsNotReplaced() throws {
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        let file = home + "/llm.json"
        try Data(#"{"provider":"openai","model":"m","api_key":"sk-in-file"}"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(message([:])?.contains("keys do not belong in the config file") == true)
        try Data(#"{"provider":"ollama","model":"llava","refine":true,"max_side":1024,"concurrency":3}"#.utf8).write(to: URL(fileURLWithPath: file))
        let c = try #require(try load([:]))
        #expect(c.provider == .ollama && c.refineByDefault && c.maxSide == 1024 && c.concurrency == 3 && c.configFile == file)
        let replaced = message(["FOODMOMENT_LLM_PROVIDER": "openai", "FOODMOMENT_LLM_BASE_URL": "https://api.openai.com/v1", "FOODMOMENT_LLM_API_KEY": "k"])
        #expect(replaced?.contains("names a local provider") == true)
        try Data(#"{"provider":"ollama","model":"llava","max_side":4000}"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(message([:])?.contains("512…1024") == true)
    }
}
