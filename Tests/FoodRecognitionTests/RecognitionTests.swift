import FoodCore
import FoodMomentTestSupport
import FoodVision
import Foundation
import ImageCodecs
import Nutrition
import FoodMoment
import FoodRecognition
import FoodTraining
import Testing

/// One recognizer over the committed models (EfficientNet-Lite0 + the trained food head), shared by the tests.
let sharedDatabase = try? NutritionDatabase.load(directory: URL(fileURLWithPath: TestPaths.repoRoot + "/nutrition-db"))
let sharedDisplays = MealAnalyzer.displays(from: sharedDatabase)
let sharedRecognizer: FoodRecognizer? = {
    let models = TestPaths.repoRoot + "/models"
    let db = sharedDatabase
    return try? FoodRecognizer.load(modelsDirectory: models, userDataDirectory: nil, portions: MealAnalyzer.portions(from: db))
}()

func decodeSample(_ name: String) throws -> RGBImage {
    try ImageDecoder.decodeFile(atPath: TestPaths.repoRoot + "/samples/" + name, options: DecodeOptions(minShortSide: 224)).image
}

@Suite("Stage 1 on the bundled model", .serialized)
struct RecognitionTests {
    @Test func modelLoads() {
        #expect(sharedRecognizer != nil, "models/efficientnet-lite0 and models/food-head must load")
    }

    @Test func bananaIsBanana() throws {
        let r = try #require(sharedRecognizer)
        let rec = try r.recognize(try decodeSample("banana.jpg"))
        #expect(!rec.unknown)
        let first = try #require(rec.foods.first)
        #expect(first.label == "banana")
        // The nutrition join names it (stage 1 gives only the label).
        let shown = MealFood(first, display: try #require(sharedDisplays["banana"]))
        #expect(shown.name == "Banana" && shown.nameZh == "香蕉" && !shown.emoji.isEmpty && shown.color.hasPrefix("#"))
        // No coin: the banana's share of the photo scales its typical amount, within its bounds (0.5…2.5 × 118 g).
        let photoModel = try #require(r.photoPortions)
        #expect(first.gramsSource == .boxArea && first.grams == photoModel.grams(label: "banana", area: first.box.clipped.area, portionGrams: 118))
        #expect(first.grams >= 59 && first.grams <= 295)
        let b = first.box
        #expect(b.x >= 0 && b.y >= 0 && b.w > 0 && b.h > 0 && b.x + b.w <= 1.0001 && b.y + b.h <= 1.0001)
    }

    /// The localisation gate (off in the shipped calibration): a gate that lets a confident single food through gives
    /// exactly the answer of boxes from the whole-photo map, without the localisation pass; a thali (a plate, several
    /// foods) always gets the pass; the evidence it reads is the one `dev eval-gate` scores.
    @Test(.enabled(if: TestPaths.hasSharedData, "needs ../shared/data"))
    func theLocalizationGateSkipsThePassOnlyWhereItsEvidenceAllows() throws {
        let r = try #require(sharedRecognizer)
        #expect(r.calibration.localizationGate == nil && r.calibration.localizationSize > FoodRecognizer.inputSize)
        var open = r.calibration
        open.localizationGate = LocalizationGate(minTopProbability: 0.5, maxCoinProbability: 0.5)
        var wholeMapOnly = r.calibration
        wholeMapOnly.localizationSize = 0
        let gated = r.with(calibration: open), whole = r.with(calibration: wholeMapOnly)
        // A pizza alone (a dev photo; the banana sample counts as a plate for the plate head).
        let pie = try ImageDecoder.decodeFile(atPath: TestPaths.sharedData + "/images/dev/pizza/1795316.jpg",
                                              options: DecodeOptions(minShortSide: 224)).image
        let thali = try decodeSample("thali-2.jpg")
        let evidence = try #require(try r.gateEvidence(pie))
        #expect(evidence.foods == 1 && !evidence.plate && evidence.topProbability >= 0.5 && evidence.coinProbability < 0.5, "\(evidence)")
        let skipped = try gated.recognize(pie)
        #expect(skipped.localizationSkipped == true && skipped.timings[.backboneLocal] == nil)
        let fromWholeMap = try whole.recognize(pie)
        #expect(skipped.foods == fromWholeMap.foods && skipped.top == fromWholeMap.top && skipped.foods.first?.label == "pizza")
        // A gate above the photo's probability runs the pass, and the answer is the ungated one.
        let strict = r.with(calibration: { var c = open; c.localizationGate?.minTopProbability = 1.01; return c }())
        let ran = try strict.recognize(pie), plain = try r.recognize(pie)
        #expect(ran.localizationSkipped == nil && ran.timings[.backboneLocal] != nil && ran.foods == plain.foods)
        // Several foods on a plate: the pass runs, whatever the thresholds.
        let plate = try #require(try r.gateEvidence(thali))
        #expect(!plate.allowsSkipping(LocalizationGate(minTopProbability: 0, maxCoinProbability: 1)), "\(plate)")
        #expect(try gated.recognize(thali).foods == (try r.recognize(thali)).foods)
        // The gate file format: absent = off; present = read back.
        let json = #"{"localisationSize": 448, "localizationGate": {"minTopProbability": 0.8, "maxCoinProbability": 0.02}}"#
        let read = try JSONDecoder().decode(RecognitionCalibration.self, from: Data(json.utf8))
        #expect(read.localizationGate == LocalizationGate(minTopProbability: 0.8, maxCoinProbability: 0.02))
        #expect(try JSONDecoder().decode(RecognitionCalibration.self, from: Data("{}".utf8)).localizationGate == nil)
        // Files written before 0.5.0 spelt the keys the British way; they read the same, and are written the American way.
        let old = #"{"localisationSize": 320, "localiser": "cam", "localisationPassForPlates": true, "embeddingSource": "localisation", "#
            + #""localisationGate": {"minTopProbability": 0.7, "maxCoinProbability": 0.01}}"#
        let legacy = try JSONDecoder().decode(RecognitionCalibration.self, from: Data(old.utf8))
        #expect(legacy.localizationSize == 320 && legacy.localizer == .cam && legacy.localizationPassForPlates
                && legacy.embeddingSource == .localization && legacy.localizationGate?.minTopProbability == 0.7)
        let written = String(decoding: try JSONEncoder().encode(legacy), as: UTF8.self)
        #expect(written.contains("\"localizationSize\":320") && written.contains("\"embeddingSource\":\"localization\"")
                && !written.contains("localis"), "\(written)")
        #expect(try JSONDecoder().decode(RecognitionCalibration.self, from: Data(written.utf8)) == legacy)
    }

    @Test func noiseAndFlatColoursAreNotFood() throws {
        let r = try #require(sharedRecognizer)
        var rng = SplitMix64(seed: 3)
        var noise = RGBImage(width: 256, height: 256)
        for i in noise.pixels.indices { noise.pixels[i] = UInt8(truncatingIfNeeded: rng.next()) }
        #expect(try r.recognize(noise).unknown)
        #expect(try r.recognize(RGBImage(width: 200, height: 150, fill: (40, 90, 200))).unknown)
    }

    @Test func aThaliGivesSeveralFoodsWithBoxes() throws {
        let r = try #require(sharedRecognizer)
        let rec = try r.recognize(try decodeSample("thali-2.jpg"))
        #expect(rec.foods.count >= 2)
        #expect(rec.foods.allSatisfy { $0.gramsSource == .boxArea && $0.grams > 0 })
        // The issue's example: rice, curry and roti come back as foods with their own boxes.
        #expect(Set(rec.foods.map(\.label)).isSuperset(of: ["rice_dish", "curry_dish", "bread_or_roti_naan"]), "\(rec.foods.map(\.label))")
        for (i, a) in rec.foods.enumerated() {
            for b in rec.foods[(i + 1)...] where a.label == b.label {
                #expect(a.box.iou(b.box) <= 0.5, "two \(a.label) boxes overlap: NMS keeps one")
            }
        }
    }

    @Test func thePlateHeadTellsAThaliFromOneFruit() throws {
        let r = try #require(sharedRecognizer)
        let plate = try #require(r.plateHead, "models/food-head/plate-head.json must load")
        func isPlate(_ name: String) throws -> Bool { try plate.isPlate(try r.embed(try decodeSample(name)).embedding) }
        #expect(try isPlate("thali-2.jpg"))
        #expect(try isPlate("thali-rice-curry-roti.jpg"))
        #expect(try isPlate("thali-phone-rotated.jpg"))
        // (A bunch of bananas filling the frame is a borderline case; for fruit the cell detector names, the plate
        // judgement does not change the answer.)
        #expect(try !isPlate("apple.jpg"))
    }

    /// The user's answer follows the whole-photo one: for each Food-101 dish label, the first dev photo (by name)
    /// that the head gets right comes back with that dish as the most confident food — not the rice, curry and tea
    /// its cells resemble. Two of the twenty do not today (a fried rice and a grilled salmon plate the plate head
    /// takes for thalis, docs/recognition.md); before the plate head and the lower single-dish threshold, 16 of
    /// twenty did (baklava, beignets, chicken wings and ramen came back as thali items).
    @Test(.enabled(if: TestPaths.hasSharedData, "needs ../shared/data"))
    func singleDishPhotosComeBackAsTheDish() throws {
        let r = try #require(sharedRecognizer)
        let dishes = ["apple_pie", "baby_back_ribs", "baklava", "beef_carpaccio", "beef_tartare", "beet_salad", "beignets",
                      "bibimbap", "bread_pudding", "breakfast_burrito", "chicken_curry", "chicken_wings", "fried_rice",
                      "grilled_salmon", "hamburger", "ice_cream", "pizza", "ramen", "steak", "sushi"]
        var wrong: [String] = []
        for label in dishes {
            let dir = TestPaths.sharedData + "/images/dev/" + label
            let files = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
            var checked = false
            for file in files {
                let image = try ImageDecoder.decodeFile(atPath: dir + "/" + file, options: DecodeOptions(minShortSide: 224)).image
                let rec = try r.recognize(image)
                guard rec.top.first?.label == label else { continue }
                let shown = rec.foods.max { $0.confidence < $1.confidence }?.label
                if shown != label { wrong.append("\(label)/\(file) → \(rec.foods.map(\.label))") }
                checked = true
                break
            }
            #expect(checked, "no dev photo of \(label) has the head right")
        }
        #expect(wrong.count <= 2, "\(wrong)")
    }

    /// A clear single food the ImageNet classes have no name for (ECUSTFD's litchis) is not "unknown".
    @Test(.enabled(if: TestPaths.hasSharedData, "needs ../shared/data"))
    func confidentLitchisAreNotUnknown() throws {
        let r = try #require(sharedRecognizer)
        let dir = TestPaths.sharedData + "/images/dev/litchi"
        for file in try FileManager.default.contentsOfDirectory(atPath: dir).sorted().prefix(6) {
            let rec = try r.recognize(try ImageDecoder.decodeFile(atPath: dir + "/" + file, options: DecodeOptions(minShortSide: 224)).image)
            #expect(!rec.unknown && rec.foods.first?.label == "litchi", "\(file): \(rec.top.prefix(2)) → \(rec.foods.map(\.label))")
        }
    }

    @Test func aConfidentHeadOverridesALowFoodContext() throws {
        var c = RecognitionCalibration()
        c.unknownThreshold = 0.1; c.foodContextThreshold = 0.1
        #expect(c.rejects(headProbability: 0.95, foodContext: 0.01))
        c.confidentFoodProbability = 0.9
        #expect(!c.rejects(headProbability: 0.95, foodContext: 0.01))
        #expect(c.rejects(headProbability: 0.85, foodContext: 0.01))
        #expect(c.rejects(headProbability: 0.05, foodContext: 0.9))
        let decoded = try JSONDecoder().decode(RecognitionCalibration.self, from: Data(#"{"confidentFoodProbability": 0.9}"#.utf8))
        #expect(decoded.confidentFoodProbability == 0.9)
        #expect(try JSONDecoder().decode(RecognitionCalibration.self, from: Data("{}".utf8)).confidentFoodProbability == nil)
    }

    @Test func orientationDoesNotChangeTheAnswer() throws {
        let r = try #require(sharedRecognizer)
        let upright = try decodeSample("orange.jpg")
        let stored = upright.applying(.left)  // what a phone would store for orientation 6
        let jpeg = try ImageEncoder.png(stored)
        var bytes = jpeg
        // Insert an eXIf chunk with orientation 6 right after IHDR.
        let tiff: [UInt8] = [0x4D, 0x4D, 0, 0x2A, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0]
        var chunk: [UInt8] = [0, 0, 0, UInt8(tiff.count)] + Array("eXIf".utf8) + tiff
        chunk += crc(Array(chunk[4...]))
        bytes.insert(contentsOf: chunk, at: 33)
        let decoded = try ImageDecoder.decode(bytes)
        #expect(decoded.exif.orientation == .right)
        #expect(decoded.image == upright)
        #expect(try r.recognize(decoded.image).foods.first?.label == r.recognize(upright).foods.first?.label)
    }

    func crc(_ data: [UInt8]) -> [UInt8] {
        var c: UInt32 = 0xFFFF_FFFF
        for b in data { c ^= UInt32(b); for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 } }
        c ^= 0xFFFF_FFFF
        return [UInt8(c >> 24), UInt8((c >> 16) & 0xFF), UInt8((c >> 8) & 0xFF), UInt8(c & 0xFF)]
    }
}

@Suite("Training and learning on generated photos")
struct TrainingTests {
    /// Two visually distinct generated "foods" (TestSupport): warm blobs (0) and cool stripes (1).
    static func photo(_ kind: Int, seed: UInt64) -> RGBImage {
        kind == 0 ? GeneratedPhotos.blob(seed: seed) : GeneratedPhotos.stripes(seed: seed)
    }

    @Test func headTrainedOnBackboneEmbeddingsSeparatesGeneratedClasses() throws {
        let r = try #require(sharedRecognizer)
        // The backbone's own embedding (photo + mirror), as `train` and `learn` use it; `embed` gives the fine-tuned
        // food top's embedding, which is specialised to the food labels.
        func embed(_ image: RGBImage) throws -> [Float] {
            let outs = try r.backbone.forward(FoodRecognizer.preprocessWithMirror(image))
            return zip(outs[0].embedding, outs[1].embedding).map { ($0 + $1) / 2 }
        }
        // 16 photos a class: with 8, a head fitted on 12 of them put one held-out stripes photo confidently on the wrong
        // side in one arithmetic (BF16 with fused depthwise multiply-adds) and not in the others — a test of the data's
        // size, not of training.
        var xs: [[Float]] = [], ys: [Int] = []
        for i in 0..<16 {
            for k in 0..<2 { xs.append(try embed(Self.photo(k, seed: UInt64(i * 2 + k)))); ys.append(k) }
        }
        let head = try SoftmaxHead.train(embeddings: xs, labels: ys, classes: ["blob", "stripes"], holdOutFraction: 0.25, maxEpochs: 60)
        for i in 100..<104 {
            #expect(try head.predict(try embed(Self.photo(0, seed: UInt64(i)))).first?.label == "blob")
            #expect(try head.predict(try embed(Self.photo(1, seed: UInt64(i)))).first?.label == "stripes")
        }
    }

    @Test func learnedFoodIsRecognisedLater() throws {
        let base = try #require(sharedRecognizer)
        let recognizer = FoodRecognizer(backbone: base.backbone, head: base.head, calibration: base.calibration, portions: base.portions)
        let examples = try (0..<3).map { try recognizer.embed(Self.photo(1, seed: UInt64(200 + $0))).embedding }
        let matcher = try recognizer.learn(label: "my_stripes", embeddings: examples)
        #expect(matcher.labels == ["my_stripes"])
        let rec = try recognizer.recognize(Self.photo(1, seed: 300))
        #expect(rec.foods.first?.label == "my_stripes")
        #expect(rec.foods.first?.source == .learned)
    }
}

@Suite("Detection scoring and grams")
struct DetectionMathTests {
    @Test func gramsFromPortionAndBox() {
        #expect(GramsEstimator.estimate(portionGrams: 118, box: .whole, multipleFoods: false) == (118, .defaultPortion))
        let (g, src) = GramsEstimator.estimate(portionGrams: 100, box: NormalizedBox(x: 0, y: 0, w: 0.5, h: 0.8), multipleFoods: true)
        #expect(src == .boxArea && g == 200)
        #expect(GramsEstimator.estimate(portionGrams: 100, box: NormalizedBox(x: 0, y: 0, w: 0.1, h: 0.1), multipleFoods: true).0 == 40)
    }

    @Test func heldOutGroupsAreStable() {
        let groups = (0..<300).map { "group-\($0)" }
        let held = groups.filter(DetectionRecord.isHeldOut)
        #expect(held.count > 60 && held.count < 140)
        #expect(held == groups.filter(DetectionRecord.isHeldOut))
    }

    @Test func foodContextMassIsAShareOfTheSoftmax() {
        var logits = [Float](repeating: 0, count: 1000)
        #expect(abs(FoodContext.mass(logits: logits) - Float(FoodContext.imagenetIndices.count) / 1000) < 1e-4)
        logits[954] = 20 // banana
        #expect(FoodContext.mass(logits: logits) > 0.99)
        logits[954] = 0; logits[508] = 20 // computer keyboard
        #expect(FoodContext.mass(logits: logits) < 0.01)
    }
}

@Suite("Average precision")
struct AveragePrecisionTests {
    func box(_ x: Double) -> NormalizedBox { NormalizedBox(x: x, y: 0, w: 0.2, h: 0.2) }

    @Test func handComputedCases() {
        // Two truths in one image; predictions: hit (0.9), miss (0.8), hit (0.7).
        // precision 1, 1/2, 2/3 at recall 1/2, 1/2, 1 -> envelope 1, 2/3, 2/3 -> AP = 0.5*1 + 0.5*2/3.
        let truths = [[box(0), box(0.5)]]
        let preds = [(0, 0.9, box(0)), (0, 0.8, box(0.25)), (0, 0.7, box(0.5))]
        #expect(abs(DetectionEvaluator.averagePrecision(predictions: preds, truths: truths) - (0.5 + 1.0 / 3)) < 1e-9)
        // A duplicate detection of the same truth is a false positive.
        #expect(abs(DetectionEvaluator.averagePrecision(predictions: [(0, 0.9, box(0)), (0, 0.8, box(0))], truths: [[box(0)]]) - 1) < 1e-9)
        #expect(DetectionEvaluator.averagePrecision(predictions: [], truths: [[box(0)]]) == 0)
    }
}

@Suite("Every label of the model maps to a food")
struct LabelMappingTests {
    @Test func headClassesHaveNutritionAndDisplay() throws {
        let r = try #require(sharedRecognizer)
        let db = try NutritionDatabase.load(directory: URL(fileURLWithPath: TestPaths.repoRoot + "/nutrition-db"))
        for label in r.head.classes {
            #expect(db.label(label) != nil, "\(label) has no entry in nutrition-db/labels.json")
            #expect(db.food(forLabel: label) != nil, "\(label) maps to no food in the tables")
        }
    }
}
