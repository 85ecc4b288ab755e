/// The HTTP methods the stages use: GET (Open Food Facts, provider checks) and POST (LLM providers).
public enum HTTPMethod: String, Sendable, Equatable {
    case get = "GET"
    case post = "POST"
}

/// One HTTP request as the stages need it.
public struct HTTPRequest: Sendable, Equatable {
    public var method: HTTPMethod
    public var url: String
    /// `Name: value` pairs. Secrets (API keys) travel only here and are never logged by FoodMoment.
    public var headers: [String: String]
    /// The request body (POST only).
    public var body: [UInt8]?
    public var connectTimeout: Duration
    public var totalTimeout: Duration
    /// Responses larger than this are refused (`HTTPTransportError.tooLarge`).
    public var maxBodyBytes: Int

    public init(method: HTTPMethod = .get, url: String, headers: [String: String] = [:], body: [UInt8]? = nil,
                connectTimeout: Duration = .seconds(5), totalTimeout: Duration = .seconds(20), maxBodyBytes: Int = 4 << 20) {
        self.method = method; self.url = url; self.headers = headers; self.body = body
        self.connectTimeout = connectTimeout; self.totalTimeout = totalTimeout; self.maxBodyBytes = maxBodyBytes
    }
}

public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var body: [UInt8]
    /// `Retry-After` as sent (seconds or an HTTP date), when present.
    public var retryAfter: String?
    public var contentType: String?
    /// Every response header of the final response, names lower-cased (the last value wins when repeated).
    public var headers: [String: String]

    public init(status: Int, body: [UInt8], retryAfter: String? = nil, contentType: String? = nil, headers: [String: String] = [:]) {
        self.status = status; self.body = body; self.retryAfter = retryAfter; self.contentType = contentType
        var h = headers
        if let retryAfter, h["retry-after"] == nil { h["retry-after"] = retryAfter }
        if let contentType, h["content-type"] == nil { h["content-type"] = contentType }
        self.headers = h
    }

    /// A header by case-insensitive name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

public enum HTTPTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No HTTP response: DNS, connection refused or reset, TLS, a refused protocol, a body cut short.
    case network(String)
    case timedOut(String)
    case tooLarge(limit: Int)
    /// The calling task was cancelled; the transfer was aborted.
    case cancelled

    public var description: String {
        switch self {
        case .network(let why): "network error: \(why)"
        case .timedOut(let why): "timed out: \(why)"
        case .tooLarge(let limit): "response larger than \(limit) bytes; refused"
        case .cancelled: "cancelled"
        }
    }
}

/// The seam between stages that talk HTTP and the concrete transport (libcurl in `CurlTransport`), chosen
/// only by executables. Tests use the real transport against a loopback server.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the final response (any status). Task cancellation aborts the transfer.
    func send(_ request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse
}

extension HTTPTransport {
    /// `send` with the method forced to GET and no body.
    public func get(_ request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse {
        var r = request
        r.method = .get
        r.body = nil
        return try await send(r)
    }
}
