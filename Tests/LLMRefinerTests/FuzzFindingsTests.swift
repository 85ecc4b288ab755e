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

    /// A `Retry-After` of `Su߱�� 1` (found by the llm-openai fuzz target) made Foundation's DateFormatter trap
    /// ("Incorrect range CFRange(location: 0, length: 2)"); a header that is not printable ASCII is not a date.
    @Test func nonASCIIRetryAfterIsNotADateAndDoesNotTrap() {
        let tail: [UInt8] = [0x53, 0x75, 0xDF, 0xB1, 0x90, 0x89, 0x20, 0x31]
        let value = String(decoding: tail, as: UTF8.self)
        #expect(value == "Su\u{07F1}\u{FFFD}\u{FFFD} 1")
        #expect(RetryPolicy.httpDate(value) == nil)
        #expect(RetryPolicy.httpDate("Fri, 31 Dec 9999 23:59:59 GMT") != nil, "a real HTTP date still parses")
        let openai = OpenAICompatibleProvider(baseURL: "http://127.0.0.1:9/v1", model: "m", apiKey: nil)
        let failure = openai.classify(HTTPResponse(status: 503, body: Array(#"{"error": "busy"}"#.utf8),
                                                   headers: ["retry-after": value]), now: Self.now)
        #expect(failure.retryable && failure.serverWait == nil)
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
