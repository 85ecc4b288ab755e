import FoodCore
import FoodMomentTestSupport
import Foundation
import ImageCodecs
import FoodMoment
import FoodRecognition
import FoodTraining
import Testing

/// A 320×240 wooden-table photo with a flat grey coin of `diameter` pixels at (cx, cy) and a little seeded noise.
func photoWithCoin(diameter: Double, cx: Double, cy: Double) -> RGBImage {
    var image = RGBImage(width: 320, height: 240, fill: (176, 128, 84))
    var rng = SplitMix64(seed: 7)
    let r = diameter / 2
    for y in 0..<240 {
        for x in 0..<320 {
            let i = (y * 320 + x) * 3
            let d = ((Double(x) + 0.5 - cx) * (Double(x) + 0.5 - cx) + (Double(y) + 0.5 - cy) * (Double(y) + 0.5 - cy)).squareRoot()
            let n = Int(rng.next() % 9) - 4
            if d <= r {
                let v = UInt8(clamping: 190 + n - (d > r - 2 ? 30 : 0))  // a darker rim, like the coin's edge
                image.pixels[i] = v; image.pixels[i + 1] = v; image.pixels[i + 2] = v
            } else {
                image.pixels[i] = UInt8(clamping: 176 + n); image.pixels[i + 1] = UInt8(clamping: 128 + n); image.pixels[i + 2] = UInt8(clamping: 84 + n)
            }
        }
    }
    return image
}

@Suite("Grams from a reference coin", .serialized)
struct GramsReferenceTests {
    @Test(arguments: [(26.0, 100.0, 120.0), (40.0, 230.0, 80.0), (18.0, 60.0, 200.0)])
    func circleFinderMeasuresADrawnCoin(diameter: Double, cx: Double, cy: Double) throws {
        let photo = photoWithCoin(diameter: diameter, cx: cx, cy: cy)
        // The coin head only says which map cell (≈ 20 px here): start the search off-centre, as a cell centre would be.
        let circle = try #require(CircleFinder.find(in: photo, near: (cx + 7, cy - 6), searchRadius: 20, radii: 5...32))
        #expect(abs(2 * circle.r - diameter) <= 2.5, "diameter \(2 * circle.r) px, drawn \(diameter) px")
        #expect(abs(circle.x - cx) <= 2 && abs(circle.y - cy) <= 2, "centre (\(circle.x), \(circle.y)), drawn (\(cx), \(cy))")
        #expect(circle.support >= 0.8)
    }

    @Test func noCircleOnAPlainTable() {
        let table = RGBImage(width: 320, height: 240, fill: (176, 128, 84))
        #expect(CircleFinder.find(in: table, near: (100, 100), searchRadius: 20, radii: 5...32) == nil)
    }

    /// The scale math end to end on the drawn coin: 26 px = 25 mm, so an 80×60 px food box is 80·60·(25/26)² mm².
    @Test func gramsFromTheCoinScale() throws {
        let photo = photoWithCoin(diameter: 26, cx: 100, cy: 120)
        let circle = try #require(CircleFinder.find(in: photo, near: (104, 116), searchRadius: 20, radii: 5...32))
        let d = 2 * circle.r
        let coin = ReferenceObject(kind: "coin", box: NormalizedBox(x: 0, y: 0, w: d / 320, h: d / 240), diameterPixels: d,
                                   millimetresPerPixel: 25 / d, confidence: 1, edgeSupport: circle.support)
        var model = ReferenceModel()
        model.k = ["apple": 2]
        model.exponent = 1.5
        let box = NormalizedBox(x: 0.5, y: 0.5, w: 80.0 / 320, h: 60.0 / 240)
        let (grams, source) = GramsEstimator.estimate(label: "apple", portionGrams: 200, box: box, multipleFoods: false,
                                                      reference: coin, scaleModel: model, imageSize: (320, 240))
        let areaCm2 = 80.0 * 60 * (25.0 / 26) * (25.0 / 26) / 100  // 44.4 cm²
        #expect(source == .referenceObject)
        #expect(abs(grams - 2 * pow(areaCm2, 1.5)) / (2 * pow(areaCm2, 1.5)) < 0.15, "\(grams) g")
        // The portion guard: a scale that makes a 200 g portion 20× heavier is clamped to maxFactor × portion.
        let huge = ReferenceObject(kind: "coin", box: coin.box, diameterPixels: 2, millimetresPerPixel: 12.5, confidence: 1, edgeSupport: 1)
        let (clamped, _) = GramsEstimator.estimate(label: "apple", portionGrams: 200, box: box, multipleFoods: false,
                                                   reference: huge, scaleModel: model, imageSize: (320, 240))
        #expect(clamped == 200 * model.maxFactor)
        // No coin: the household portion, as before.
        let (plain, plainSource) = GramsEstimator.estimate(label: "apple", portionGrams: 200, box: box, multipleFoods: false,
                                                           reference: nil, scaleModel: model, imageSize: (320, 240))
        #expect(plain == 200 && plainSource == .defaultPortion)
        // A label without data keeps its portion while the fitted exponent is 0 (the fallback would be one constant
        // weight for every food), and uses fallback_k once the area carries information.
        model.exponent = 0
        let (steak, steakSource) = GramsEstimator.estimate(label: "steak", portionGrams: 170, box: box, multipleFoods: false,
                                                           reference: coin, scaleModel: model, imageSize: (320, 240))
        #expect(steak == 170 && steakSource == .defaultPortion)
        model.exponent = 1
        model.fallbackK = 4
        let (sized, sizedSource) = GramsEstimator.estimate(label: "steak", portionGrams: 170, box: box, multipleFoods: false,
                                                           reference: coin, scaleModel: model, imageSize: (320, 240))
        #expect(sizedSource == .referenceObject && abs(sized - 4 * areaCm2) / (4 * areaCm2) < 0.15, "\(sized) g")
    }

    @Test func densityFitRecoversKAndExponent() {
        let samples = stride(from: 10.0, through: 60, by: 5).map { (label: "mango", areaCm2: $0, grams: 3 * pow($0, 1.5)) }
        let (model, trial) = ReferenceModel.fit(samples: samples, exponents: [0, 1, 1.5])
        #expect(model.exponent == 1.5 && abs(model.k["mango"]! - 3) < 1e-3)
        #expect(trial.count == 3 && trial.last!.maePercent < 0.1)
        let (perLabel, _) = ReferenceModel.fit(samples: samples, exponents: [0], perLabelMinCount: 5)
        #expect(abs(perLabel.exponents["mango"]! - 1.5) < 1e-3, "the per-label slope finds 1.5 when one exponent for all is 0")
    }

    /// Six portions of one food, three photos each: a portion's photos weigh the same, their box areas vary. In sample,
    /// a slope for the label follows these 18 boxes' noise and wins; judged on portions it was not fitted on, one weight
    /// for the label does better, and that is what the fit chooses when it knows the portions. The expected errors come
    /// from a separate Python implementation of the same folds (FNV-1a of the portion, modulo 5).
    @Test func theExponentIsChosenOnPortionsItWasNotFittedOn() {
        var rng = SplitMix64(seed: 212)
        func uniform() -> Double { Double(rng.next() >> 11) / Double(UInt64(1) << 53) }
        var samples: [(label: String, areaCm2: Double, grams: Double)] = [], portions: [String] = []
        for p in 0..<6 {
            let grams = 100 * exp(0.4 * (uniform() - 0.5))
            for _ in 0..<3 {
                samples.append((label: "x", areaCm2: 30 * exp(0.6 * (uniform() - 0.5)), grams: grams))
                portions.append(String(format: "x%03d", p))
            }
        }
        let (inSample, inSampleTrial) = ReferenceModel.fit(samples: samples, exponents: [0], perLabelMinCount: 5)
        #expect(inSampleTrial.map(\.maePercent) == [9.5, 8.7])
        #expect(inSample.exponents["x"] != nil, "in sample, the slope wins")
        let (heldOut, heldOutTrial) = ReferenceModel.fit(samples: samples, exponents: [0], perLabelMinCount: 5, groups: portions, folds: 5)
        #expect(heldOutTrial.map(\.exponent) == [0, -1])
        #expect(heldOutTrial.map(\.maePercent) == [11.5, 13.2])
        #expect(heldOut.exponents.isEmpty && heldOut.exponent == 0, "on held-out portions one weight wins")
        // The chosen candidate is then fitted on every sample: k is the geometric mean of all 18 weights.
        let geometricMean = exp(samples.map { log($0.grams) }.reduce(0, +) / 18)
        #expect(abs(heldOut.k["x"]! - geometricMean) < 1e-4)
    }

    @Test func theBundledCoinFinderLoads() throws {
        let r = try #require(sharedRecognizer)
        #expect(r.coinFinder != nil, "models/food-head/coin-head.json and reference.json must load")
    }

    /// ECUSTFD dev photos (shared data): the coin is found and sets the grams, and no food lies on the coin.
    @Test func aCoinInAnECUSTFDPhotoIsUsedAndNeverAFood() throws {
        guard TestPaths.hasSharedData else { return }
        let r = try #require(sharedRecognizer)
        let records = try DetectionRecord.load(jsonl: TestPaths.sharedData + "/detection/ecustfd.jsonl")
            .filter { $0.split == "dev" && ($0.coins?.count ?? 0) == 1 }
        let picked = stride(from: 0, to: records.count, by: max(1, records.count / 12)).map { records[$0] }
        var withReference = 0
        for record in picked {
            let image = try ImageDecoder.decodeFile(atPath: record.image, options: DecodeOptions(minShortSide: 224)).image
            let rec = try r.recognize(image)
            let truth = try #require(record.coins?.first)
            let coinBox = NormalizedBox(x: truth.x, y: truth.y, w: truth.w, h: truth.h)
            for food in rec.foods {
                let overlap = food.box.iou(coinBox) * (food.box.area + coinBox.area) / (1 + food.box.iou(coinBox))
                #expect(overlap < 0.5 * food.box.area, "\(record.image): \(food.label) box lies on the coin")
            }
            if let found = rec.reference {
                withReference += 1
                let known = try #require(r.coinFinder).model.k
                #expect(rec.foods.filter { known[$0.label] != nil }.allSatisfy { $0.gramsSource == .referenceObject }, "\(record.image)")
                #expect(found.millimetresPerPixel > 0 && found.kind == "coin")
            } else {
                #expect(rec.foods.allSatisfy { $0.gramsSource != .referenceObject })
            }
        }
        #expect(withReference >= picked.count * 2 / 3, "coin found in \(withReference) of \(picked.count) dev photos")
    }

    @Test(arguments: ["banana.jpg", "orange.jpg", "thali-2.jpg"])
    func noCoinNoReferenceObject(sample: String) throws {
        let r = try #require(sharedRecognizer)
        let rec = try r.recognize(try decodeSample(sample))
        #expect(rec.reference == nil)
        #expect(!rec.foods.isEmpty && rec.foods.allSatisfy { $0.gramsSource != .referenceObject })
    }

    @Test func plainPhotosWithoutACoinGetNone() throws {
        let r = try #require(sharedRecognizer)
        #expect(try r.recognize(RGBImage(width: 320, height: 240, fill: (176, 128, 84))).reference == nil)
        #expect(try r.recognize(photoWithCoin(diameter: 0, cx: 0, cy: 0)).foods.allSatisfy { $0.gramsSource != .referenceObject })
    }
}
