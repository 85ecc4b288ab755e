import FoodCore
import FoodVision
import Foundation
@testable import FoodTraining
import FoodRecognition
import Testing

@Suite struct HoldOutSplitTests {
    @Test func shotsOfOnePortionAndCropsOfOnePhotoShareAGroup() {
        let samples = [
            TrainingSample(path: "t/apple/apple001S(1).jpg", label: "apple"),
            TrainingSample(path: "t/apple/apple001T(3).jpg", label: "apple"),
            TrainingSample(path: "t/apple/apple002S(1).jpg", label: "apple"),
            TrainingSample(path: "t/apple/train_Apple_12.jpg", label: "apple"),
            TrainingSample(path: "t/apple/train_Apple_13.jpg", label: "apple"),
            TrainingSample(path: "s/plate.jpg", label: "rice_dish", region: NormalizedBox(x: 0, y: 0, w: 0.5, h: 0.5)),
            TrainingSample(path: "s/plate.jpg", label: "curry_dish", region: NormalizedBox(x: 0.5, y: 0.5, w: 0.5, h: 0.5)),
        ]
        let g = TrainingSet.holdOutGroups(samples)
        #expect(g[0] == g[1] && g[0] != g[2])
        #expect(Set([g[2], g[3], g[4]]).count == 3)
        #expect(g[5] == g[6] && g[5] != g[4])
    }

    /// ECUSTFD's `mix` photos show the same physical items as some single portions (`same_items_as_portions`): one id
    /// for all of them, chained (mix003 = apple014 + qiwi006, and a second mix re-using qiwi006), read from the JSON.
    @Test func aMixPortionAndTheSinglePortionsOfItsItemsAreOneItem() throws {
        let lines = [
            #"{"image": "a.jpg", "width": 1, "height": 1, "boxes": [], "portion": "apple014"}"#,
            #"{"image": "b.jpg", "width": 1, "height": 1, "boxes": [], "portion": "mix003", "same_items_as_portions": ["apple014", "qiwi006"]}"#,
            #"{"image": "c.jpg", "width": 1, "height": 1, "boxes": [], "portion": "mix009", "same_items_as_portions": ["qiwi006"]}"#,
            #"{"image": "d.jpg", "width": 1, "height": 1, "boxes": [], "portion": "apple015"}"#,
            #"{"image": "e.jpg", "width": 1, "height": 1, "boxes": []}"#,
        ]
        let records = try lines.map { try JSONDecoder().decode(DetectionRecord.self, from: Data($0.utf8)) }
        #expect(records[1].sameItemsAsPortions == ["apple014", "qiwi006"])
        let items = DetectionRecord.physicalItems(records)
        #expect(items == ["apple014": "apple014", "mix003": "apple014", "qiwi006": "apple014", "mix009": "apple014",
                          "apple015": "apple015"])
    }

    @Test func aHeldOutGroupTakesAllItsPhotosAndNoGroupsMeansPerPhoto() {
        // 40 photos of two labels in groups of four (a portion's shots); 25 % held out.
        let labels = (0..<40).map { $0 < 20 ? 0 : 1 }
        let groups = (0..<40).map { $0 / 4 }
        let held = HoldOutSplit.photos(labels: labels, classes: 2, fraction: 0.25, seed: 3, groups: groups)
        #expect(!held.isEmpty)
        for p in 0..<40 { #expect(held.contains(p) == held.contains(groups[p] * 4), "photo \(p) left its group") }
        // round(5 groups × 0.25) = 1 group per label.
        #expect(held.count == 8)
        // Without groups every photo is its own: round(20 × 0.25) = 5 per label, and the same seed gives the same split.
        let perPhoto = HoldOutSplit.photos(labels: labels, classes: 2, fraction: 0.25, seed: 3)
        #expect(perPhoto.count == 10)
        #expect(perPhoto == HoldOutSplit.photos(labels: labels, classes: 2, fraction: 0.25, seed: 3, groups: Array(0..<40)))
    }
}
