import FoodCore
import Foundation
@testable import LLMRefiner

/// A clock whose `sleep` returns at once and records what was asked: retry waits are checked without waiting.
final class RecordingClock: Clock, @unchecked Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by d: Duration) -> Instant { Instant(offset: offset + d) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (a: Instant, b: Instant) -> Bool { a.offset < b.offset }
    }
    private let lock = NSLock()
    private var current = Instant(offset: .zero)
    private var log: [Duration] = []
    var now: Instant { lock.withLock { current } }
    var minimumResolution: Duration { .nanoseconds(1) }
    var sleeps: [Duration] { lock.withLock { log } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        lock.withLock {
            log.append(deadline.offset - current.offset)
            if deadline > current { current = deadline }
        }
    }
}

/// Bodies of the three providers' answers.
enum Wire {
    static let foodsJSON = #"{"foods":[{"name":"Banana","name_zh":"香蕉","grams":120,"confidence":0.9,"box":{"x":0.1,"y":0.2,"w":0.5,"h":0.4}}]}"#

    static func quoted(_ s: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: [s], options: [.withoutEscapingSlashes]), as: UTF8.self).dropFirst().dropLast().description
    }

    static func openAI(content: String = foodsJSON, finish: String = "stop") -> String {
        #"{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":\#(quoted(content)),"refusal":null},"finish_reason":"\#(finish)"}]}"#
    }

    static func openAIRefusal(_ text: String) -> String {
        #"{"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":\#(quoted(text))},"finish_reason":"stop"}]}"#
    }

    static func gemini(text: String = foodsJSON, finish: String = "STOP") -> String {
        #"{"candidates":[{"content":{"role":"model","parts":[{"text":\#(quoted(text))}]},"finishReason":"\#(finish)"}],"modelVersion":"gemini-2.5-flash"}"#
    }

    static func ollama(content: String = foodsJSON, doneReason: String = "stop") -> String {
        #"{"model":"qwen2.5vl","message":{"role":"assistant","content":\#(quoted(content))},"done":true,"done_reason":"\#(doneReason)"}"#
    }

    static let input = LLMInput(jpeg: Array(repeating: 0xAB, count: 300), width: 640, height: 480,
                                candidates: [LLMCandidate(name: "Banana", nameZh: "香蕉", confidence: 0.8,
                                                          box: NormalizedBox(x: 0.1, y: 0.2, w: 0.5, h: 0.4), grams: 118)])
}
