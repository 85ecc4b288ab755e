public import FoodCore
public import FoodVision

/// Turns the cell detector's ranked regions into the answer a person expects: one entry per food on the plate.
///
/// The detector is tuned for mAP, which rewards several overlapping guesses; a diary entry does not (three "rice"
/// boxes on one thali would count the rice three times). Three rules, in order:
/// 1. **The photo rules a label out**: when the whole-photo head is at least `dominant` sure of one label, a region
///    whose label the photo gives less than `implausible` becomes that label (a pile of yellow apples is not a
///    scatter of bananas). Labels the photo finds plausible (the banana next to the apple) keep their own label.
/// 2. **Touching regions of one label are one food**: regions of a label whose boxes overlap are merged (union box,
///    best confidence), repeatedly, so nested and split regions of one mound become one box; separate items (two
///    apples apart) stay separate.
/// 3. **Specks go**: a region smaller than `minArea` of the photo is dropped when a bigger food is on the photo.
public enum FoodConsolidation {
    public struct Item: Sendable, Equatable {
        public var label: String
        public var confidence: Double
        public var box: NormalizedBox

        public init(label: String, confidence: Double, box: NormalizedBox) {
            self.label = label; self.confidence = confidence; self.box = box
        }
    }

    public static let dominant: Float = 0.9
    public static let implausible: Float = 0.01
    public static let minArea = 0.01

    /// `dominant`: how sure the whole photo must be of its label for rule 1 (a head over more labels spreads its
    /// probability: `OpenSetRule.dominantProbability`).
    public static func consolidate(_ items: [Item], photo: [LabelScore], dominant: Float = Self.dominant) -> [Item] {
        var items = items
        // 1. Labels the photo rules out.
        if let best = photo.first, best.probability >= dominant {
            let p = Dictionary(photo.map { ($0.label, $0.probability) }, uniquingKeysWith: max)
            for i in items.indices where (p[items[i].label] ?? 0) < implausible { items[i].label = best.label }
        }
        // 2. Overlapping regions of one label → one food.
        var merged: [Item] = []
        for item in items.sorted(by: { $0.confidence > $1.confidence }) {
            var current = item
            var absorbed = true
            while absorbed {
                absorbed = false
                if let j = merged.firstIndex(where: { $0.label == current.label && intersects($0.box, current.box) }) {
                    let other = merged.remove(at: j)
                    current = Item(label: current.label, confidence: max(current.confidence, other.confidence),
                                   box: current.box.union(other.box))
                    absorbed = true
                }
            }
            merged.append(current)
        }
        // 3. Specks next to bigger foods.
        if let largest = merged.map(\.box.area).max(), largest >= minArea {
            merged.removeAll { $0.box.area < minArea }
        }
        return merged.sorted { $0.confidence > $1.confidence }
    }

    static func intersects(_ a: NormalizedBox, _ b: NormalizedBox) -> Bool {
        a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
    }
}
