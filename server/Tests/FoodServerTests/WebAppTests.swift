import FoodServer
import MealStore
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

    /// The diary's search: English and Chinese, the caller's meals only; a bad query is a 400 that says what to send.
    @Test func pastMealsAreFoundByFoodInEitherLanguage() async throws {
        let server = try await LiveServer()
        defer { Task { await server.stop() } }
        let alice = try await server.token(for: "alice"), bob = try await server.token(for: "bob")
        for (token, body) in [(alice, #"{"foods": [{"food": "rice", "grams": 150}, {"food": "banana"}], "title": "Lunch bowl", "tz": "UTC"}"#),
                              (alice, #"{"foods": [{"food": "apple", "grams": 150}], "tz": "UTC"}"#),
                              (bob, #"{"foods": [{"food": "rice", "grams": 100}], "tz": "UTC"}"#)] {
            #expect(try await server.request("POST", "/api/v1/meals", token: token, contentType: "application/json", body: Data(body.utf8)).status == 201)
        }
        func titles(_ q: String, _ token: String) async throws -> [String] {
            let reply = try await server.request("GET", "/api/v1/meals/search?q=" + q.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, token: token)
            #expect(reply.status == 200)
            return (reply.json["meals"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
        }
        #expect(try await titles("rice", alice) == ["Lunch bowl"], "alice's rice, not bob's")
        #expect(try await titles("米饭", alice) == ["Lunch bowl"], "Chinese finds the meal logged in English")
        #expect(try await titles("BOWL", alice) == ["Lunch bowl"], "the title, any case")
        #expect(try await titles("苹果", alice).count == 1)
        #expect(try await titles("pizza", alice).isEmpty)
        #expect(try await titles("rice", bob).count == 1)
        let empty = try await server.request("GET", "/api/v1/meals/search?q=", token: alice)
        #expect(empty.status == 400 && String(decoding: empty.body, as: UTF8.self).contains("q="))
        #expect(try await server.request("GET", "/api/v1/meals/search?q=rice&limit=0", token: alice).status == 400)
        #expect(try await server.request("GET", "/api/v1/meals/search?q=rice").status == 401)
    }

    /// Export downloads: JSON the CLI imports, CSV one row per food, each the caller's own diary.
    @Test func theDiaryIsExportedAsJSONAndCSV() async throws {
        let server = try await LiveServer()
        defer { Task { await server.stop() } }
        let alice = try await server.token(for: "alice"), bob = try await server.token(for: "bob")
        let body = Data(#"{"foods": [{"food": "rice", "grams": 150}, {"food": "banana", "grams": 100}], "tz": "UTC"}"#.utf8)
        #expect(try await server.request("POST", "/api/v1/meals", token: alice, contentType: "application/json", body: body).status == 201)
        let json = try await server.request("GET", "/api/v1/export?format=json", token: alice)
        #expect(json.status == 200 && json.headers["content-disposition"]?.hasPrefix("attachment; filename=\"foodmoment-") == true)
        let doc = try DiaryExport.decode(json.body)
        #expect(doc.meals.count == 1 && doc.meals[0].foods.map(\.label) == ["rice_dish", "banana"])
        let csv = try await server.request("GET", "/api/v1/export?format=csv", token: alice)
        let lines = String(decoding: csv.body, as: UTF8.self).split(separator: "\n")
        #expect(csv.status == 200 && csv.headers["content-type"]?.hasPrefix("text/csv") == true)
        #expect(lines.count == 3 && lines[0].hasPrefix("meal_id,") && lines[2].contains("banana"))
        let others = try DiaryExport.decode(try await server.request("GET", "/api/v1/export", token: bob).body)
        #expect(others.meals.isEmpty, "bob's export holds none of alice's meals")
        #expect(try await server.request("GET", "/api/v1/export?format=xml", token: alice).status == 400)
    }

    /// "Log meal" keeps what the analysis said: the recogniser's confidence per food and the analysis text.
    @Test func aLoggedAnalysisKeepsItsConfidencesAndText() async throws {
        let server = try await LiveServer()
        defer { Task { await server.stop() } }
        let alice = try await server.token(for: "alice")
        let body = #"{"foods": [{"food": "banana", "grams": 120, "confidence": 0.875}, {"food": "apple"}], "analysis": "One banana on a plate.", "tz": "UTC"}"#
        let made = try await server.request("POST", "/api/v1/meals", token: alice, contentType: "application/json", body: Data(body.utf8))
        let foods = try #require(made.json["foods"] as? [[String: Any]])
        #expect(made.status == 201 && foods[0]["confidence"] as? Double == 0.875 && foods[1]["confidence"] as? Double == 1)
        #expect(made.json["analysis"] as? String == "One banana on a plate.")
        let id = try #require(made.json["id"] as? String)
        #expect(try await server.request("GET", "/api/v1/meals/" + id, token: alice).json["analysis"] as? String == "One banana on a plate.")
        let bad = #"{"foods": [{"food": "banana", "confidence": 2}]}"#
        let refused = try await server.request("POST", "/api/v1/meals", token: alice, contentType: "application/json", body: Data(bad.utf8))
        #expect(refused.status == 400 && String(decoding: refused.body, as: UTF8.self).contains("confidence"))
    }
}
