import FoodCore
import Foundation
import LLMRefiner

/// libFuzzer entry: arbitrary bytes as a provider's HTTP response body (built with `-D PROVIDER_OPENAI`,
/// `PROVIDER_GEMINI` or `PROVIDER_OLLAMA`). When the input holds a NUL, the text after the last one is also sent as
/// the `Retry-After` and `retry-after-ms` header values. The body goes through `answerText` (200) and `classify`
/// (429 and 503, which read error bodies and retry hints); the answer text and the raw body go through
/// `AnswerValidator`. Every outcome must be a value or an `LLMError`; never a trap.
#if PROVIDER_GEMINI
let provider: any LLMProvider = GeminiProvider(baseURL: "http://127.0.0.1:9", model: "m", apiKey: nil)
#elseif PROVIDER_OLLAMA
let provider: any LLMProvider = OllamaProvider(baseURL: "http://127.0.0.1:9", model: "m")
#else
let provider: any LLMProvider = OpenAICompatibleProvider(baseURL: "http://127.0.0.1:9/v1", model: "m", apiKey: nil)
#endif
let now = Date(timeIntervalSince1970: 1_700_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLLMResponse(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var body = Array(UnsafeBufferPointer(start: data, count: size))
    var headers: [String: String] = [:]
    if let nul = body.lastIndex(of: 0) {
        let hint = String(decoding: body[(nul + 1)...].prefix(64), as: UTF8.self)
        headers = ["retry-after": hint, "retry-after-ms": hint]
        body = Array(body[..<nul])
    }
    let ok = HTTPResponse(status: 200, body: body, contentType: "application/json", headers: headers)
    if let text = try? provider.answerText(from: ok) {
        _ = try? AnswerValidator.foods(fromAnswer: text)
    }
    for status in [429, 503] {
        let failure = provider.classify(HTTPResponse(status: status, body: body, headers: headers), now: now)
        _ = RetryPolicy(random: { 0.5 }).decide(attempt: 1, retryable: failure.retryable, serverWait: failure.serverWait)
    }
    _ = try? AnswerValidator.foods(fromAnswer: String(decoding: body, as: UTF8.self))
    return 0
}
