import FoodMoment
import FoodMomentTestSupport
import FoodRecognition
import FoodVision
import Foundation
import Nutrition
import Testing

/// The open-set rule: when a single dish is named, what confidence it gets, and what an unsure head answers.
@Suite struct OpenSetTests {
    let rule = OpenSetRule(minDishProbability: 0.25, minKindProbability: 0.55,
                           confidenceCurve: [[0, 0], [0.5, 0.2], [0.9, 0.8], [1, 1]])
    let kinds = ["ramen": "noodle_soup", "pho": "noodle_soup", "caesar_salad": "salad", "greek_salad": "salad"]

    @Test func confidenceIsReadOffTheCurve() {
        #expect(rule.confidence(headProbability: 0) == 0)
        #expect(abs(rule.confidence(headProbability: 0.25) - 0.1) < 1e-6)
        #expect(abs(rule.confidence(headProbability: 0.7) - 0.5) < 1e-6)
        #expect(rule.confidence(headProbability: 1) == 1)
        // Clamped to its ends, and the head's probability itself without a curve.
        let clamped = OpenSetRule(minDishProbability: 0.2, minKindProbability: 0.5, confidenceCurve: [[0.2, 0.1], [0.8, 0.9]])
        #expect(clamped.confidence(headProbability: 0.1) == 0.1 && clamped.confidence(headProbability: 0.95) == 0.9)
        #expect(OpenSetRule(minDishProbability: 0.2, minKindProbability: 0.5).confidence(headProbability: 0.42) == 0.42)
    }

    @Test func anUnsureHeadAnswersTheKindItsBestLabelsShare() throws {
        // Neither noodle soup is likely on its own; together they are.
        let scores = [LabelScore(label: "ramen", probability: 0.22), LabelScore(label: "pho", probability: 0.2),
                      LabelScore(label: "noodle_soup", probability: 0.15), LabelScore(label: "caesar_salad", probability: 0.1)]
        let kind = try #require(rule.kind(for: scores, kinds: kinds))
        #expect(kind.label == "noodle_soup" && abs(kind.probability - 0.57) < 1e-6)
        // Spread over kinds: no kind, so unknown.
        let spread = [LabelScore(label: "ramen", probability: 0.2), LabelScore(label: "caesar_salad", probability: 0.2),
                      LabelScore(label: "steak", probability: 0.2)]
        #expect(rule.kind(for: spread, kinds: kinds) == nil)
        #expect(rule.kind(for: scores, kinds: [:]) == nil)
    }

    /// The shipped calibration names a dish only from its own threshold up, its curve rises, and every kind it may
    /// answer is a label with a nutrition row (labels.json `parent`).
    @Test func theShippedRuleAndKindsAreConsistent() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: TestPaths.repoRoot + "/models/food-head/calibration.json"))
        let calibration = try JSONDecoder().decode(RecognitionCalibration.self, from: data)
        let open = try #require(calibration.openSet, "calibration.json has no openSet")
        #expect(open.minDishProbability > 0 && open.minDishProbability < 0.5)
        let curve = try #require(open.confidenceCurve)
        #expect(zip(curve, curve.dropFirst()).allSatisfy { $0[0] < $1[0] && $0[1] <= $1[1] }, "the curve must rise")
        let db = try NutritionDatabase.load(directory: URL(fileURLWithPath: TestPaths.repoRoot + "/nutrition-db"))
        let table = MealAnalyzer.portions(from: db)
        #expect(table.kinds["ramen"] == "noodle_soup" && table.kinds["caesar_salad"] == "salad")
        for kind in Set(table.kinds.values) {
            #expect(db.food(forLabel: kind) != nil, "kind \(kind) has no nutrition row")
            #expect(table.kinds[kind] == nil, "kind \(kind) has a kind itself")
        }
    }
}
