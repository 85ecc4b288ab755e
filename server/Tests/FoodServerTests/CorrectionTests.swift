import FoodServer
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 37's learning from corrections on the server: a meal logged with the photo analyze kept, corrected with
/// `PUT /meals/{id}`, teaches that user's own foods — and no one else's.
@Suite("Corrections teach the user's own foods", .serialized)
struct CorrectionTests {
    static let fixtures = repoRoot + "/Tests/CLITests/Fixtures"

    func analyze(_ server: LiveServer, _ token: String, _ name: String, store: Bool = false) async throws -> LiveServer.Reply {
        let photo = try Data(contentsOf: URL(fileURLWithPath: Self.fixtures + "/" + name))
        let reply = try await server.request("POST", "/api/v1/food/analyze" + (store ? "?store_photo=true" : ""), token: token,
                                             contentType: "image/jpeg", body: photo)
        #expect(reply.status == 200, "\(String(decoding: reply.body, as: UTF8.self))")
        return reply
    }

    func firstFood(_ reply: LiveServer.Reply) -> (label: String, source: String, grams: Double) {
        let food = (reply.json["detected_foods"] as? [[String: Any]])?.first
        return (food?["label"] as? String ?? "", food?["source"] as? String ?? "", food?["grams"] as? Double ?? -1)
    }

    func put(_ server: LiveServer, _ token: String, _ id: String, _ body: String) async throws -> LiveServer.Reply {
        try await server.request("PUT", "/api/v1/meals/\(id)", token: token, contentType: "application/json", body: json(body))
    }

    @Test func aCorrectedMealTeachesItsOwnerOnly() async throws {
        let server = try await LiveServer()
        let alice = try await server.token(for: "alice"), bob = try await server.token(for: "bob")
        let first = try await analyze(server, alice, "garlic-1.jpg", store: true)
        #expect(firstFood(first).label == "dumplings" && first.json["photo_stored"] as? Bool == true)
        let image = try #require(first.json["image_id"] as? String)
        let box = try #require((first.json["detected_foods"] as? [[String: Any]])?.first?["bounding_box"] as? [String: Double])
        let boxJSON = String(decoding: try JSONSerialization.data(withJSONObject: box), as: UTF8.self)
        let body = #"{"image_id": "\#(image)", "foods": [{"food": "dumplings", "grams": 125, "box": \#(boxJSON)}], "time": "2026-12-01T12:30:00Z"}"#
        let created = try await server.request("POST", "/api/v1/meals", token: alice, contentType: "application/json", body: json(body))
        #expect(created.status == 201, "\(String(decoding: created.body, as: UTF8.self))")
        #expect((created.json["photos"] as? [[String: Any]])?.first?["hash"] as? String == image)
        let id = try #require(created.json["id"] as? String)
        // One photo, one meal; a photo never kept, or kept by someone else, is named.
        let again = try await server.request("POST", "/api/v1/meals", token: alice, contentType: "application/json", body: json(body))
        #expect(again.status == 409 && errorCode(again) == "photo_already_logged", "\(again.status)")
        let bobs = try await server.request("POST", "/api/v1/meals", token: bob, contentType: "application/json", body: json(body))
        #expect(bobs.status == 422 && errorCode(bobs) == "unknown_image", "\(bobs.status)")

        #expect(firstFood(try await analyze(server, alice, "garlic-2.jpg")).source == "model")
        let corrected = try await put(server, alice, id, #"{"foods": [{"index": 0, "food": "garlic"}]}"#)
        #expect(corrected.status == 200, "\(String(decoding: corrected.body, as: UTF8.self))")
        #expect(corrected.headers["foodmoment-taught"] == "garlic", "\(corrected.headers)")
        let food = try #require((corrected.json["foods"] as? [[String: Any]])?.first)
        #expect(food["label"] as? String == "garlic" && food["grams"] as? Double == 125 && food["photo_hash"] as? String == image, "\(food)")

        let next = firstFood(try await analyze(server, alice, "garlic-2.jpg"))
        #expect(next.label == "garlic" && next.source == "learned" && next.grams == 125, "\(next)")
        #expect(firstFood(try await analyze(server, bob, "garlic-2.jpg")).source == "model", "bob's photos do not use alice's foods")
        let learning = try await server.request("GET", "/api/v1/user/learning", token: alice)
        #expect(learning.json["from_corrections"] as? Bool == true)
        #expect((learning.json["foods"] as? [[String: Any]])?.first?["label"] as? String == "garlic", "\(learning.json)")
        #expect((try await server.request("GET", "/api/v1/user/learning", token: bob).json["foods"] as? [Any])?.isEmpty == true)

        // Forgetting it: the next photo is the model's again.
        #expect(try await server.request("DELETE", "/api/v1/user/learning/foods/garlic", token: alice).status == 204)
        #expect(try await server.request("DELETE", "/api/v1/user/learning/foods/garlic", token: alice).status == 404)
        #expect(firstFood(try await analyze(server, alice, "garlic-2.jpg")).source == "model")

        // Turned off: a correction only edits the meal.
        let off = try await server.request("PUT", "/api/v1/user/learning", token: alice, contentType: "application/json",
                                           body: json(#"{"from_corrections": false}"#))
        #expect(off.status == 200 && off.json["from_corrections"] as? Bool == false)
        let quiet = try await put(server, alice, id, #"{"foods": [{"index": 0, "food": "onion"}]}"#)
        #expect(quiet.status == 200 && quiet.headers["foodmoment-taught"] == nil)
        #expect((try await server.request("GET", "/api/v1/user/learning", token: alice).json["foods"] as? [Any])?.isEmpty == true)
        await server.stop()
    }

    @Test func aDamagedStoreLeavesTheMealAsItWas() async throws {
        let server = try await LiveServer()
        let alice = try await server.token(for: "alice")
        let first = try await analyze(server, alice, "garlic-1.jpg", store: true)
        let image = try #require(first.json["image_id"] as? String)
        let created = try await server.request("POST", "/api/v1/meals", token: alice, contentType: "application/json",
                                               body: json(#"{"image_id": "\#(image)", "foods": [{"food": "dumplings"}]}"#))
        let id = try #require(created.json["id"] as? String)
        let user = try #require(try await server.request("GET", "/api/v1/user/profile", token: alice).json["user_id"] as? String)
        let store = server.data + "/users/\(user)/learned-foods.json"
        try Data(#"{"dimension": 1280, "prot"#.utf8).write(to: URL(fileURLWithPath: store))

        let refused = try await put(server, alice, id, #"{"foods": [{"index": 0, "food": "garlic"}]}"#)
        #expect(refused.status == 409 && errorCode(refused) == "taught_foods_unreadable", "\(refused.status)")
        let meal = try await server.request("GET", "/api/v1/meals/\(id)", token: alice)
        #expect((meal.json["foods"] as? [[String: Any]])?.first?["label"] as? String == "dumplings", "the diary is untouched")
        #expect(firstFood(try await analyze(server, alice, "garlic-2.jpg")).label != "", "analysis goes on without the taught foods")
        #expect(try await server.request("GET", "/api/v1/user/learning", token: alice).status == 409)
        // The way out the message gives.
        #expect(try await server.request("DELETE", "/api/v1/user/learning/foods", token: alice).status == 204)
        #expect(try await put(server, alice, id, #"{"foods": [{"index": 0, "food": "garlic"}]}"#).headers["foodmoment-taught"] == "garlic")
        await server.stop()
    }
}
