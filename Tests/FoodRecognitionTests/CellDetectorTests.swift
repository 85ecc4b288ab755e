import FoodCore
import FoodVision
import Foundation
import FoodMoment
import FoodRecognition
import FoodTraining
import Testing

@Suite("Per-cell food detector")
struct CellDetectorTests {
    @Test func cellLabelsFromBoxes() {
        // 4×4 grid; a box over the left half (columns 0–1), and one covering a quarter of cell (3, 3).
        let left = NormalizedBox(x: 0, y: 0, w: 0.5, h: 1)
        let corner = NormalizedBox(x: 0.875, y: 0.875, w: 0.125, h: 0.125)
        let t = CellLabeling.targets(boxes: [(1, left), (2, corner)], gridWidth: 4, gridHeight: 4)
        #expect(t[0] == .label(1) && t[1] == .label(1) && t[4 * 3 + 1] == .label(1))
        #expect(t[2] == .background && t[3] == .background)
        #expect(t[15] == .ignore, "a quarter-covered cell is neither food nor background")
        // Coin boxes are not passed as foods: their cells stay background.
        let shifted = CellLabeling.targets(boxes: [(1, NormalizedBox(x: 0.1, y: 0, w: 0.5, h: 0.25))], gridWidth: 4, gridHeight: 4)
        #expect(shifted[0] == .label(1), "60 % covered")
        #expect(shifted[2] == .ignore, "40 % covered")
        // Training may call thinly covered edge cells background instead (`train-cells --background-below`).
        let edges = CellLabeling.targets(boxes: [(1, left), (2, corner)], gridWidth: 4, gridHeight: 4, backgroundBelow: 0.3)
        #expect(edges[15] == .background && edges[0] == .label(1), "a quarter-covered cell is background below 0.3")
        #expect(CellLabeling.targets(boxes: [(2, corner)], gridWidth: 4, gridHeight: 4, backgroundBelow: 0.2)[15] == .ignore)
    }

    @Test func overlappingBoxesGiveTheCellToTheOneCoveringItMost() {
        let big = NormalizedBox(x: 0, y: 0, w: 1, h: 1)
        let small = NormalizedBox(x: 0, y: 0, w: 0.5, h: 0.5)
        let t = CellLabeling.targets(boxes: [(1, big), (2, small)], gridWidth: 2, gridHeight: 2)
        #expect(t == [.label(2), .label(1), .label(1), .label(1)], "equal cover: the smaller, more specific box wins")
    }

    @Test func regionToBox() {
        // 8×4 grid, a region over columns 2…4 of rows 1…2.
        let members = [1 * 8 + 2, 1 * 8 + 3, 2 * 8 + 4, 2 * 8 + 3]
        let box = CellRegions.box(of: members, width: 8, height: 4)
        #expect(box == NormalizedBox(x: 0.25, y: 0.25, w: 0.375, h: 0.5))
        let owner = [0, 0, -1, 1,
                     -1, 0, -1, 1,
                     1, -1, -1, -1]
        let regions = CellRegions.regions(owner: owner, width: 4, height: 3)
        #expect(regions.count == 3)
        #expect(regions.map(\.owner) == [0, 1, 1])
        #expect(regions[0].members.sorted() == [0, 1, 5])
    }

    @Test func nmsKeepsTheBestOfOverlappingSameClassBoxes() {
        let a = CellDetection(classIndex: 1, confidence: 0.9, box: NormalizedBox(x: 0, y: 0, w: 0.5, h: 0.5), size: 10)
        let b = CellDetection(classIndex: 1, confidence: 0.6, box: NormalizedBox(x: 0.05, y: 0, w: 0.5, h: 0.5), size: 8)
        let c = CellDetection(classIndex: 2, confidence: 0.7, box: NormalizedBox(x: 0.05, y: 0.05, w: 0.5, h: 0.5), size: 8)
        let d = CellDetection(classIndex: 1, confidence: 0.5, box: NormalizedBox(x: 0.5, y: 0.5, w: 0.5, h: 0.5), size: 8)
        let kept = CellRegions.nms([b, d, a, c], iou: 0.5)
        #expect(kept == [a, c, d])
        #expect(CellRegions.nms([b, d, a, c], iou: 0.5, crossClassIoU: 0.5) == [a, d], "cross-class suppression")
    }

    @Test func aSyntheticTwoRegionMapGivesTwoBoxes() throws {
        // 3 classes (background, A, B) on an 8×8 grid: A sure on the top-left 3×3 block, B on the bottom-right 2×4.
        let w = 8, h = 8, c = 3
        var p = [Float](repeating: 0, count: w * h * c)
        for y in 0..<h {
            for x in 0..<w {
                let base = (y * w + x) * c
                if x < 3 && y < 3 { p[base + 1] = 0.9; p[base] = 0.1 }
                else if x >= 4 && y >= 6 { p[base + 2] = 0.8; p[base] = 0.2 }
                else { p[base] = 0.95; p[base + 1] = 0.05 }
            }
        }
        let found = CellDetector.detect(probabilities: p, classes: c, width: w, height: h, upsample: 4, thresholds: [0.45],
                                        minCells: 0.5, nmsIoU: 0.5, crossClassIoU: 0.8)
        #expect(found.count == 2)
        let a = try #require(found.first { $0.classIndex == 1 }), b = try #require(found.first { $0.classIndex == 2 })
        #expect(a.box.iou(NormalizedBox(x: 0, y: 0, w: 3.0 / 8, h: 3.0 / 8)) > 0.8)
        #expect(b.box.iou(NormalizedBox(x: 0.5, y: 0.75, w: 0.5, h: 0.25)) > 0.7)
        #expect(a.confidence > 0.8 && b.confidence > 0.6)
        // Nothing above background: no boxes.
        var none = [Float](repeating: 0, count: w * h * c)
        for i in 0..<(w * h) { none[i * c] = 1 }
        #expect(CellDetector.detect(probabilities: none, classes: c, width: w, height: h, upsample: 2, thresholds: [0.4],
                                    minCells: 0.5, nmsIoU: 0.5, crossClassIoU: 0.8).isEmpty)
    }

    /// The whole photo renames the region a person sees first only when it is sure of a label the cells know and
    /// rules the region's own label out; a second food keeps its label, and a same-label box over it goes.
    @Test func theWholePhotoOverrulesTheTopRegionOnlyWhenItRulesItsLabelOut() throws {
        let json = #"{"classes":["background","apple","peach","banana"],"dimension":1,"weights":[0,0,0,0],"bias":[0,0,0,0],"featureMean":[0],"featureScale":[1]}"#
        var model = CellHeadModel(head: try JSONDecoder().decode(SoftmaxHead.self, from: Data(json.utf8)))
        let cells = model.head.classes
        let left = NormalizedBox(x: 0, y: 0, w: 0.5, h: 0.5), right = NormalizedBox(x: 0.5, y: 0.5, w: 0.5, h: 0.5)
        let items: [FoodConsolidation.Item] = [.init(label: "apple", confidence: 0.8, box: left),
                                               .init(label: "banana", confidence: 0.6, box: right)]
        func global(_ pairs: (String, Float)...) -> [LabelScore] { pairs.map { LabelScore(label: $0.0, probability: $0.1) } }
        let peachy = global(("peach", 0.9), ("banana", 0.06), ("apple", 0.02))
        #expect(RegionRules.overrule(items, global: peachy, model: model, cellLabels: cells) == items, "off by default")
        model.overruleProbability = 0.7
        let renamed = RegionRules.overrule(items, global: peachy, model: model, cellLabels: cells)
        #expect(renamed.map(\.label) == ["peach", "banana"], "only the top region is renamed")
        #expect(renamed[0].box == left && renamed[0].confidence == 0.8)
        // Not sure enough, or the region's own label not ruled out, or a label the cells cannot name: unchanged.
        #expect(RegionRules.overrule(items, global: global(("peach", 0.6), ("apple", 0.02)), model: model, cellLabels: cells) == items)
        #expect(RegionRules.overrule(items, global: global(("peach", 0.8), ("apple", 0.1)), model: model, cellLabels: cells) == items)
        #expect(RegionRules.overrule(items, global: global(("pizza", 0.95), ("apple", 0.01)), model: model, cellLabels: cells) == items)
        // A peach box inside the renamed one is the same food.
        let inner = FoodConsolidation.Item(label: "peach", confidence: 0.5, box: NormalizedBox(x: 0.1, y: 0.1, w: 0.2, h: 0.2))
        #expect(RegionRules.overrule(items + [inner], global: peachy, model: model, cellLabels: cells).map(\.label) == ["peach", "banana"])
        // The plate head decides unless the head is sure of a dish the cells cannot name.
        #expect(RegionRules.isPlate(plateHeadSays: true, global: global(("baklava", 0.8)), model: model, cellLabels: cells))
        model.confidentDishProbability = 0.7
        #expect(!RegionRules.isPlate(plateHeadSays: true, global: global(("baklava", 0.8)), model: model, cellLabels: cells))
        #expect(RegionRules.isPlate(plateHeadSays: true, global: global(("baklava", 0.6)), model: model, cellLabels: cells))
        #expect(RegionRules.isPlate(plateHeadSays: true, global: global(("peach", 0.95)), model: model, cellLabels: cells))
        #expect(!RegionRules.isPlate(plateHeadSays: false, global: global(("baklava", 0.1)), model: model, cellLabels: cells))
    }

    @Test func theCellHeadMustStartWithBackground() throws {
        let json = #"{"classes":["apple","background"],"dimension":2,"weights":[0,0,0,0],"bias":[0,0],"featureMean":[0,0],"featureScale":[1,1]}"#
        let head = try JSONDecoder().decode(SoftmaxHead.self, from: Data(json.utf8))
        #expect(throws: (any Error).self) { try CellDetector(model: CellHeadModel(head: head)) }
    }

    /// Real backbone: cells of generated photos (a red square on a grey table) labelled from the square's box train a
    /// head that finds the square in a new photo and says background elsewhere.
    @Test(.timeLimit(.minutes(1))) func trainingOnATinyGeneratedSetSeparatesFoodFromBackground() throws {
        let r = try #require(sharedRecognizer)
        func photo(_ x0: Int, _ y0: Int, _ side: Int) -> (RGBImage, NormalizedBox) {
            var img = RGBImage(width: 224, height: 224, fill: (128, 128, 120))
            for y in y0..<(y0 + side) { for x in x0..<(x0 + side) { img[x, y] = (200, 30, 40) } }
            return (img, NormalizedBox(x: Double(x0) / 224, y: Double(y0) / 224, w: Double(side) / 224, h: Double(side) / 224))
        }
        var xs: [[Float]] = [], ys: [Int] = []
        var rng = SplitMix64(seed: 7)
        for (x0, y0) in [(0, 0), (96, 32), (32, 128), (128, 128)] {
            let (img, box) = photo(x0, y0, 96)
            let map = try #require(try r.backbone.forward(rgb: [img], includeFeatureMap: true).first?.featureMap)
            let targets = CellLabeling.targets(boxes: [(1, box)], gridWidth: map.width, gridHeight: map.height)
            let cells = CellTraining.cells(of: map, targets: targets, maxForeground: 49, maxBackground: 49, rng: &rng)
            xs += cells.features; ys += cells.labels
        }
        #expect(Set(ys) == [0, 1])
        let head = try SoftmaxHead.train(embeddings: xs, labels: ys, classes: ["background", "red_square"], l2: 0.01,
                                         holdOutFraction: 0, maxEpochs: 40, learningRate: 0.01)
        var model = CellHeadModel(head: head)
        model.minProbability = 0.5
        let detector = try CellDetector(model: model)
        let (test, truth) = photo(64, 96, 96)
        let map = try #require(try r.backbone.forward(rgb: [test], includeFeatureMap: true).first?.featureMap)
        let found = detector.detect(probabilities: detector.probabilities(map), width: map.width, height: map.height)
        let best = try #require(found.max { $0.confidence < $1.confidence })
        #expect(best.classIndex == 1)
        // A 7×7 map of a 224 photo: boxes are quantised to 32 px cells, so the box only has to sit on the square.
        #expect(best.box.iou(truth) >= 0.3, "box \(best.box) vs \(truth)")
        let cx = best.box.x + best.box.w / 2, cy = best.box.y + best.box.h / 2
        #expect(cx > truth.x && cx < truth.x + truth.w && cy > truth.y && cy < truth.y + truth.h)
        #expect(found.filter { $0.box.iou(truth) < 0.1 }.isEmpty, "nothing reported on the empty table")
    }
}
