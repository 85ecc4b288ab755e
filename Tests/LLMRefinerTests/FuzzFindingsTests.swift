import FoodCore
import Foundation
@testable import LLMRefiner
import Testing

/// Regression tests for what the llm-openai / llm-gemini / llm-ollama fuzz targets found.
@Suite("Fuzz findings: provider responses")
struct LLMFuzzFindingsTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    /// `retry-after-ms: 1e308` (and a 60-digit Retry-After, a Gemini retryDelay of "1e300s") trapped converting to
    /// Int64; now the wait is capped at a year, which the retry policy then refuses as too long.
    @Test(arguments: [
        ["retry-after-ms": "1e308"],
        ["retry-after": "333333333333333333333333333333333333333333333333333333333333"],
        ["retry-after": "Fri, 31 Dec 9999 23:59:59 GMT"],
    ])
    func hugeServerWaitsAreCappedNotFatal(_ headers: [String: String]) throws {
        let wait = try #require(RetryPolicy.serverWait(headers: headers, body: nil, now: Self.now))
        #expect(wait > .seconds(3600) && wait <= .seconds(366 * 24 * 3600))
        #expect(RetryPolicy().decide(attempt: 1, retryable: true, serverWait: wait) == .waitTooLong(wait))
    }

    @Test func hugeGeminiRetryDelayIsCapped() throws {
        let body = #"{"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1e300s"}]}}"#
        let provider = GeminiProvider(baseURL: "http://127.0.0.1:9", model: "m", apiKey: nil)
        let failure = provider.classify(HTTPResponse(status: 429, body: Array(body.utf8)), now: Self.now)
        #expect(failure.retryable && failure.serverWait == .milliseconds(365 * 24 * 3600 * 1000))
    }

    /// The exact inputs the fuzzers saved (the text after the NUL is the retry header value).
    @Test func fuzzArtifactsClassifyWithoutTrapping() {
        let openai = OpenAICompatibleProvider(baseURL: "http://127.0.0.1:9/v1", model: "m", apiKey: nil)
        let ollama = OllamaProvider(baseURL: "http://127.0.0.1:9", model: "m")
        let cases: [(any LLMProvider, String, String)] = [
            (openai, "", String(repeating: "3", count: 80)),
            (ollama, #"{"m1"#, "1e308"),
        ]
        for (provider, body, hint) in cases {
            let response = HTTPResponse(status: 503, body: Array(body.utf8), headers: ["retry-after": hint, "retry-after-ms": hint])
            let failure = provider.classify(response, now: Self.now)
            #expect(failure.retryable && failure.serverWait != nil)
        }
    }
}
