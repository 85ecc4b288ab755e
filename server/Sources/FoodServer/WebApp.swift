import FoodCore
import Foundation
import HTTPTypes
import ImageCodecs
import Hummingbird
import NIOCore

/// The web app (`web/`: plain HTML, CSS and ES modules, no build step) served at `/` of the API's own origin. The files
/// are read once at start (the app is small) and answered with a strict Content-Security-Policy — scripts and styles
/// only from this origin, no inline script, no plug-ins, no framing — and an ETag, so a browser revalidates instead of
/// downloading again. Only the files found at start are served: a path outside that list is a 404, never a file read.
struct WebApp: Sendable {
    struct File: Sendable {
        var bytes: ByteBuffer
        var contentType: String
        var etag: String
    }

    /// `/`-relative path (`index.html`, `app.js`) → file.
    let files: [String: File]

    /// What every page and file of the app is sent with.
    static let securityHeaders: [(HTTPField.Name, String)] = [
        (.contentSecurityPolicy, "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
            + "connect-src 'self'; manifest-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'self'; "
            + "frame-ancestors 'none'"),
        (HTTPField.Name("X-Content-Type-Options")!, "nosniff"),
        (HTTPField.Name("Referrer-Policy")!, "no-referrer"),
        (HTTPField.Name("X-Frame-Options")!, "DENY"),
        (HTTPField.Name("Permissions-Policy")!, "camera=(self), geolocation=(), microphone=()"),
    ]

    static let contentTypes = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml", "webmanifest": "application/manifest+json", "json": "application/json",
        "png": "image/png", "txt": "text/plain; charset=utf-8",
    ]

    /// The files of `directory` whose extension is one the app uses (sub-folders one level deep), or nil when the
    /// folder has no `index.html`.
    init?(directory: String) {
        let fm = FileManager.default
        guard fm.fileExists(atPath: directory + "/index.html") else { return nil }
        var files: [String: File] = [:]
        let names = (fm.enumerator(atPath: directory)?.allObjects as? [String]) ?? []
        for name in names.sorted() where !name.hasPrefix(".") && name.split(separator: "/").count <= 2 {
            let ext = (name as NSString).pathExtension.lowercased()
            guard let type = Self.contentTypes[ext], let data = fm.contents(atPath: directory + "/" + name) else { continue }
            let digest = ContentDigest.sha256Hex([UInt8](data))
            files[name] = File(bytes: ByteBuffer(bytes: data), contentType: type, etag: "\"\(digest.prefix(16))\"")
        }
        self.files = files
    }

    func response(_ path: String, request: Request) -> Response {
        guard let file = files[path] else {
            return Response(status: .notFound, headers: [.contentType: "text/plain; charset=utf-8"],
                            body: .init(byteBuffer: ByteBuffer(string: "Not found")))
        }
        var headers = HTTPFields()
        for (name, value) in Self.securityHeaders { headers[name] = value }
        headers[.eTag] = file.etag
        headers[.cacheControl] = "no-cache"
        if request.headers[.ifNoneMatch] == file.etag {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = file.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: file.bytes))
    }

    /// `GET /` and `GET /<file>` for every file found at start.
    func register(on router: Router<APIContext>) {
        router.get("/") { request, _ in response("index.html", request: request) }
        for path in files.keys.sorted() {
            router.get(RouterPath(path)) { request, _ in response(path, request: request) }
        }
    }
}
