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
        calibration.localizationPassForPlates = passForPlates
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
        m.head = widened(model.head, fine: fine)
        return m
    }

    /// `head` with `fine` more input channels in front, weighted by `weight(class, channel)` (standardised as is).
    func widened(_ head: SoftmaxHead, fine: Int, weight: (Int, Int) -> Float = { _, _ in 0 }) -> SoftmaxHead {
        var h = head
        let d = head.dimension
        h.weights = (0..<head.classes.count).flatMap { c in (0..<fine).map { weight(c, $0) } + head.weights[(c * d)..<((c + 1) * d)] }
        h.featureMean = [Float](repeating: 0, count: fine) + head.featureMean
        h.featureScale = [Float](repeating: 1, count: fine) + head.featureScale
        h.dimension = fine + d
        return h
    }

    @Test func headsReadAFusedMapPartByPartAsTheyReadTheBuiltOne() throws {
        // Random parts on three grids and the shipped heads widened with random weights on the fine channels.
        var rng = SplitMix64(seed: 7)
        func random() -> Float { Float(rng.next() % 2001) / 1000 - 1 }
        func part(_ w: Int, _ h: Int, _ c: Int) -> FloatImage { FloatImage(width: w, height: h, channels: c, values: (0..<(w * h * c)).map { _ in random() }) }
        let parts = [part(12, 9, 8), part(6, 5, 16), part(3, 3, 1280)]
        let shipped = try #require(sharedRecognizer)
        let cells = try #require(shipped.cellDetector), coin = try #require(shipped.coinFinder)
        var weights: [Float] = (0..<(cells.classes.count * 24)).map { _ in random() }
        var model = cells.model
        model.head = widened(cells.model.head, fine: 24) { c, k in weights[c * 24 + k] }
        let whole = try CellDetector(model: model)
        let split = try whole.splitting(channels: [8, 16, 1280])
        let built = FusedCellMap.make(parts)
        let expected = whole.probabilities(built), got = split.probabilities(.fused(parts))
        #expect(got.count == 12 * 9 * cells.classes.count)
        // The cell head's GEMM runs in this CPU's precision (INT8 or BF16 where it can), which rounds a part's inputs
        // apart from the whole row's: equal to rounding, not to the bit (the coin head below runs in FP32: 1e-5).
        #expect(zip(got, expected).map { abs($0 - $1) }.max()! < 0.01)
        let c = cells.classes.count
        func argmax(_ p: [Float], _ cell: Int) -> Int { (0..<c).max { p[cell * c + $0] < p[cell * c + $1] }! }
        // Random features put many cells near a tie between two classes; a wrong slice or a doubled bias moves all.
        #expect((0..<(12 * 9)).filter { argmax(got, $0) == argmax(expected, $0) }.count >= 12 * 9 * 95 / 100)
        // Without the split (or for parts of other widths) the map is built first: the same numbers.
        #expect(whole.probabilities(.fused(parts)) == expected)
        #expect(throws: FoodVisionError.self) { try whole.splitting(channels: [8, 16]) }
        weights = (0..<(2 * 24)).map { _ in random() }
        let widenedCoin = try CoinFinder(head: widened(coin.head, fine: 24) { c, k in weights[c * 24 + k] }, model: coin.model)
        let coinExpected = widenedCoin.cellProbabilities(built), coinGot = widenedCoin.cellProbabilities(.fused(parts))
        #expect(zip(coinGot, coinExpected).map { abs($0 - $1) }.max()! < 1e-5)
        #expect(Set(coinExpected.map { ($0 * 10).rounded() }).count > 3, "the fine channels move the coin probabilities")
    }

    @Test func aSharedPlateStillGetsTheLocalizationPassAndOtherPhotosDoNot() throws {
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
        #expect(hybrid.timings[.backboneLocal] != nil && hybrid.timings[.fuse] != nil)
        #expect(hybrid.foods.map(\.label) == reference.foods.map(\.label) && hybrid.foods.map(\.box) == reference.foods.map(\.box))
        #expect(hybrid.foods.count >= 3)
        // Apples (not a plate; the bunch of bananas in banana.jpg is borderline and the plate head takes it for
        // one): no second pass, the boxes from the fused map.
        let apples = try r.recognize(try decodeSample("apple.jpg"))
        #expect(apples.timings[.backboneLocal] == nil && apples.timings[.fuse] != nil, "\(apples.timings.milliseconds.keys.map(\.rawValue).sorted())")
        #expect(apples.foods.first?.label == "apple")
    }

    @Test func withoutALocalizationPassTheMapIsTheFusedOneAndActivationMapsReadTheCoarseOne() throws {
        // No cell or coin head (none trained for this map): boxes come from the food top's activation maps.
        let dir = try models(fusing: [4, 10], keep: [])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try FoodRecognizer.load(modelsDirectory: dir, userDataDirectory: nil, portions: sharedRecognizer?.portions ?? PortionTable())
        let image = try decodeSample("banana.jpg")
        #expect(try r.cellMap(of: image).channels == 40 + 112 + 1280)
        #expect(try r.cellMap(of: image).width == 28)
        let rec = try r.recognize(image)
        #expect(rec.foods.first?.label == "banana")
        #expect(rec.timings[.fuse] != nil && rec.timings[.backboneLocal] == nil, "no localisation pass: \(rec.timings.milliseconds.keys.map(\.rawValue).sorted())")
        // The whole-photo answer is the shipped one: the fused map changes boxes, not labels.
        let shipped = try #require(sharedRecognizer).recognize(image)
        #expect(rec.top.map(\.label) == shipped.top.map(\.label))
    }
}
