import FoodCore
import FoodMomentTestSupport
import FoodVision
import Foundation
import FoodMoment
import FoodRecognition
import Testing

/// Boxes from the whole-photo pass's own maps (calibration.json `fusedMapBlocks`; off in the shipped file): the
/// fused map, the backbone's extra taps, the load-time check of the heads' width and the pass structure it makes.
@Suite("Fused cell map", .serialized)
struct FusedCellMapTests {
    @Test func theFinestMapSetsTheGridAndCoarserOnesAreSampledAtItsCellCentres() {
        // 4×4 fine map (one channel: the cell's index), 2×2 coarse map with two channels (v, 10·v).
        let fine = FloatImage(width: 4, height: 4, channels: 1, values: (0..<16).map(Float.init))
        let coarse = FloatImage(width: 2, height: 2, channels: 2, values: [1, 10, 2, 20, 3, 30, 4, 40])
        let fused = FusedCellMap.make([fine, coarse])
        #expect(fused.width == 4 && fused.height == 4 && fused.channels == 3)
        func cell(_ x: Int, _ y: Int) -> [Float] { Array(fused.values[((y * 4 + x) * 3)..<((y * 4 + x + 1) * 3)]) }
        // Fine channels are copied as they are.
        #expect((0..<16).allSatisfy { fused.values[$0 * 3] == Float($0) })
        // Corner cells lie outside the coarse centres: clamped to the corner values.
        #expect(cell(0, 0) == [0, 1, 10] && cell(3, 3) == [15, 4, 40])
        // Cell (1, 0): its centre is a quarter of the way from coarse (0, 0) to (1, 0) → 0.75·1 + 0.25·2.
        #expect(cell(1, 0) == [1, 1.25, 12.5])
        // Cell (1, 1): a quarter of the way in both directions → 0.5625·1 + 0.1875·2 + 0.1875·3 + 0.0625·4.
        let c11 = cell(1, 1)
        #expect(c11[0] == 5 && abs(c11[1] - 1.75) < 1e-6 && abs(c11[2] - 17.5) < 1e-5)
        // Three maps: channels append in order; a map on the same grid is copied.
        let three = FusedCellMap.make([fine, fine, coarse])
        #expect(three.channels == 4 && Array(three.values[0..<4]) == [0, 0, 1, 10] && three.values[4 * 5 + 1] == 5)
    }

    @Test func extraTapsAreTheBlocksOutputsAndLeaveThePassAsItWas() throws {
        let r = try #require(sharedRecognizer)
        let input = FoodRecognizer.preprocess(try decodeSample("banana.jpg"))
        let net = r.backbone
        let plain = try #require(try net.forward([input], includeFeatureMap: true).first)
        let tapped = try #require(try net.forward([input], includeFeatureMap: true, includeBlockOutput: true, blockOutputIndex: 15,
                                                  extraBlockOutputIndices: [4, 10]).first)
        #expect(tapped.embedding == plain.embedding && tapped.logits == plain.logits && tapped.featureMap == plain.featureMap)
        #expect(tapped.extraBlockOutputs.map { [$0.width, $0.height, $0.channels] } == [[28, 28, 40], [14, 14, 112]])
        for block in [4, 10] {
            let alone = try #require(try net.forward([input], includeBlockOutput: true, blockOutputIndex: block).first?.blockOutput)
            #expect(tapped.extraBlockOutputs[block == 4 ? 0 : 1] == alone, "block \(block)")
        }
        #expect(throws: FoodVisionError.self) { try net.forward([input], extraBlockOutputIndices: [16]) }
    }

    /// A models folder whose calibration fuses `blocks`, the backbone linked, the heads as `keep` says.
    func models(fusing blocks: [Int], keep: Set<String>, passForPlates: Bool = false) throws -> String {
        let dir = TestPaths.makeTempDirectory("fused")
        let fm = FileManager.default
        try fm.createSymbolicLink(atPath: dir + "/efficientnet-lite0", withDestinationPath: TestPaths.repoRoot + "/models/efficientnet-lite0")
        try fm.createDirectory(atPath: dir + "/food-head", withIntermediateDirectories: true)
        for name in try fm.contentsOfDirectory(atPath: TestPaths.repoRoot + "/models/food-head") where name != "calibration.json" {
            if ["cell-head.json", "coin-head.json", "reference.json"].contains(name) && !keep.contains(name) { continue }
            try fm.copyItem(atPath: TestPaths.repoRoot + "/models/food-head/" + name, toPath: dir + "/food-head/" + name)
        }
        var calibration = try JSONDecoder().decode(RecognitionCalibration.self,
                                                   from: Data(contentsOf: URL(fileURLWithPath: TestPaths.repoRoot + "/models/food-head/calibration.json")))
        calibration.fusedMapBlocks = blocks
        calibration.localisationPassForPlates = passForPlates
        try JSONEncoder().encode(calibration).write(to: URL(fileURLWithPath: dir + "/food-head/calibration.json"))
        return dir
    }

    func loadError(_ dir: String) -> String? {
        do { _ = try FoodRecognizer.load(modelsDirectory: dir, userDataDirectory: nil, portions: PortionTable()); return nil }
        catch { return "\(error)" }
    }

    @Test func headsTrainedOnAnotherMapAreRefusedAtLoadNotAtTheFirstPhoto() throws {
        // The shipped heads read the 448 pass's 1280 channels; fusing block 10 makes 112 + 1280.
        let shipped = try models(fusing: [10], keep: ["cell-head.json", "coin-head.json", "reference.json"])
        defer { try? FileManager.default.removeItem(atPath: shipped) }
        let message = try #require(loadError(shipped))
        #expect(message.contains("cell-head.json reads 1280-channel maps") && message.contains("1392-channel") && message.contains("train-cells"))
        let noCells = try models(fusing: [10], keep: ["coin-head.json", "reference.json"])
        defer { try? FileManager.default.removeItem(atPath: noCells) }
        #expect(loadError(noCells)?.contains("coin-head.json reads 1280-channel maps") == true)
        let unknown = try models(fusing: [99], keep: [])
        defer { try? FileManager.default.removeItem(atPath: unknown) }
        #expect(loadError(unknown)?.contains("block 99") == true)
        let order = try models(fusing: [10, 4], keep: [])
        defer { try? FileManager.default.removeItem(atPath: order) }
        #expect(loadError(order)?.contains("finest first") == true)
        // The pass for plates needs its own cell head, on the pass's map.
        let noPlateHead = try models(fusing: [10], keep: [], passForPlates: true)
        defer { try? FileManager.default.removeItem(atPath: noPlateHead) }
        #expect(loadError(noPlateHead)?.contains("plate-cell-head.json") == true)
        try FileManager.default.copyItem(atPath: TestPaths.repoRoot + "/models/food-head/coin-head.json",
                                         toPath: noPlateHead + "/food-head/plate-cell-head.json")
        #expect(loadError(noPlateHead)?.contains("cannot read") == true, "a coin head is not a cell head")
    }

    /// The shipped cell head widened to read a fused map: zero weights on the fine channels, so it sees only the
    /// upsampled last map (a real fused head is trained by `train-cells`; this one needs no training data).
    func widened(_ model: CellHeadModel, fine: Int) -> CellHeadModel {
        var m = model
        let d = model.head.dimension
        m.head.weights = (0..<model.head.classes.count).flatMap { c in [Float](repeating: 0, count: fine) + model.head.weights[(c * d)..<((c + 1) * d)] }
        m.head.featureMean = [Float](repeating: 0, count: fine) + model.head.featureMean
        m.head.featureScale = [Float](repeating: 1, count: fine) + model.head.featureScale
        m.head.dimension = fine + d
        return m
    }

    @Test func aSharedPlateStillGetsTheLocalisationPassAndOtherPhotosDoNot() throws {
        let dir = try models(fusing: [4, 10], keep: [], passForPlates: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let shipped = try #require(sharedRecognizer)
        let cells = try #require(shipped.cellDetector)
        try JSONEncoder().encode(widened(cells.model, fine: 40 + 112)).write(to: URL(fileURLWithPath: dir + "/food-head/cell-head.json"))
        try FileManager.default.copyItem(atPath: TestPaths.repoRoot + "/models/food-head/cell-head.json", toPath: dir + "/food-head/plate-cell-head.json")
        let r = try FoodRecognizer.load(modelsDirectory: dir, userDataDirectory: nil, portions: shipped.portions)
        #expect(r.plateCellDetector != nil && r.cellDetector?.model.head.dimension == 40 + 112 + 1280)
        // A thali: a plate, so its boxes are the shipped ones (the same pass and head; no coin finder on either side).
        let thali = try decodeSample("thali-rice-curry-roti.jpg")
        let hybrid = try r.recognize(thali)
        let reference = try shipped.with(calibration: shipped.calibration, coinFinder: .some(nil)).recognize(thali)
        #expect(hybrid.timings["backbone_local"] != nil && hybrid.timings["fuse"] != nil)
        #expect(hybrid.foods.map(\.label) == reference.foods.map(\.label) && hybrid.foods.map(\.box) == reference.foods.map(\.box))
        #expect(hybrid.foods.count >= 3)
        // Apples (not a plate; the bunch of bananas in banana.jpg is borderline and the plate head takes it for
        // one): no second pass, the boxes from the fused map.
        let apples = try r.recognize(try decodeSample("apple.jpg"))
        #expect(apples.timings["backbone_local"] == nil && apples.timings["fuse"] != nil, "\(apples.timings.keys.sorted())")
        #expect(apples.foods.first?.label == "apple")
    }

    @Test func withoutALocalisationPassTheMapIsTheFusedOneAndActivationMapsReadTheCoarseOne() throws {
        // No cell or coin head (none trained for this map): boxes come from the food top's activation maps.
        let dir = try models(fusing: [4, 10], keep: [])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try FoodRecognizer.load(modelsDirectory: dir, userDataDirectory: nil, portions: sharedRecognizer?.portions ?? PortionTable())
        let image = try decodeSample("banana.jpg")
        #expect(try r.cellMap(of: image).channels == 40 + 112 + 1280)
        #expect(try r.cellMap(of: image).width == 28)
        let rec = try r.recognize(image)
        #expect(rec.foods.first?.label == "banana")
        #expect(rec.timings["fuse"] != nil && rec.timings["backbone_local"] == nil, "no localisation pass: \(rec.timings.keys.sorted())")
        // The whole-photo answer is the shipped one: the fused map changes boxes, not labels.
        let shipped = try #require(sharedRecognizer).recognize(image)
        #expect(rec.top.map(\.label) == shipped.top.map(\.label))
    }
}
