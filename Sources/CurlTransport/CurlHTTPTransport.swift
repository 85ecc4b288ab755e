internal import CCurlShims
public import FoodCore
import Foundation

/// `HTTPTransport` over libcurl. Each transfer runs on its own thread (never on Swift's cooperative pool,
/// which `curl_easy_perform` would block) and resumes the caller's continuation when done. Cancelling the
/// calling task sets a flag that libcurl's progress callback turns into an abort.
public struct CurlHTTPTransport: HTTPTransport {
    public var userAgent: String

    public init(userAgent: String) {
        self.userAgent = userAgent
    }

    public func send(_ request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse {
        if Task.isCancelled { throw .cancelled }
        let agent = userAgent
        let flag = CancelFlag()
        let result: Result<HTTPResponse, HTTPTransportError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let thread = Thread {
                    continuation.resume(returning: Self.perform(request, userAgent: agent, cancel: flag))
                }
                thread.stackSize = 1 << 20
                thread.start()
            }
        } onCancel: {
            flag.cancel()
        }
        return try result.get()
    }

    /// An `int` libcurl's progress callback polls; owned here so it outlives the transfer thread's use of it.
    final class CancelFlag: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<Int32>
        init() { pointer = .allocate(capacity: 1); pointer.initialize(to: 0) }
        deinit { pointer.deallocate() }
        func cancel() { fm_http_cancel(pointer) }
    }

    static func perform(_ request: HTTPRequest, userAgent: String, cancel: CancelFlag) -> Result<HTTPResponse, HTTPTransportError> {
        func ms(_ d: Duration) -> Int { Int(d.components.seconds) * 1000 + Int(d.components.attoseconds / 1_000_000_000_000_000) }
        var response = fm_http_response()
        let lines = request.headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        let cLines = lines.map { strdup($0) }
        defer { cLines.forEach { free($0) } }
        let body = request.method == .post ? (request.body ?? []) : []
        let status: Int32 = cLines.map { UnsafePointer($0) }.withUnsafeBufferPointer { headers in
            body.withUnsafeBufferPointer { bodyBytes in
                fm_http_perform(request.method.rawValue, request.url, headers.baseAddress, Int32(headers.count),
                                bodyBytes.baseAddress, bodyBytes.count, userAgent,
                                ms(request.connectTimeout), ms(request.totalTimeout), request.maxBodyBytes, cancel.pointer, &response)
            }
        }
        defer { fm_http_response_free(&response) }
        func text<T>(_ tuple: inout T) -> String {
            withUnsafeBytes(of: &tuple) { raw in
                let b = raw.bindMemory(to: UInt8.self)
                return String(decoding: b[0..<(b.firstIndex(of: 0) ?? b.count)], as: UTF8.self)
            }
        }
        if response.cancelled != 0 { return .failure(.cancelled) }
        if response.too_large != 0 { return .failure(.tooLarge(limit: request.maxBodyBytes)) }
        if status != 0 {
            let message = text(&response.error)
            // CURLE_OPERATION_TIMEDOUT = 28
            return .failure(response.curl_code == 28 ? .timedOut(message) : .network(message))
        }
        let bytes = response.length > 0 ? Array(UnsafeBufferPointer(start: response.body, count: response.length)) : []
        var headers: [String: String] = [:]
        if let raw = response.headers, response.headers_length > 0 {
            let all = String(decoding: UnsafeBufferPointer(start: UnsafeRawPointer(raw).assumingMemoryBound(to: UInt8.self),
                                                           count: response.headers_length), as: UTF8.self)
            for line in all.split(separator: "\n") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        let retry = text(&response.retry_after), type = text(&response.content_type)
        return .success(HTTPResponse(status: Int(response.status), body: bytes, retryAfter: retry.isEmpty ? nil : retry,
                                     contentType: type.isEmpty ? nil : type, headers: headers))
    }
}
