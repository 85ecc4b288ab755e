internal import CCurlShims
public import FoodCore
import Foundation

/// `HTTPTransport` over libcurl. Each transfer runs on its own thread (never on Swift's cooperative pool,
/// which `curl_easy_perform` would block) and resumes the caller's continuation when done.
public struct CurlHTTPTransport: HTTPTransport {
    public var userAgent: String

    public init(userAgent: String) {
        self.userAgent = userAgent
    }

    public func get(_ request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse {
        let agent = userAgent
        let result: Result<HTTPResponse, HTTPTransportError> = await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: Self.perform(request, userAgent: agent))
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        return try result.get()
    }

    static func perform(_ request: HTTPRequest, userAgent: String) -> Result<HTTPResponse, HTTPTransportError> {
        func ms(_ d: Duration) -> Int { Int(d.components.seconds) * 1000 + Int(d.components.attoseconds / 1_000_000_000_000_000) }
        var response = fm_http_response()
        let lines = request.headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        let cLines = lines.map { strdup($0) }
        defer { cLines.forEach { free($0) } }
        let status: Int32 = cLines.map { UnsafePointer($0) }.withUnsafeBufferPointer { headers in
            fm_http_get(request.url, headers.baseAddress, Int32(headers.count), userAgent,
                        ms(request.connectTimeout), ms(request.totalTimeout), request.maxBodyBytes, &response)
        }
        defer { fm_http_response_free(&response) }
        func text<T>(_ tuple: inout T) -> String {
            withUnsafeBytes(of: &tuple) { raw in
                let b = raw.bindMemory(to: UInt8.self)
                return String(decoding: b[0..<(b.firstIndex(of: 0) ?? b.count)], as: UTF8.self)
            }
        }
        if response.too_large != 0 { return .failure(.tooLarge(limit: request.maxBodyBytes)) }
        if status != 0 {
            let message = text(&response.error)
            // CURLE_OPERATION_TIMEDOUT = 28
            return .failure(response.curl_code == 28 ? .timedOut(message) : .network(message))
        }
        let body = response.length > 0 ? Array(UnsafeBufferPointer(start: response.body, count: response.length)) : []
        let retry = text(&response.retry_after), type = text(&response.content_type)
        return .success(HTTPResponse(status: Int(response.status), body: body, retryAfter: retry.isEmpty ? nil : retry,
                                     contentType: type.isEmpty ? nil : type))
    }
}
