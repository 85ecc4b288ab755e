import FoodServer
import Foundation
import Metrics
import Prometheus
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// swift-metrics is process-wide: bootstrapped once for every test that reads /metrics.
let testMetrics: PrometheusCollectorRegistry = {
    let registry = PrometheusCollectorRegistry()
    MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
    return registry
}()

@Suite("Editing meals, stats, the user's routes, retries and limits", .serialized)
struct DiaryRouteTests {
    func meal(_ server: LiveServer, _ token: String, _ body: String) async throws -> [String: Any] {
        let reply = try await server.request("POST", "/api/v1/meals", token: token, contentType: "application/json", body: json(body))
        #expect(reply.status == 201, "\(String(decoding: reply.body, as: UTF8.self))")
        return reply.json
    }

    @Test func aMealIsEditedLikeTheCLIEditsIt() async throws {
        let server = try await LiveServer()
        let alice = try await server.token(for: "alice"), bob = try await server.token(for: "bob")
        let created = try await meal(server, alice, #"{"foods": [{"food": "banana", "grams": 120}, {"food": "apple", "grams": 150}], "time": "2026-11-26T08:00:00Z"}"#)
        let id = try #require(created["id"] as? String)
        let kcalBefore = ((created["totals"] as? [String: Any])?["kcal"] as? Double) ?? 0
        // Keep the banana at 60 g, drop the apple, add rice; make it lunch.
        let put = try await server.request("PUT", "/api/v1/meals/\(id)", token: alice, contentType: "application/json",
                                           body: json(#"{"foods": [{"index": 0, "grams": 60}, {"food": "rice", "grams": 150}], "type": "lunch"}"#))
        #expect(put.status == 200, "\(String(decoding: put.body, as: UTF8.self))")
        let foods = try #require(put.json["foods"] as? [[String: Any]])
        #expect(foods.count == 2 && foods[0]["label"] as? String == "banana" && foods[0]["grams"] as? Double == 60)
        #expect(foods[0]["grams_source"] as? String == "user" && put.json["type"] as? String == "lunch")
        let kcalAfter = ((put.json["totals"] as? [String: Any])?["kcal"] as? Double) ?? 0
        let sum = foods.compactMap { ($0["nutrients"] as? [String: Any])?["kcal"] as? Double ?? ($0["kcal"] as? Double) }.reduce(0, +)
        #expect(kcalAfter != kcalBefore && (sum == 0 || abs(sum - kcalAfter) < 0.5), "totals follow the foods")
        // Bob cannot edit it, and it is unchanged by his try.
        let bobs = try await server.request("PUT", "/api/v1/meals/\(id)", token: bob, contentType: "application/json", body: json(#"{"type": "dinner"}"#))
        #expect(bobs.status == 404 && errorCode(bobs) == "not_found")
        #expect(try await server.request("GET", "/api/v1/meals/\(id)", token: alice).json["type"] as? String == "lunch")
        for (body, status, code) in [(#"{}"#, 400, "nothing_to_change"), (#"{"foods": [{"index": 5}]}"#, 422, "invalid_foods"),
                                     (#"{"foods": [{}]}"#, 400, "invalid_foods"),
                                     (#"{"foods": [{"index": 0, "food": "qqqzzz"}]}"#, 422, "unknown_food"),
                                     (#"{"foods": [{"food": "qqqzzz"}]}"#, 422, "unknown_food"), (#"{"type": "brunch"}"#, 400, "invalid_body")] {
            let reply = try await server.request("PUT", "/api/v1/meals/\(id)", token: alice, contentType: "application/json", body: json(body))
            #expect(reply.status == status && errorCode(reply) == code, "\(body): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        }
        await server.stop()
    }

    @Test func statsFollowTheDiaryAndTheProfileTimeZone() async throws {
        let server = try await LiveServer()
        let alice = try await server.token(for: "alice")
        // Monday 23 and Tuesday 24 November 2026, and one meal the week before.
        _ = try await meal(server, alice, #"{"foods": [{"food": "banana", "grams": 100}], "time": "2026-11-23T08:00:00Z"}"#)
        _ = try await meal(server, alice, #"{"foods": [{"food": "rice", "grams": 200}], "time": "2026-11-24T12:00:00Z"}"#)
        _ = try await meal(server, alice, #"{"foods": [{"food": "rice", "grams": 100}], "time": "2026-11-17T12:00:00Z"}"#)
        let week = try await server.request("GET", "/api/v1/stats/weekly?week=2026-W48", token: alice)
        let current = try #require(week.json["current"] as? [String: Any])
        #expect(week.status == 200 && current["start"] as? String == "2026-11-23" && current["end"] as? String == "2026-11-29")
        #expect(current["meals"] as? Int == 2 && current["days_with_data"] as? Int == 2)
        let sameWeek = try await server.request("GET", "/api/v1/stats/weekly?week=2026-11-26", token: alice)
        #expect((sameWeek.json["current"] as? [String: Any])?["meals"] as? Int == 2)
        let month = try await server.request("GET", "/api/v1/stats/monthly?month=2026-11", token: alice)
        #expect((month.json["current"] as? [String: Any])?["meals"] as? Int == 3)
        let day = try await server.request("GET", "/api/v1/stats/daily?date=2026-11-24", token: alice)
        #expect((day.json["current"] as? [String: Any])?["meals"] as? Int == 1)
        // A 23:30 UTC meal is the next day in Shanghai; the profile's time zone decides when tz= is not given.
        _ = try await meal(server, alice, #"{"foods": [{"food": "apple", "grams": 150}], "time": "2026-11-25T23:30:00Z"}"#)
        #expect((try await server.request("GET", "/api/v1/stats/daily?date=2026-11-26", token: alice).json["current"] as? [String: Any])?["meals"] as? Int == 0)
        let profile = try await server.request("PUT", "/api/v1/user/profile", token: alice, contentType: "application/json",
                                               body: json(#"{"time_zone": "Asia/Shanghai", "display_name": "Alice"}"#))
        #expect(profile.status == 200 && profile.json["time_zone"] as? String == "Asia/Shanghai" && profile.json["sign_in"] as? String == "token")
        #expect((try await server.request("GET", "/api/v1/stats/daily?date=2026-11-26", token: alice).json["current"] as? [String: Any])?["meals"] as? Int == 1)
        #expect((try await server.request("GET", "/api/v1/meals?date=2026-11-26", token: alice).json["meals"] as? [Any])?.count == 1)
        // Insights: sentences from the week's numbers and the goals.
        _ = try await server.request("PUT", "/api/v1/user/goals", token: alice, contentType: "application/json", body: json(#"{"daily_kcal": 2000, "protein_g": 90}"#))
        let insights = try await server.request("GET", "/api/v1/stats/insights?date=2026-11-24", token: alice)
        let lines = try #require(insights.json["insights"] as? [[String: Any]]).compactMap { $0["text"] as? String }
        #expect(insights.status == 200 && insights.json["source"] as? String == "rules")
        #expect(lines.contains { $0.contains("2000 kcal goal") } && lines.contains { $0.contains("90 g goal") }, "\(lines)")
        for (path, code) in [("/api/v1/stats/weekly?week=2026-W54", "invalid_week"), ("/api/v1/stats/monthly?month=2026-13", "invalid_month"),
                             ("/api/v1/stats/daily?date=tomorrow", "invalid_date"), ("/api/v1/stats/daily?tz=Nowhere", "invalid_time_zone")] {
            let reply = try await server.request("GET", path, token: alice)
            #expect(reply.status == 400 && errorCode(reply) == code, "\(path): \(String(decoding: reply.body, as: UTF8.self))")
        }
        await server.stop()
    }

    @Test func goalsWeightStreaksAndAchievements() async throws {
        let server = try await LiveServer()
        let alice = try await server.token(for: "alice")
        let goals = try await server.request("PUT", "/api/v1/user/goals", token: alice, contentType: "application/json",
                                             body: json(#"{"daily_kcal": 1800, "water_ml": 2000}"#))
        #expect(goals.status == 200 && goals.json["daily_kcal"] as? Double == 1800 && goals.json["protein_g"] == nil)
        #expect(try await server.request("PUT", "/api/v1/user/goals", token: alice, contentType: "application/json", body: json(#"{"daily_kcal": -5}"#)).status == 400)
        let w1 = try await server.request("POST", "/api/v1/user/weight", token: alice, contentType: "application/json",
                                          body: json(#"{"kilograms": 64.2, "time": "2026-11-20T07:00:00Z"}"#))
        #expect(w1.status == 201 && w1.json["kilograms"] as? Double == 64.2)
        let typo = try await server.request("POST", "/api/v1/user/weight", token: alice, contentType: "application/json",
                                            body: json(#"{"kilograms": 46.2, "time": "2026-11-21T07:00:00Z"}"#))
        #expect(typo.status == 422 && errorCode(typo) == "implausible_weight")
        let forced = try await server.request("POST", "/api/v1/user/weight", token: alice, contentType: "application/json",
                                              body: json(#"{"kilograms": 46.2, "time": "2026-11-21T07:00:00Z", "force": true}"#))
        #expect(forced.status == 201)
        #expect(try await server.request("POST", "/api/v1/user/weight", token: alice, contentType: "application/json", body: json(#"{"kilograms": 900}"#)).status == 400)
        let list = try await server.request("GET", "/api/v1/user/weight?from=2026-11-01&to=2026-11-30", token: alice)
        #expect((list.json["weight"] as? [Any])?.count == 2)
        let now = ISO8601DateFormatter().string(from: Date())
        _ = try await meal(server, alice, #"{"foods": [{"food": "banana", "grams": 100}], "time": "\#(now)"}"#)
        let streaks = try await server.request("GET", "/api/v1/user/streaks", token: alice)
        #expect(streaks.json["current"] as? Int == 1 && streaks.json["logged_today"] as? Bool == true)
        let achievements = try await server.request("GET", "/api/v1/user/achievements", token: alice)
        #expect(((achievements.json["achievements"] as? [[String: Any]])?.count ?? 0) >= 1, "a first meal unlocks one")
        await server.stop()
    }

    @Test func aRetriedPostWithTheSameIdempotencyKeyCreatesNothingTwice() async throws {
        let server = try await LiveServer()
        let alice = try await server.token(for: "alice"), bob = try await server.token(for: "bob")
        let body = json(#"{"foods": [{"food": "banana", "grams": 120}], "time": "2026-11-26T08:00:00Z"}"#)
        let key = ["Idempotency-Key": "meal-\(UUID().uuidString)"]
        let first = try await server.request("POST", "/api/v1/meals", token: alice, contentType: "application/json", body: body, headers: key)
        let retry = try await server.request("POST", "/api/v1/meals", token: alice, contentType: "application/json", body: body, headers: key)
        #expect(first.status == 201 && retry.status == 201 && first.body == retry.body)
        #expect(retry.headers["idempotent-replayed"] == "true" && first.headers["idempotent-replayed"] == nil)
        #expect((try await server.request("GET", "/api/v1/meals?date=2026-11-26", token: alice).json["meals"] as? [Any])?.count == 1)
        // The same key for another request is refused; another user's same key is their own.
        let other = try await server.request("POST", "/api/v1/meals", token: alice, contentType: "application/json",
                                             body: json(#"{"foods": [{"food": "apple"}]}"#), headers: key)
        #expect(other.status == 422 && errorCode(other) == "idempotency_key_reused")
        let bobs = try await server.request("POST", "/api/v1/meals", token: bob, contentType: "application/json", body: body, headers: key)
        #expect(bobs.status == 201 && bobs.json["id"] as? String != first.json["id"] as? String)
        // Water, weight and analyze take keys too; a 4xx answer is replayed as it was.
        let waterKey = ["Idempotency-Key": "w-1"]
        for _ in 0..<3 {
            #expect(try await server.request("POST", "/api/v1/water", token: alice, contentType: "application/json",
                                             body: json(#"{"milliliters": 250, "time": "2026-11-26T09:00:00Z"}"#), headers: waterKey).status == 201)
        }
        #expect(try await server.request("GET", "/api/v1/water?date=2026-11-26", token: alice).json["total_ml"] as? Double == 250)
        let photo = try Data(contentsOf: URL(fileURLWithPath: repoRoot + "/samples/banana.jpg"))
        let a1 = try await server.request("POST", "/api/v1/food/analyze", token: alice, contentType: "image/jpeg", body: photo, headers: ["Idempotency-Key": "a-1"])
        let a2 = try await server.request("POST", "/api/v1/food/analyze", token: alice, contentType: "image/jpeg", body: photo, headers: ["Idempotency-Key": "a-1"])
        #expect(a1.status == 200 && a2.body == a1.body && a2.headers["idempotent-replayed"] == "true")
        let bad = try await server.request("POST", "/api/v1/meals", token: alice, contentType: "application/json", body: json("{}"), headers: ["Idempotency-Key": "bad"])
        let badAgain = try await server.request("POST", "/api/v1/meals", token: alice, contentType: "application/json", body: json("{}"), headers: ["Idempotency-Key": "bad"])
        #expect(bad.status == 400 && badAgain.status == 400 && badAgain.headers["idempotent-replayed"] == "true")
        let tooLong = try await server.request("POST", "/api/v1/meals", token: alice, contentType: "application/json", body: body,
                                               headers: ["Idempotency-Key": String(repeating: "k", count: 300)])
        #expect(tooLong.status == 400 && errorCode(tooLong) == "invalid_idempotency_key")
        await server.stop()
    }

    @Test func analyzeIsRateLimitedPerUserAndTimesOut() async throws {
        let photo = try Data(contentsOf: URL(fileURLWithPath: repoRoot + "/samples/banana.jpg"))
        let server = try await LiveServer { $0.analyzePerMinute = 2 }
        let alice = try await server.token(for: "alice"), bob = try await server.token(for: "bob")
        for _ in 0..<2 {
            #expect(try await server.request("POST", "/api/v1/food/analyze", token: alice, contentType: "image/jpeg", body: photo).status == 200)
        }
        let limited = try await server.request("POST", "/api/v1/food/analyze", token: alice, contentType: "image/jpeg", body: photo)
        #expect(limited.status == 429 && errorCode(limited) == "rate_limited" && Int(limited.headers["retry-after"] ?? "") ?? 0 >= 1)
        #expect(try await server.request("POST", "/api/v1/food/analyze", token: bob, contentType: "image/jpeg", body: photo).status == 200, "Bob has his own bucket")
        await server.stop()

        // A deadline already past when the analyzer is free: answered 503, never analysed.
        let slow = try await LiveServer { $0.analyzeTimeout = 0 }
        let token = try await slow.token(for: "alice")
        let timedOut = try await slow.request("POST", "/api/v1/food/analyze", token: token, contentType: "image/jpeg", body: photo)
        #expect(timedOut.status == 503 && errorCode(timedOut) == "timeout" && timedOut.headers["retry-after"] != nil)
        #expect(try await slow.request("GET", "/healthz").status == 200)
        await slow.stop()
    }

    @Test func metricsCountRequestsPerRouteAndAnalyzeStages() async throws {
        let registry = testMetrics
        let server = try await LiveServer { $0.metrics = registry }
        let alice = try await server.token(for: "alice")
        let photo = try Data(contentsOf: URL(fileURLWithPath: repoRoot + "/samples/banana.jpg"))
        _ = try await server.request("POST", "/api/v1/food/analyze", token: alice, contentType: "image/jpeg", body: photo)
        _ = try await server.request("GET", "/api/v1/meals?date=2026-11-26", token: alice)
        let metrics = try await server.request("GET", "/metrics")
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(metrics.status == 200 && metrics.headers["content-type"]?.hasPrefix("text/plain") == true)
        #expect(text.contains("hb_requests") && text.contains("/api/v1/meals") && text.contains("http_server_request_duration"), "\(text.prefix(2000))")
        #expect(text.contains("foodmoment_analyze_stage") && text.contains("stage=\"decode"), "\(text.prefix(3000))")
        #expect(!text.contains(alice), "no token in the metrics")
        await server.stop()
    }

    @Test func isoWeeks() {
        #expect(ISOWeek.monday(of: "2026-W48")?.description == "2026-11-23")
        #expect(ISOWeek.monday(of: "2026-W01")?.description == "2025-12-29")
        #expect(ISOWeek.monday(of: "2026-W53")?.description == "2026-12-28")
        #expect(ISOWeek.monday(of: "2025-W53") == nil)
        #expect(ISOWeek.monday(of: "2026-48") == nil)
    }
}
