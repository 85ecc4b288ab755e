import FoodCore
import FoodMomentTestSupport
import Foundation
import ImageCodecs
import LLMRefiner
import Nutrition
@testable import FoodMoment
import FoodRecognition
import Testing

/// The merge of stage 1 with a validated LLM answer, over the real nutrition tables.
@Suite("Stage-2 merge")
struct RefinementTests {
    static let db = try? NutritionDatabase.load(directory: URL(fileURLWithPath: TestPaths.repoRoot + "/nutrition-db"))

    static func stage1(_ label: String, _ name: String, grams: Double, confidence: Double, box: NormalizedBox, source: FoodOrigin = .model) -> MealFood {
        MealFood(label: label, name: name, nameZh: "", emoji: "🍽️", color: "#888888", confidence: confidence, box: box,
                 grams: grams, gramsSource: .defaultPortion, source: source)
    }

    let left = NormalizedBox(x: 0.05, y: 0.1, w: 0.4, h: 0.5)
    let right = NormalizedBox(x: 0.55, y: 0.1, w: 0.4, h: 0.5)

    @Test func agreeingNameKeepsIdentityAndTakesTheGrams() throws {
        let db = try #require(Self.db)
        let m = PhotoRefiner.merge(stage1: [Self.stage1("banana", "Banana", grams: 118, confidence: 0.8, box: left)],
                                   answer: [LLMFood(name: "Bananas", nameZh: "香蕉", grams: 150, confidence: 0.9, box: left)], nutrition: db)
        let f = try #require(m.foods.first)
        #expect(m.foods.count == 1 && f.label == "banana" && f.source == .model)
        #expect(f.grams == 150 && f.gramsSource == .llm)
        #expect(f.hasNutrition)
        let kcal = f.nutrients.kcal
        #expect(abs(kcal - 89 * 1.5) < 2, "banana is 89 kcal/100 g in SR Legacy")
        #expect(m.disagreements.isEmpty && m.dropped.isEmpty)
    }

    @Test func confidentRenameKeepsBothAnswers() throws {
        let m = PhotoRefiner.merge(stage1: [Self.stage1("fried_rice", "Fried rice", grams: 250, confidence: 0.7, box: left)],
                                   answer: [LLMFood(name: "Apple", nameZh: "苹果", grams: 180, confidence: 0.95, box: left)], nutrition: Self.db)
        let f = try #require(m.foods.first)
        #expect(f.name == "Apple" && f.source == .llm && f.gramsSource == .llm)
        #expect(f.label == "apple" && f.foodId == "sr:171688", "the new name maps to a table food through search")
        #expect(m.disagreements.count == 1 && m.disagreements[0].model.name == "Fried rice" && m.disagreements[0].llm.name == "Apple")
    }

    @Test func addsMissedFoodsAndListsDroppedOnes() throws {
        let m = PhotoRefiner.merge(stage1: [Self.stage1("banana", "Banana", grams: 118, confidence: 0.4, box: left),
                                            Self.stage1("pizza", "Pizza", grams: 300, confidence: 0.3, box: NormalizedBox(x: 0, y: 0.7, w: 0.2, h: 0.2))],
                                   answer: [LLMFood(name: "banana", nameZh: "", grams: 120, confidence: 0.9, box: left),
                                            LLMFood(name: "Apple", nameZh: "苹果", grams: 150, confidence: 0.8, box: right)], nutrition: Self.db)
        #expect(m.foods.map(\.name) == ["Banana", "Apple"])
        #expect(m.foods.map(\.source) == [.model, .llm])
        #expect(m.dropped.map(\.name) == ["Pizza"])
    }

    @Test func boxOverlapPairsDifferentNamesAndGramsDisagreementIsKept() throws {
        let m = PhotoRefiner.merge(stage1: [Self.stage1("banana", "Banana", grams: 118, confidence: 0.3, box: left)],
                                   answer: [LLMFood(name: "Plantain", nameZh: "", grams: 400, confidence: 0.6, box: left)], nutrition: Self.db)
        #expect(m.foods.count == 1 && m.foods[0].name == "Plantain" && m.dropped.isEmpty)
        #expect(m.disagreements.count == 1 && m.disagreements[0].what.contains("118 g vs 400 g"), "a weak stage-1 rename is not a disagreement; 3× grams is")
    }

    @Test func learnedFoodKeepsItsIdentity() throws {
        let m = PhotoRefiner.merge(stage1: [Self.stage1("my_dumplings", "My dumplings", grams: 150, confidence: 0.9, box: left, source: .learned)],
                                   answer: [LLMFood(name: "Dumplings", nameZh: "饺子", grams: 200, confidence: 0.8, box: left)], nutrition: Self.db)
        #expect(m.foods.count == 1 && m.foods[0].label == "my_dumplings" && m.foods[0].source == .learned && m.foods[0].grams == 200)
    }

    @Test func emptyAnswerDropsEverything() {
        let m = PhotoRefiner.merge(stage1: [Self.stage1("banana", "Banana", grams: 118, confidence: 0.8, box: left)], answer: [], nutrition: Self.db)
        #expect(m.foods.isEmpty && m.dropped.count == 1)
    }

    @Test(arguments: [("samples/thali-phone-rotated.jpg", 512), ("samples/thali-phone-rotated.jpg", 1024), ("big", 512), ("big", 1024)])
    func uploadIsUprightDownscaledAndHasNoExif(_ c: (String, Int)) throws {
        var path = TestPaths.repoRoot + "/" + c.0
        if c.0 == "big" {
            let dir = TestPaths.makeTempDirectory("upload")
            path = dir + "/big.jpg"
            let image = RGBImage(width: 1600, height: 1200, pixels: (0..<(1600 * 1200 * 3)).map { UInt8(truncatingIfNeeded: $0 / 7) })
            try Data(try ImageEncoder.jpeg(image)).write(to: URL(fileURLWithPath: path))
        }
        let (_, summary) = try PhotoDecoder().decode(path: path).get()
        var result = PhotoResult(file: path, decode: summary)
        result.foods = [Self.stage1("rice", "Rice", grams: 200, confidence: 0.6, box: left)]
        let client = LLMClient(provider: OllamaProvider(baseURL: "http://127.0.0.1:1", model: "x"), transport: NoNetwork(), clock: ContinuousClock())
        do {
            let side = c.1
            let input = try PhotoRefiner(client: client, nutrition: nil, maxSide: side).upload(result)
            #expect(max(input.width, input.height) == min(side, max(summary.width, summary.height)), "downscaled, never enlarged")
            #expect((input.width > input.height) == (summary.width > summary.height), "upright like the decode")
            #expect(input.jpeg.starts(with: [0xFF, 0xD8]) && !String(decoding: input.jpeg.prefix(4096), as: UTF8.self).contains("Exif"))
            #expect(input.candidates.map(\.name) == ["Rice"])
        }
    }
}

/// A transport that is never reached (the upload test sends nothing).
struct NoNetwork: HTTPTransport {
    func send(_ request: HTTPRequest) async throws(HTTPTransportError) -> HTTPResponse { throw .network("no network in this test") }
}
