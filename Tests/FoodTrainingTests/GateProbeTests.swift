import FoodRecognition
import Testing
@testable import FoodTraining

/// `dev eval-gate`'s scoring: which photos a gate lets skip the localisation pass, and what that changes.
@Suite("Localisation gate scoring")
struct GateProbeTests {
    func row(_ set: String, top: Float, plate: Bool = false, coin: Float = 0, foods: Int = 1, labels: [String] = ["apple"],
             wholeMap: [String] = ["apple"], iou: Double? = 0.8, grams: Double? = 1, hasCoin: Bool = false) -> GateProbe.Row {
        GateProbe.Row(path: "\(set)/\(top)", set: set, topProbability: top, plate: plate, coinProbability: coin, wholeMapFoods: foods,
                      labels: labels, unknown: false, wholeMapLabels: wholeMap, wholeMapUnknown: false, boxIoU: iou,
                      gramsRatio: grams, boxArea: 0.5, wholeMapBoxArea: 0.5, coin: hasCoin)
    }

    @Test func everyConditionOfTheGateIsAppliedAndTheChangesCounted() {
        let gate = LocalizationGate(minTopProbability: 0.8, maxCoinProbability: 0.1)
        let rows = [
            row("a", top: 0.9),                                              // skips, same foods
            row("a", top: 0.95, wholeMap: ["pear"], iou: 0.2, grams: 1.5),  // skips, another food
            row("a", top: 0.7),                                              // unsure
            row("a", top: 0.9, plate: true),                                 // a plate
            row("a", top: 0.9, coin: 0.1),                                   // a coin cell at the threshold
            row("a", top: 0.9, foods: 2),                                    // two foods on the map
            row("b", top: 0.99, coin: 0.05, iou: 0.6, grams: 0.9, hasCoin: true),  // skips, and the pass would have found a coin
        ]
        let scores = GateProbe.score(rows, gate: gate)
        #expect(scores.map(\.set) == ["a", "b"])
        let a = scores[0], b = scores[1]
        #expect(a.photos == 6 && a.skipped == 2 && a.sameFoods == 1 && a.coinsLost == 0)
        #expect(a.gramsCompared == 2 && a.gramsWithin20 == 1 && a.medianIoU == 0.8 && a.medianGramsRatio == 1.5)
        #expect(b.photos == 1 && b.skipped == 1 && b.sameFoods == 1 && b.coinsLost == 1 && b.gramsWithin20 == 1)
        // A closed gate skips nothing.
        #expect(GateProbe.score(rows, gate: LocalizationGate(minTopProbability: 1.01, maxCoinProbability: 1)).allSatisfy { $0.skipped == 0 })
    }
}
