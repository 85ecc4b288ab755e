import CurlTransport
import FoodServer
import Foundation
import Hummingbird
import LLMRefiner
import Logging
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An OpenAI-compatible chat completions endpoint on loopback that answers with `answers` in turn (then the last
/// again), counting the requests it gets.
final class FakeLLM: @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [(status: HTTPResponse.Status, body: String)]
    private(set) var requests = 0
    private var task: Task<Void, any Error>?
    var baseURL = ""

    init(_ answers: [(status: HTTPResponse.Status, body: String)]) async throws {
        self.answers = answers
        let router = Router()
        router.post("v1/chat/completions") { request, _ -> Response in
            var request = request
            _ = try await request.collectBody(upTo: 16 << 20)
            let (status, body) = self.lock.withLock { () -> (HTTPResponse.Status, String) in
                self.requests += 1
                return self.answers.count > 1 ? self.answers.removeFirst() : self.answers[0]
            }
            return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        let (task, port) = await serveOnLoopback(router, label: "fake-llm")
        self.task = task
        baseURL = "http://127.0.0.1:\(port)/v1"
    }

    func stop() async {
        task?.cancel()
        _ = await task?.result
    }

    func client() -> LLMClient {
        LLMClient(provider: OpenAICompatibleProvider(baseURL: baseURL, model: "gpt-test", apiKey: LLMSecret("sk-test")),
                  transport: CurlHTTPTransport(userAgent: "FoodMoment-server-tests"), clock: ContinuousClock(),
                  policy: RetryPolicy(maxAttempts: 1))
    }

    /// A chat completion whose content is plain text.
    static func plain(_ text: String) -> String { completion(text) }

    /// A chat completion whose content is `foods` (the refiner's JSON answer).
    static func completion(_ foods: String) -> String {
        let content = String(decoding: try! JSONSerialization.data(withJSONObject: [foods]), as: UTF8.self).dropFirst().dropLast()
        return #"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":\#(content),"refusal":null},"finish_reason":"stop"}]}"#
    }
}

@Suite("The LLM: refine=true on analyze and the written insights, against an LLM on loopback", .serialized)
struct RefineTests {
    let photo = try! Data(contentsOf: URL(fileURLWithPath: repoRoot + "/samples/banana.jpg"))

    @Test func theLLMChangesIdentityAndGramsAndSaysSo() async throws {
        let answer = #"{"foods":[{"name":"Banana","name_zh":"香蕉","grams":200,"confidence":0.95,"box":{"x":0.1,"y":0.1,"w":0.8,"h":0.8}}]}"#
        let llm = try await FakeLLM([(.ok, FakeLLM.completion(answer))])
        let server = try await LiveServer { $0.llm = llm.client() }
        let token = try await server.token(for: "alice")
        let plain = try await server.request("POST", "/api/v1/food/analyze", token: token, contentType: "image/jpeg", body: photo)
        #expect(plain.status == 200 && plain.json["refinement"] == nil && llm.requests == 0, "off unless asked")
        let refined = try await server.request("POST", "/api/v1/food/analyze?refine=true", token: token, contentType: "image/jpeg", body: photo)
        let info = try #require(refined.json["refinement"] as? [String: Any])
        #expect(refined.status == 200 && info["status"] as? String == "refined" && info["model"] as? String == "gpt-test", "\(info)")
        let food = try #require((refined.json["detected_foods"] as? [[String: Any]])?.first)
        #expect(food["grams"] as? Double == 200 && food["grams_source"] as? String == "llm", "\(food)")
        // Nutrition still comes from the tables: 200 g of banana, not a number the LLM gave.
        let perGram = ((plain.json["detected_foods"] as? [[String: Any]])?.first?["calories"] as? Double ?? 0)
            / ((plain.json["detected_foods"] as? [[String: Any]])?.first?["grams"] as? Double ?? 1)
        #expect(abs((food["calories"] as? Double ?? 0) - perGram * 200) < 1.5)
        #expect(llm.requests == 1)
        await server.stop()
        await llm.stop()
    }

    @Test func aFailingLLMLeavesTheOnDeviceAnswerAndSaysWhy() async throws {
        let llm = try await FakeLLM([(.internalServerError, #"{"error":{"message":"boom"}}"#)])
        let server = try await LiveServer { $0.llm = llm.client() }
        let token = try await server.token(for: "alice")
        let reply = try await server.request("POST", "/api/v1/food/analyze?refine=true", token: token, contentType: "image/jpeg", body: photo)
        let info = try #require(reply.json["refinement"] as? [String: Any])
        #expect(reply.status == 200 && info["status"] as? String == "unrefined" && (info["reason"] as? String)?.isEmpty == false, "\(info)")
        #expect((reply.json["detected_foods"] as? [[String: Any]])?.first?["label"] as? String == "banana")
        await server.stop()
        await llm.stop()
    }

    @Test func refineWithoutAnLLMIsA400() async throws {
        let server = try await LiveServer()
        let token = try await server.token(for: "alice")
        let reply = try await server.request("POST", "/api/v1/food/analyze?refine=true", token: token, contentType: "image/jpeg", body: photo)
        #expect(reply.status == 400 && errorCode(reply) == "refine_unavailable")
        let bad = try await server.request("POST", "/api/v1/food/analyze?refine=maybe", token: token, contentType: "image/jpeg", body: photo)
        #expect(bad.status == 400 && errorCode(bad) == "invalid_refine")
        await server.stop()
    }

    @Test func insightsAreWrittenFromTheirOwnNumbersOrNotAtAll() async throws {
        // One meal of 100 g banana on Monday 16 November 2026 (a whole week): 89 kcal, 4 % of a 2000 kcal goal.
        let honest = "You logged a meal on 1 of 7 days, averaging 89 kcal against your 2000 kcal goal. Keep going!"
        let invented = "You averaged 89 kcal, 4 % of your goal; drink 8 glasses of water a day."
        let llm = try await FakeLLM([(.ok, FakeLLM.plain(honest)), (.ok, FakeLLM.plain(invented)), (.serviceUnavailable, "{}")])
        let server = try await LiveServer { $0.llm = llm.client() }
        let token = try await server.token(for: "alice")
        _ = try await server.request("PUT", "/api/v1/user/goals", token: token, contentType: "application/json", body: json(#"{"daily_kcal": 2000}"#))
        let meal = try await server.request("POST", "/api/v1/meals", token: token, contentType: "application/json",
                                            body: json(#"{"foods": [{"food": "banana", "grams": 100}], "time": "2026-11-16T08:00:00Z"}"#))
        #expect(meal.status == 201)
        func written() async throws -> [String: Any] {
            let reply = try await server.request("GET", "/api/v1/stats/insights?date=2026-11-16", token: token)
            #expect(reply.status == 200 && (reply.json["insights"] as? [Any])?.isEmpty == false, "the rules always answer")
            return try #require(reply.json["written"] as? [String: Any])
        }
        let first = try await written()
        #expect(first["status"] as? String == "written" && first["text"] as? String == honest && first["model"] as? String == "gpt-test", "\(first)")
        let second = try await written()
        #expect(second["status"] as? String == "rejected" && second["text"] == nil, "\(second)")
        #expect((second["reason"] as? String)?.contains("gave 8,") == true, "\(second)")
        let third = try await written()
        #expect(third["status"] as? String == "unavailable" && third["text"] == nil, "\(third)")
        await server.stop()
        await llm.stop()
    }
}
