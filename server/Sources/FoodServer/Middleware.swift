import Foundation
import Hummingbird
import ImageCodecs
import HTTPTypes
import Logging
import NIOCore

/// `Idempotency-Key` on a POST: the first request with a key runs; a retry with the same key and the same request gets
/// the first answer again (with `Idempotent-Replayed: true`) and creates nothing; the same key on a different request is
/// a 422; a retry while the first is still running is a 409. Answers the server failed on (5xx) are not kept, so the
/// retry runs. Keys are the caller's (two users may use the same key) and live a day.
struct IdempotencyMiddleware: RouterMiddleware {
    let accounts: any Accounts
    static let header = HTTPField.Name("Idempotency-Key")!
    static let replayed = HTTPField.Name("Idempotent-Replayed")!

    func handle(_ request: Request, context: APIContext, next: (Request, APIContext) async throws -> Response) async throws -> Response {
        guard request.method == .post, let key = request.headers[Self.header] else { return try await next(request, context) }
        guard (1...255).contains(key.utf8.count), key.unicodeScalars.allSatisfy({ $0.value >= 0x21 && $0.value <= 0x7e }) else {
            throw APIError.badRequest("invalid_idempotency_key", "Idempotency-Key must be 1–255 visible ASCII characters (a UUID is a good key)")
        }
        let user = try MealRoutes.user(context)
        var request = request
        let body = try await request.collectBody(upTo: context.maxUploadSize)
        var fingerprinted = Array("\(request.method.rawValue) \(request.uri.path)?\(request.uri.query ?? "")\n\(request.headers[.contentType] ?? "")\n".utf8)
        fingerprinted += body.readableBytesView
        let fingerprint = ContentDigest.sha256Hex(fingerprinted)

        switch try await accounts.beginIdempotent(user, key: key, fingerprint: fingerprint, now: Date()) {
        case .replay(let status, let contentType, let bytes):
            var headers: HTTPFields = [Self.replayed: "true"]
            if let contentType { headers[.contentType] = contentType }
            return Response(status: .init(code: status), headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        case .differentRequest:
            throw APIError(.unprocessableContent, code: "idempotency_key_reused",
                           "this Idempotency-Key was used for a different request: use a new key for a new request")
        case .inProgress:
            throw APIError(.conflict, code: "idempotency_in_progress",
                           "the first request with this Idempotency-Key is still running: retry in a moment", headers: [.retryAfter: "1"])
        case .started:
            break
        }
        let response: Response
        do {
            response = try await next(request, context)
        } catch let error as APIError where error.status.code < 500 {
            response = try error.response(from: request, context: context)
        } catch {
            try? await accounts.finishIdempotent(user, key: key, status: nil, contentType: nil, body: [])
            throw error
        }
        let collector = BodyCollector()
        try await response.body.write(collector)
        let bytes = collector.bytes
        try await accounts.finishIdempotent(user, key: key, status: response.status.code < 500 ? response.status.code : nil,
                                      contentType: response.headers[.contentType], body: bytes)
        return Response(status: response.status, headers: response.headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// Keeps a response's bytes so they can be stored and sent.
    final class BodyCollector: ResponseBodyWriter, @unchecked Sendable {
        var bytes: [UInt8] = []
        func write(_ buffer: ByteBuffer) async throws { bytes += buffer.readableBytesView }
        func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}

/// Photos a user may have analysed per minute (a token bucket per user, in this process: with several instances
/// each counts its own). Over the limit: 429 with `Retry-After` in whole seconds.
actor RateLimiter {
    let perMinute: Int
    private var buckets: [UserID: (tokens: Double, at: ContinuousClock.Instant)] = [:]

    init(perMinute: Int) { self.perMinute = perMinute }

    /// nil when allowed, else the seconds to wait.
    func take(_ user: UserID, now: ContinuousClock.Instant = .now) -> Int? {
        let rate = Double(perMinute) / 60
        var bucket = buckets[user] ?? (Double(perMinute), now)
        let elapsed = now - bucket.at
        bucket.tokens = min(Double(perMinute), bucket.tokens + rate * (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18))
        bucket.at = now
        defer { buckets[user] = bucket }
        if bucket.tokens >= 1 {
            bucket.tokens -= 1
            if buckets.count > 100_000 { buckets = buckets.filter { $0.value.tokens < Double(perMinute) } }
            return nil
        }
        return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up)))
    }
}
