/// Why a refinement did not happen. Every case is recorded on the photo (the stage-1 result stays); none crashes.
public enum LLMError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Configuration is missing or contradictory (the message says which variable or file to fix).
    case configuration(String)
    /// 401/403 or an invalid key: retrying cannot help.
    case unauthorized(provider: String, message: String)
    /// The account is out of credit or over a per-day quota: retrying today cannot help.
    case quotaExhausted(provider: String, message: String)
    /// 429 (or 408/409) still there after the allowed retries, or a server asking to wait longer than the cap.
    case rateLimited(provider: String, message: String)
    /// 400/404/413 and other 4xx: the request (model name, size, format) is wrong.
    case badRequest(status: Int, provider: String, message: String)
    /// 5xx after the allowed retries.
    case server(status: Int, provider: String, message: String)
    case network(provider: String, message: String)
    case timedOut(provider: String, message: String)
    /// The answer was larger than the cap.
    case tooLarge(limit: Int)
    /// The model declined (refusal text, a safety block).
    case refused(String)
    /// The answer stopped at the token limit (`finish_reason: length`, `MAX_TOKENS`).
    case truncated(String)
    /// The answer is not JSON (or the provider's envelope is not what its API documents).
    case malformedJSON(String)
    /// JSON, but not our schema: a missing field, a wrong type, a value out of range, a box outside the image.
    case schemaViolation(String)
    case cancelled

    /// A stable name for machines (`refinement.kind` in JSON output).
    public var kind: String {
        switch self {
        case .configuration: "configuration"
        case .unauthorized: "unauthorized"
        case .quotaExhausted: "quota_exhausted"
        case .rateLimited: "rate_limited"
        case .badRequest: "bad_request"
        case .server: "server_error"
        case .network: "network"
        case .timedOut: "timed_out"
        case .tooLarge: "too_large"
        case .refused: "refused"
        case .truncated: "truncated"
        case .malformedJSON: "malformed_json"
        case .schemaViolation: "schema_violation"
        case .cancelled: "cancelled"
        }
    }

    /// Terminal errors stop a batch from sending more photos to the same provider (the rest stay unrefined).
    public var isTerminal: Bool {
        switch self {
        case .unauthorized, .quotaExhausted, .configuration, .badRequest: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .configuration(let m): "LLM configuration: \(m)"
        case .unauthorized(let p, let m): "\(p) refused the API key (\(m)); check FOODMOMENT_LLM_API_KEY or the key file"
        case .quotaExhausted(let p, let m): "\(p) quota exhausted (\(m)); add credit or wait for the quota to reset"
        case .rateLimited(let p, let m): "\(p) is rate-limiting us (\(m)); try again later or lower \"concurrency\" in llm.json"
        case .badRequest(_, let p, let m): "\(p) rejected the request (\(m)); check FOODMOMENT_LLM_MODEL and FOODMOMENT_LLM_BASE_URL"
        case .server(_, let p, let m): "\(p) failed (\(m)); try again later"
        case .network(let p, let m): "cannot reach \(p): \(m)"
        case .timedOut(let p, let m): "\(p) did not answer in time: \(m)"
        case .tooLarge(let limit): "the answer was larger than \(limit) bytes; refused"
        case .refused(let m): "the model refused: \(m)"
        case .truncated(let m): "the answer was cut off at the token limit (\(m))"
        case .malformedJSON(let m): "the answer is not valid JSON: \(m)"
        case .schemaViolation(let m): "the answer does not follow the schema: \(m)"
        case .cancelled: "cancelled"
        }
    }
}
