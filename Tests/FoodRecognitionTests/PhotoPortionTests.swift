import FoodCore
import FoodMomentTestSupport
import Foundation
import ImageCodecs
import FoodMoment
import FoodRecognition
import Testing

@Suite("Grams from the photo without a coin")
struct PhotoPortionTests {
    static let committed: PhotoPortionModel? = try? PhotoPortionModel.load(modelsDirectory: TestPaths.repoRoot + "/models")

    @Test func gramsRiseWithTheBoxAreaForOneLabel() throws {
        let model = try #require(Self.committed, "models/food-head/photo-portions.json must load")
        for label in ["pizza", "sushi", "ramen", "apple", "steak"] {
            let grams = stride(from: 0.05, through: 1.0, by: 0.05).map { model.grams(label: label, area: $0, portionGrams: 150) }
            #expect(zip(grams, grams.dropFirst()).allSatisfy { $0 <= $1 }, "\(label): \(grams)")
            #expect(grams.last! > grams[3], "\(label): a photo full of it weighs more than one where it covers a fifth")
        }
    }

    @Test func perLabelPriorsBoundTheGrams() throws {
        let model = try #require(Self.committed)
        // A whole pizza filling the photo is several pieces, never more than a whole large one; a small pizza box is
        // at least a slice.
        let whole = model.grams(label: "pizza", area: 0.9, portionGrams: 119)
        #expect(whole >= 3 * 119 && whole <= 952, "\(whole) g")
        #expect(model.grams(label: "pizza", area: 0.001, portionGrams: 119) == 119)
        // Pieces of sushi count: a platter filling the photo is more than the 6-piece portion.
        #expect(model.grams(label: "sushi", area: 1, portionGrams: 180) > 180)
        #expect(model.grams(label: "sushi", area: 1e-4, portionGrams: 180) == 60)
        #expect(model.grams(label: "ramen", area: 1, portionGrams: 490) <= 735)
        // A label without a prior: its household portion at the default framing, 0.5…2.5× of it at the extremes.
        #expect(model.grams(label: "my_dumplings", area: model.defaultArea, portionGrams: 150) == 150)
        #expect(model.grams(label: "my_dumplings", area: 1e-6, portionGrams: 150) == 75)
    }

    @Test func theExponentComesFromPortionsThatDiffer() {
        // Two labels whose grams follow area^0.6 (with framing noise), one whose portions all weigh the same.
        var rng = SplitMix64(seed: 11)
        var samples: [(label: String, area: Double, grams: Double)] = []
        for label in ["mango", "kiwi"] {
            for i in 0..<60 {
                let area = 0.03 + Double(i % 12) * 0.01
                let noise = 1 + (Double(rng.next() % 1000) / 1000 - 0.5) * 0.1
                samples.append((label, area, 400 * pow(area, 0.6) * noise))
            }
        }
        for i in 0..<60 { samples.append(("lemon", 0.02 + Double(i) * 0.002, 58)) }
        let (exponent, labels) = PhotoPortionModel.fitExponent(samples: samples)
        #expect(abs(exponent - 0.6) < 0.05, "\(exponent)")
        #expect(labels == ["kiwi", "mango"])
    }

    @Test func aBrokenFileIsRefusedWithTheReason() {
        let bad = Data(#"{"exponent": -1, "labels": {}}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(PhotoPortionModel.self, from: bad) }
    }

    @Test func theEstimatorUsesThePhotoOnlyForAFoodAloneWithoutACoin() throws {
        let model = try #require(Self.committed)
        let big = NormalizedBox(x: 0.05, y: 0.05, w: 0.9, h: 0.9), small = NormalizedBox(x: 0.4, y: 0.4, w: 0.2, h: 0.2)
        let (a, sa) = GramsEstimator.estimate(label: "pizza", portionGrams: 119, box: big, multipleFoods: false, reference: nil,
                                              scaleModel: nil, photo: model, imageSize: (320, 240))
        let (b, sb) = GramsEstimator.estimate(label: "pizza", portionGrams: 119, box: small, multipleFoods: false, reference: nil,
                                              scaleModel: nil, photo: model, imageSize: (320, 240))
        #expect(sa == .boxArea && sb == .boxArea && a > b, "\(a) g vs \(b) g")
        // On a shared plate the plate rule still decides (share of a typical 0.2 of the photo).
        let (c, sc) = GramsEstimator.estimate(label: "pizza", portionGrams: 100, box: NormalizedBox(x: 0, y: 0, w: 0.5, h: 0.8),
                                              multipleFoods: true, reference: nil, scaleModel: nil, photo: model, imageSize: (320, 240))
        #expect(sc == .boxArea && c == 200)
    }

    /// The same photo shrunk into a larger plain frame: the food covers less of it, and weighs less.
    @Test func throughTheRecognizerASmallerShareGivesFewerGrams() throws {
        let r = try #require(sharedRecognizer)
        let photo = try decodeSample("banana.jpg")
        var framed = RGBImage(width: photo.width * 2, height: photo.height * 2, fill: (214, 206, 194))
        for y in 0..<photo.height {
            for x in 0..<photo.width {
                let s = (y * photo.width + x) * 3, d = ((y + photo.height / 2) * framed.width + x + photo.width / 2) * 3
                framed.pixels[d] = photo.pixels[s]; framed.pixels[d + 1] = photo.pixels[s + 1]; framed.pixels[d + 2] = photo.pixels[s + 2]
            }
        }
        let near = try #require(try r.recognize(photo).foods.first), far = try #require(try r.recognize(framed).foods.first)
        #expect(near.label == "banana" && far.label == "banana", "\(near.label), \(far.label)")
        #expect(near.gramsSource == .boxArea && far.gramsSource == .boxArea)
        #expect(far.box.area < near.box.area && far.grams < near.grams, "near \(near.grams) g (\(near.box.area)), far \(far.grams) g (\(far.box.area))")
    }
}
