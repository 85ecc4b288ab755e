import FoodCore
import FoodVision
import ImageCodecs
import FoodMoment
import FoodRecognition
import Testing

@Suite("One answer per food, and the localisation pass's shape")
struct FoodConsolidationTests {
    typealias Item = FoodConsolidation.Item

    static func box(_ x: Double, _ y: Double, _ w: Double, _ h: Double) -> NormalizedBox { NormalizedBox(x: x, y: y, w: w, h: h) }

    @Test func overlappingRegionsOfOneLabelBecomeOneFoodWithTheUnionBox() throws {
        let items = [
            Item(label: "rice_dish", confidence: 0.84, box: Self.box(0.68, 0.52, 0.21, 0.18)),
            Item(label: "rice_dish", confidence: 0.69, box: Self.box(0.52, 0.30, 0.39, 0.41)),
            Item(label: "rice_dish", confidence: 0.75, box: Self.box(0.59, 0.32, 0.16, 0.11)),
            Item(label: "curry_dish", confidence: 0.83, box: Self.box(0.07, 0.25, 0.48, 0.27)),
        ]
        let out = FoodConsolidation.consolidate(items, photo: [LabelScore(label: "rice_dish", probability: 0.4)])
        #expect(out.count == 2)
        let rice = try #require(out.first { $0.label == "rice_dish" })
        #expect(rice.confidence == 0.84, "the best region's confidence")
        #expect(abs(rice.box.x - 0.52) < 1e-9 && abs(rice.box.y - 0.30) < 1e-9)
        #expect(abs(rice.box.w - 0.39) < 1e-9 && abs(rice.box.h - 0.41) < 1e-9)
        #expect(out.contains { $0.label == "curry_dish" }, "another label overlapping is another food")
    }

    @Test func separateItemsOfOneLabelStaySeparate() {
        let items = [
            Item(label: "apple", confidence: 0.9, box: Self.box(0.05, 0.05, 0.3, 0.3)),
            Item(label: "apple", confidence: 0.8, box: Self.box(0.6, 0.6, 0.3, 0.3)),
        ]
        #expect(FoodConsolidation.consolidate(items, photo: []).count == 2)
    }

    @Test func aLabelThePhotoRulesOutTakesTheDominantLabel() {
        let photo = [LabelScore(label: "apple", probability: 0.97), LabelScore(label: "pear", probability: 0.02),
                     LabelScore(label: "banana", probability: 0.001)]
        let items = [
            Item(label: "banana", confidence: 0.86, box: Self.box(0.0, 0.6, 0.2, 0.2)),
            Item(label: "pear", confidence: 0.7, box: Self.box(0.6, 0.0, 0.2, 0.2)),
        ]
        let out = FoodConsolidation.consolidate(items, photo: photo)
        #expect(out.map(\.label).sorted() == ["apple", "pear"], "banana (0.1 %) is ruled out, pear (2 %) is plausible")
        // Without a dominant photo label nothing is relabelled.
        let unsure = [LabelScore(label: "apple", probability: 0.5), LabelScore(label: "banana", probability: 0.001)]
        #expect(FoodConsolidation.consolidate(items, photo: unsure).map(\.label).sorted() == ["banana", "pear"])
    }

    @Test func specksGoOnlyNextToABiggerFood() {
        let big = Item(label: "curry_dish", confidence: 0.8, box: Self.box(0.1, 0.1, 0.4, 0.4))
        let speck = Item(label: "bread_or_roti_naan", confidence: 0.9, box: Self.box(0.95, 0.43, 0.05, 0.11))
        #expect(FoodConsolidation.consolidate([big, speck], photo: []).map(\.label) == ["curry_dish"])
        let alone = Item(label: "grape", confidence: 0.6, box: Self.box(0.5, 0.5, 0.05, 0.05))
        #expect(FoodConsolidation.consolidate([alone], photo: []).count == 1, "a small food alone is kept")
    }

    @Test func localisationInputKeepsTheAspectOnMultiplesOf32() {
        #expect(LocalizationInput.dimensions(imageWidth: 504, imageHeight: 378, size: 448, keepAspect: true) == (448, 352))
        #expect(LocalizationInput.dimensions(imageWidth: 240, imageHeight: 320, size: 448, keepAspect: true) == (352, 448))
        #expect(LocalizationInput.dimensions(imageWidth: 300, imageHeight: 300, size: 448, keepAspect: true) == (448, 448))
        #expect(LocalizationInput.dimensions(imageWidth: 1000, imageHeight: 100, size: 448, keepAspect: true) == (448, 224),
                "a panorama's short side stays at least 224")
        #expect(LocalizationInput.dimensions(imageWidth: 504, imageHeight: 378, size: 448, keepAspect: false) == (448, 448))
        let image = RGBImage(width: 40, height: 30, pixels: [UInt8](repeating: 127, count: 40 * 30 * 3))
        let t = LocalizationInput.tensor(image, size: 448, keepAspect: true)
        #expect(t.width == 448 && t.height == 352 && t.channels == 3 && t.values.count == 448 * 352 * 3)
        #expect(t.values.allSatisfy { abs($0) < 1e-3 }, "(127 - 127) / 128 everywhere")
    }
}
