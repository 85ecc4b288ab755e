import Foundation
import Hummingbird

/// Every error the API answers with, in one JSON shape: `{"error": {"code": "…", "message": "…"}}`. 4xx codes are
/// the caller's to fix and the message says how; a 5xx says only that the server failed (details go to the log).
public struct APIError: Error, HTTPResponseError, Sendable, Equatable {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    public var headers: HTTPFields

    public init(_ status: HTTPResponse.Status, code: String, _ message: String, headers: HTTPFields = [:]) {
        self.status = status; self.code = code; self.message = message; self.headers = headers
    }

    public static func badRequest(_ code: String, _ message: String) -> APIError { APIError(.badRequest, code: code, message) }

    public static let unauthorized = APIError(
        .unauthorized, code: "unauthorized",
        "send a token as `Authorization: Bearer TOKEN` (create one with `foodmoment serve token create --user NAME`)",
        headers: [.wwwAuthenticate: "Bearer"])

    public static func notFound(_ message: String) -> APIError { APIError(.notFound, code: "not_found", message) }

    struct Body: Encodable {
        struct Inner: Encodable { var code: String; var message: String }
        var error: Inner
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try JSONResponse.make(Body(error: .init(code: code, message: message)), status: status)
        for field in headers { response.headers.append(field) }
        return response
    }
}

/// JSON bodies: snake_case keys come from each type's CodingKeys, sorted keys keep answers diffable.
enum JSONResponse {
    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok, encoder: JSONEncoder? = nil) throws -> Response {
        let encoder = encoder ?? {
            let e = JSONEncoder()
            e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return e
        }()
        let data = try encoder.encode(value)
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// Turns whatever a handler or the router threw into the API's error shape: our own errors as they are, the
/// framework's (no such route, body too large) with their status and a message that says what to change, anything
/// else as a logged 500 that shows nothing of the cause.
struct ErrorShapeMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return try error.response(from: request, context: context)
        } catch let error as any HTTPResponseError {
            let status = error.status
            let shaped: APIError
            switch status {
            case .notFound:
                shaped = .notFound("no route \(request.method.rawValue) \(request.uri.path); the API lives under /api/v1 (see openapi.yaml)")
            case .methodNotAllowed:
                shaped = APIError(status, code: "method_not_allowed", "\(request.uri.path) does not take \(request.method.rawValue)")
            case .contentTooLarge:
                shaped = APIError(status, code: "body_too_large", "the body is larger than this server accepts (\(context.maxUploadSize) bytes); send a smaller photo")
            default:
                shaped = APIError(status, code: status.code < 500 ? "bad_request" : "server_error",
                                  status.code < 500 ? "the request could not be read (\(status.reasonPhrase))" : "the server failed; try again")
            }
            return try shaped.response(from: request, context: context)
        } catch {
            context.logger.error("unhandled error", metadata: ["path": .string(request.uri.path), "error": .string(String(describing: type(of: error)))])
            return try APIError(.internalServerError, code: "server_error", "the server failed; try again").response(from: request, context: context)
        }
    }
}
