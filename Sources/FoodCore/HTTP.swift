/// An HTTP GET as the stages need it (Open Food Facts look-ups; LLM providers later add POST).
public struct HTTPRequest: Sendable, Equatable {
    public var url: String
    /// `Name: value` pairs. Secrets (API keys) travel only here and are never logged by FoodMoment.
    public var headers: [String: String]
    public var connectTimeout: Duration
    public var totalTimeout: Duration
    /// Responses larger than this are refused (`HTTPTransportError.tooLarge`).
    public var maxBodyBytes: Int

    public init(url: String, headers: [String: String] = [:], connectTimeout: Duration = .seconds(5),
                totalTimeout: Duration = .seconds(20), maxBodyBytes: Int = 4 << 20) {
        self.url = url; self.headers = headers; self.connectTimeout = connectTimeout
        self.totalTimeout = totalTimeout; self.maxBodyBytes = maxBodyBytes
    }
}

public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var body: [UInt8]
    /// `Retry-After` as sent (seconds or an HTTP date), when present.
    public var retryAfter: String?
    public var contentType: String?

    public init(status: Int, body: [UInt8], retryAfter: String? = nil, contentType: String? = nil) {
        self.status = status; self.body = body; self.retryAfter = retryAfter; self.contentType = contentType
    }
}

public enum HTTPTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No HTTP response: DNS, connection refused or reset, TLS, timeout, a refused protocol.
    case network(String)
    case timedOut(String)
    case tooLarge(limit: Int)

    public var description: String {
        switch self {
        case .network(let why): "network error: \(why)"
        case .timedOut(let why): "timed out: \(why)"
        case .tooLarge(let limit): "response larger than \(limit) bytes; refused"
        }
    }
}

/// The seam between stages that talk HTTP and the concrete transport (libcurl in `CurlTransport`), chosen
/// only by executables. Tests use the real transport against a loopback server.
public protocol HTTPTransport: Sendable {
    func get(_ request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse
}
