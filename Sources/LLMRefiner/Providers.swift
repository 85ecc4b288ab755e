public import FoodCore
public import Foundation

/// The three wire protocols. `azure` is the OpenAI protocol with Azure's `api-key` header and deployment URL.
public enum LLMProviderKind: String, Sendable, CaseIterable, Codable {
    case openai, azure, gemini, ollama

    public var defaultBaseURL: String {
        switch self {
        case .openai: "https://api.openai.com/v1"
        case .azure: ""
        case .gemini: "https://generativelanguage.googleapis.com/v1beta"
        case .ollama: "http://127.0.0.1:11434"
        }
    }
}

/// A failed HTTP exchange, classified: the error to record, whether another attempt may help, and the wait the
/// server asked for.
public struct ProviderFailure: Sendable, Equatable {
    public var error: LLMError
    public var retryable: Bool
    public var serverWait: Duration?
}

/// One model behind one wire protocol: builds requests from plain values and reads answers. No I/O here.
public protocol LLMProvider: Sendable {
    var kind: LLMProviderKind { get }
    var model: String { get }
    /// Where refinement requests go (never contains the key).
    var endpoint: String { get }
    /// A free request that shows whether the provider answers and knows the key (model list / model info).
    var checkEndpoint: String { get }
    func request(for input: LLMInput, timeout: Duration, maxAnswerBytes: Int) -> HTTPRequest
    /// A text-only request (no photo, no schema): a system and a user message, temperature 0.
    func textRequest(system: String, user: String, maxTokens: Int, timeout: Duration, maxAnswerBytes: Int) -> HTTPRequest
    func checkRequest(timeout: Duration) -> HTTPRequest
    /// The model's text from a 2xx response; refusals, truncation and broken envelopes throw.
    func answerText(from response: HTTPResponse) throws(LLMError) -> String
}

extension LLMProvider {
    /// A non-2xx response (or a transport failure) as a recorded error plus retry advice.
    public func classify(_ response: HTTPResponse, now: Date) -> ProviderFailure {
        let name = kind.rawValue
        let body = JSON.object(response.body)
        let err = body?["error"]
        var message = ""
        var codes: [String] = []
        if let e = err as? [String: Any] {
            message = (e["message"] as? String) ?? ""
            for k in ["code", "type", "status"] { if let s = e[k] as? String { codes.append(s.lowercased()) } }
            for case let d as [String: Any] in (e["details"] as? [Any]) ?? [] {
                if let r = d["reason"] as? String { codes.append(r.lowercased()) }
                for case let v as [String: Any] in (d["violations"] as? [Any]) ?? [] {
                    if let q = v["quotaId"] as? String { codes.append(q.lowercased()) }
                }
            }
        } else if let s = err as? String {
            message = s
        }
        if message.isEmpty { message = String(decoding: response.body.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }
        message = String(message.prefix(300))
        let status = response.status
        let summary = "HTTP \(status)" + (message.isEmpty ? "" : ": \(message)")
        let wait = RetryPolicy.serverWait(headers: response.headers, body: body, now: now)
        let lowered = (codes.joined(separator: " ") + " " + message).lowercased()
        if lowered.contains("insufficient_quota") || lowered.contains("perday") || lowered.contains("per day")
            || lowered.contains("billing") {
            return ProviderFailure(error: .quotaExhausted(provider: name, message: summary), retryable: false, serverWait: nil)
        }
        if status == 401 || status == 403 || lowered.contains("invalid_api_key") || lowered.contains("api_key_invalid") {
            return ProviderFailure(error: .unauthorized(provider: name, message: summary), retryable: false, serverWait: nil)
        }
        switch status {
        case 408, 409, 429:
            return ProviderFailure(error: .rateLimited(provider: name, message: summary), retryable: true, serverWait: wait)
        case 500...599:
            return ProviderFailure(error: .server(status: status, provider: name, message: summary), retryable: true, serverWait: wait)
        default:
            return ProviderFailure(error: .badRequest(status: status, provider: name, message: summary), retryable: false, serverWait: nil)
        }
    }
}

func trimSlash(_ s: String) -> String { s.hasSuffix("/") ? String(s.dropLast()) : s }

/// JSON in and out, plus the key (when there is one) in the provider's header.
func jsonHeaders(key: LLMSecret?, header: String, prefix: String) -> [String: String] {
    var h = ["Content-Type": "application/json", "Accept": "application/json"]
    if let key = key?.value { h[header] = prefix + key }
    return h
}

/// A refinement request: the JSON body POSTed with the provider's headers.
func postRequest(url: String, headers: [String: String], body: [String: Any], timeout: Duration, maxAnswerBytes: Int) -> HTTPRequest {
    HTTPRequest(method: .post, url: url, headers: headers, body: JSON.encode(body), connectTimeout: .seconds(10),
                totalTimeout: timeout, maxBodyBytes: maxAnswerBytes)
}

/// The free availability check: a GET with the provider's headers (no body, so no Content-Type).
func availabilityCheck(url: String, headers: [String: String], timeout: Duration) -> HTTPRequest {
    var h = headers
    h["Content-Type"] = nil
    return HTTPRequest(url: url, headers: h, connectTimeout: .seconds(10), totalTimeout: timeout)
}

func envelope(_ response: HTTPResponse, _ provider: String) throws(LLMError) -> [String: Any] {
    guard let o = JSON.object(response.body) else {
        throw .malformedJSON("\(provider) sent a body that is not a JSON object: \(AnswerValidator.preview(String(decoding: response.body.prefix(200), as: UTF8.self)))")
    }
    return o
}

/// OpenAI chat completions with an `image_url` data URL and `response_format: json_schema` (strict). Serves
/// OpenAI, Azure OpenAI, DeepSeek, Groq, Together, OpenRouter, vLLM, LM Studio and Ollama's `/v1`.
public struct OpenAICompatibleProvider: LLMProvider {
    public let kind: LLMProviderKind
    public let model: String
    public let baseURL: String
    public let azureAPIVersion: String
    let apiKey: LLMSecret?

    public init(baseURL: String, model: String, apiKey: LLMSecret?, azure: Bool = false, azureAPIVersion: String = "2024-10-21") {
        self.kind = azure ? .azure : .openai
        self.baseURL = trimSlash(baseURL); self.model = model; self.apiKey = apiKey; self.azureAPIVersion = azureAPIVersion
    }

    public var endpoint: String {
        guard kind == .azure else { return baseURL + "/chat/completions" }
        if baseURL.contains("/chat/completions") { return baseURL }
        let deployment = baseURL.contains("/openai/deployments/") ? baseURL : baseURL + "/openai/deployments/\(model)"
        return deployment + "/chat/completions?api-version=\(azureAPIVersion)"
    }

    public var checkEndpoint: String {
        guard kind == .azure else { return baseURL + "/models" }
        let root = baseURL.components(separatedBy: "/openai/").first ?? baseURL
        return root + "/openai/models?api-version=\(azureAPIVersion)"
    }

    var headers: [String: String] {
        jsonHeaders(key: apiKey, header: kind == .azure ? "api-key" : "Authorization", prefix: kind == .azure ? "" : "Bearer ")
    }

    public func request(for input: LLMInput, timeout: Duration, maxAnswerBytes: Int) -> HTTPRequest {
        let image = "data:image/jpeg;base64," + Data(input.jpeg).base64EncodedString()
        let body: [String: Any] = [
            "model": model,
            "temperature": 0,
            "max_tokens": 2000,
            "messages": [
                ["role": "system", "content": LLMPrompt.system],
                ["role": "user", "content": [
                    ["type": "text", "text": LLMPrompt.userText(width: input.width, height: input.height, candidates: input.candidates)],
                    ["type": "image_url", "image_url": ["url": image]],
                ]],
            ],
            "response_format": ["type": "json_schema", "json_schema": ["name": "meal_foods", "strict": true, "schema": LLMPrompt.jsonSchema()]],
        ]
        return postRequest(url: endpoint, headers: headers, body: body, timeout: timeout, maxAnswerBytes: maxAnswerBytes)
    }

    public func textRequest(system: String, user: String, maxTokens: Int, timeout: Duration, maxAnswerBytes: Int) -> HTTPRequest {
        let body: [String: Any] = [
            "model": model, "temperature": 0, "max_tokens": maxTokens,
            "messages": [["role": "system", "content": system], ["role": "user", "content": user]],
        ]
        return postRequest(url: endpoint, headers: headers, body: body, timeout: timeout, maxAnswerBytes: maxAnswerBytes)
    }

    public func checkRequest(timeout: Duration) -> HTTPRequest {
        availabilityCheck(url: checkEndpoint, headers: headers, timeout: timeout)
    }

    public func answerText(from response: HTTPResponse) throws(LLMError) -> String {
        let o = try envelope(response, kind.rawValue)
        guard let choice = (o["choices"] as? [Any])?.first as? [String: Any] else { throw .malformedJSON("no choices in the \(kind.rawValue) answer") }
        let message = choice["message"] as? [String: Any]
        if let refusal = message?["refusal"] as? String, !refusal.isEmpty { throw .refused(refusal) }
        let finish = choice["finish_reason"] as? String
        if finish == "length" { throw .truncated("finish_reason: length") }
        if finish == "content_filter" { throw .refused("finish_reason: content_filter") }
        guard let content = message?["content"] as? String else { throw .malformedJSON("the \(kind.rawValue) answer has no message content") }
        return content
    }
}

/// Gemini `generateContent` with `inline_data`, `responseMimeType: application/json` and `responseSchema`.
public struct GeminiProvider: LLMProvider {
    public let kind = LLMProviderKind.gemini
    public let model: String
    public let baseURL: String
    let apiKey: LLMSecret?

    public init(baseURL: String, model: String, apiKey: LLMSecret?) {
        self.baseURL = trimSlash(baseURL); self.model = model; self.apiKey = apiKey
    }

    var modelPath: String { baseURL + "/models/" + (model.hasPrefix("models/") ? String(model.dropFirst(7)) : model) }
    public var endpoint: String { modelPath + ":generateContent" }
    public var checkEndpoint: String { modelPath }

    var headers: [String: String] {
        jsonHeaders(key: apiKey, header: "x-goog-api-key", prefix: "")
    }

    public func request(for input: LLMInput, timeout: Duration, maxAnswerBytes: Int) -> HTTPRequest {
        let body: [String: Any] = [
            "systemInstruction": ["parts": [["text": LLMPrompt.system]]],
            "contents": [["role": "user", "parts": [
                ["text": LLMPrompt.userText(width: input.width, height: input.height, candidates: input.candidates)],
                ["inline_data": ["mime_type": "image/jpeg", "data": Data(input.jpeg).base64EncodedString()]],
            ]]],
            "generationConfig": ["temperature": 0, "maxOutputTokens": 8192, "responseMimeType": "application/json",
                                 "responseSchema": LLMPrompt.geminiSchema()],
        ]
        return postRequest(url: endpoint, headers: headers, body: body, timeout: timeout, maxAnswerBytes: maxAnswerBytes)
    }

    public func textRequest(system: String, user: String, maxTokens: Int, timeout: Duration, maxAnswerBytes: Int) -> HTTPRequest {
        let body: [String: Any] = [
            "systemInstruction": ["parts": [["text": system]]],
            "contents": [["role": "user", "parts": [["text": user]]]],
            "generationConfig": ["temperature": 0, "maxOutputTokens": maxTokens],
        ]
        return postRequest(url: endpoint, headers: headers, body: body, timeout: timeout, maxAnswerBytes: maxAnswerBytes)
    }

    public func checkRequest(timeout: Duration) -> HTTPRequest {
        availabilityCheck(url: checkEndpoint, headers: headers, timeout: timeout)
    }

    public func answerText(from response: HTTPResponse) throws(LLMError) -> String {
        let o = try envelope(response, "gemini")
        if let block = (o["promptFeedback"] as? [String: Any])?["blockReason"] as? String { throw .refused("prompt blocked: \(block)") }
        guard let candidate = (o["candidates"] as? [Any])?.first as? [String: Any] else { throw .refused("gemini returned no candidates") }
        let finish = candidate["finishReason"] as? String ?? "STOP"
        if finish == "MAX_TOKENS" { throw .truncated("finishReason: MAX_TOKENS") }
        if ["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"].contains(finish) {
            throw .refused("finishReason: \(finish)")
        }
        let parts = ((candidate["content"] as? [String: Any])?["parts"] as? [Any]) ?? []
        let text = parts.compactMap { ($0 as? [String: Any])?["text"] as? String }.joined()
        guard !text.isEmpty else { throw .malformedJSON("the gemini answer has no text part (finishReason \(finish))") }
        return text
    }
}

/// Ollama's native `/api/chat` with `images`, a `format` JSON schema and `stream: false`.
public struct OllamaProvider: LLMProvider {
    public let kind = LLMProviderKind.ollama
    public let model: String
    public let baseURL: String
    let apiKey: LLMSecret?

    public init(baseURL: String, model: String, apiKey: LLMSecret? = nil) {
        self.baseURL = trimSlash(baseURL); self.model = model; self.apiKey = apiKey
    }

    public var endpoint: String { baseURL + "/api/chat" }
    public var checkEndpoint: String { baseURL + "/api/tags" }

    var headers: [String: String] {
        jsonHeaders(key: apiKey, header: "Authorization", prefix: "Bearer ")
    }

    public func request(for input: LLMInput, timeout: Duration, maxAnswerBytes: Int) -> HTTPRequest {
        let body: [String: Any] = [
            "model": model,
            "stream": false,
            "format": LLMPrompt.jsonSchema(),
            "options": ["temperature": 0],
            "messages": [
                ["role": "system", "content": LLMPrompt.system],
                ["role": "user", "content": LLMPrompt.userText(width: input.width, height: input.height, candidates: input.candidates),
                 "images": [Data(input.jpeg).base64EncodedString()]],
            ],
        ]
        return postRequest(url: endpoint, headers: headers, body: body, timeout: timeout, maxAnswerBytes: maxAnswerBytes)
    }

    public func textRequest(system: String, user: String, maxTokens: Int, timeout: Duration, maxAnswerBytes: Int) -> HTTPRequest {
        let body: [String: Any] = [
            "model": model, "stream": false, "options": ["temperature": 0, "num_predict": maxTokens],
            "messages": [["role": "system", "content": system], ["role": "user", "content": user]],
        ]
        return postRequest(url: endpoint, headers: headers, body: body, timeout: timeout, maxAnswerBytes: maxAnswerBytes)
    }

    public func checkRequest(timeout: Duration) -> HTTPRequest {
        availabilityCheck(url: checkEndpoint, headers: headers, timeout: timeout)
    }

    public func answerText(from response: HTTPResponse) throws(LLMError) -> String {
        let o = try envelope(response, "ollama")
        if let e = o["error"] as? String { throw .malformedJSON("ollama error: \(e)") }
        if o["done_reason"] as? String == "length" { throw .truncated("done_reason: length") }
        guard let content = (o["message"] as? [String: Any])?["content"] as? String else { throw .malformedJSON("the ollama answer has no message content") }
        return content
    }
}
