import FoodServer
import Foundation
import Testing

/// The web app's files and the kept photos it shows, over real HTTP (the browser flow is tools/web/browser-test).
@Suite("Web app")
struct WebAppTests {
    @Test func theAppIsServedWithAStrictPolicyAndOnlyItsOwnFiles() async throws {
        let server = try await LiveServer { $0.webDirectory = repoRoot + "/web" }
        defer { Task { await server.stop() } }
        let page = try await server.request("GET", "/")
        #expect(page.status == 200 && String(decoding: page.body, as: UTF8.self).contains(#"<script type="module" src="app.js">"#))
        let csp = page.headers["content-security-policy"] ?? ""
        #expect(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline") && csp.contains("frame-ancestors 'none'"))
        #expect(page.headers["x-content-type-options"] == "nosniff")
        let script = try await server.request("GET", "/app.js")
        #expect(script.status == 200 && script.headers["content-type"]?.hasPrefix("text/javascript") == true)
        let etag = try #require(script.headers["etag"])
        #expect(try await server.request("GET", "/app.js", headers: ["If-None-Match": etag]).status == 304)
        // Only the files found at start: nothing else of the disk, however the path is spelt.
        for path in ["/../Package.swift", "/%2e%2e/Package.swift", "/web/app.js", "/server.log", "/accounts.sqlite"] {
            #expect(try await server.request("GET", path).status == 404, "\(path)")
        }
    }

    @Test func aKeptPhotoIsItsOwnersOnly() async throws {
        let server = try await LiveServer()
        defer { Task { await server.stop() } }
        let alice = try await server.token(for: "alice"), bob = try await server.token(for: "bob")
        let photo = try Data(contentsOf: URL(fileURLWithPath: repoRoot + "/samples/banana.jpg"))
        let analysed = try await server.request("POST", "/api/v1/food/analyze?store_photo=true", token: alice, contentType: "image/jpeg", body: photo)
        let url = try #require(analysed.json["image_url"] as? String)
        #expect(url == "/api/v1/images/" + (analysed.json["image_id"] as? String ?? ""))
        let mine = try await server.request("GET", url, token: alice)
        #expect(mine.status == 200 && mine.body == photo && mine.headers["content-type"] == "image/jpeg")
        #expect(try await server.request("GET", url, token: bob).status == 404)
        #expect(try await server.request("GET", url).status == 401)
        // Not kept: no image_url.
        let plain = try await server.request("POST", "/api/v1/food/analyze", token: bob, contentType: "image/jpeg", body: photo)
        #expect(plain.json["image_url"] == nil)
        // Without a web folder, / is not the app.
        #expect(try await server.request("GET", "/").status == 404)
    }
}
