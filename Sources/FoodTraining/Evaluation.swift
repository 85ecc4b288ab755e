package import FoodRecognition
import FoodMoment
package import FoodVision
import FoodCore
import Foundation
import ImageCodecs

/// Which labels are prepared dishes and which are produce (fruit and vegetables), for reporting accuracy per
/// group the way the recognition targets are stated. Produce is the short, closed list; every other label (the
/// Food-101 and Chinese dishes, the thali kinds) is a dish.
package enum LabelGroup {
    package static let produce: Set<String> = [
        "apple", "asparagus", "avocado", "banana", "beet", "bell_pepper", "cabbage", "carrot", "cucumber", "eggplant",
        "garlic", "ginger", "grape", "grapefruit", "kiwi", "leek", "lemon", "lime", "litchi", "mandarin", "mango", "melon",
        "mushroom", "nectarine", "onion", "orange", "papaya", "passion_fruit", "peach", "pear", "pineapple", "plum",
        "pomegranate", "potato", "sweet_potato", "tomato", "watermelon", "zucchini",
    ]
    /// The dishes of the first vocabulary (65 labels), as the figures before 2026-12 were grouped.
    package static let dishes: Set<String> = [
        "apple_pie", "baby_back_ribs", "baklava", "beef_carpaccio", "beef_tartare", "beet_salad", "beignets", "bibimbap",
        "bread_pudding", "breakfast_burrito", "chicken_curry", "chicken_wings", "fried_rice", "grilled_salmon", "hamburger",
        "ice_cream", "pizza", "ramen", "steak", "sushi",
        "bread", "bun", "doughnut", "egg", "fried_dough_twist", "mooncake", "sachima",
    ]

    package static func group(of label: String) -> String { produce.contains(label) ? "produce" : "dish" }
}

/// Top-1/top-5 per label, confusions and unknown-rejections for a folder of `<label>/` photos.
package struct ClassificationReport: Sendable, Codable {
    package struct LabelRow: Sendable, Codable {
        package var label: String
        package var group: String
        package var count: Int
        package var top1: Double
        package var top5: Double
        package var rejectedAsUnknown: Int
        package var mostConfusedWith: String?
        /// Share of photos whose most confident food in `analyze`'s `foods` list is this label (nil: not measured).
        package var foodsTop1: Double?
        enum CodingKeys: String, CodingKey {
            case label, group, count, top1, top5
            case foodsTop1 = "foods_top1"
            case rejectedAsUnknown = "rejected_as_unknown", mostConfusedWith = "most_confused_with"
        }
    }
    package struct Confusion: Sendable, Codable { package var truth: String; package var predicted: String; package var count: Int }

    package var photos: Int
    package var failures: Int
    package var top1: Double
    package var top5: Double
    package var top1ByGroup: [String: Double]
    package var top5ByGroup: [String: Double]
    /// Share of the photos rejected as unknown / not food (they should not be).
    package var rejectedRate: Double
    package var labels: [LabelRow]
    package var confusions: [Confusion]
    package var unknownThreshold: Float
    /// The user's view: the most confident food of the `foods` list is the photo's label (an empty list counts as
    /// wrong); nil when only the head was measured.
    package var foodsTop1: Double?
    package var foodsTop1ByGroup: [String: Double]?
    /// Where the foods list's top differs from the head's top-1 and only one of them is right.
    package var foodsLost: Int?
    package var foodsGained: Int?

    enum CodingKeys: String, CodingKey {
        case photos, failures, top1, top5, labels, confusions
        case foodsTop1 = "foods_top1", foodsTop1ByGroup = "foods_top1_by_group", foodsLost = "foods_lost", foodsGained = "foods_gained"
        case top1ByGroup = "top1_by_group", top5ByGroup = "top5_by_group"
        case rejectedRate = "rejected_rate", unknownThreshold = "unknown_threshold"
    }
}

/// Runs the recognizer's whole-photo classification over labelled photos, on one recognizer per thread.
package struct ClassificationEvaluator: Sendable {
    package var recognizers: [FoodRecognizer]

    package init(recognizers: [FoodRecognizer]) { self.recognizers = recognizers }

    /// One photo's whole-photo ranking, food-context mass and (when measured) the most confident food of the foods
    /// list (nil = the list is empty).
    package struct Scored: Sendable {
        package var ranked: [LabelScore]
        package var foodContext: Float
        package var foodsTop: String?
    }

    /// The head's ranking and food-context mass for each sample (nil when the photo failed to decode); with
    /// `foods`, the whole of stage 1 runs as `analyze` runs it and the foods list's top is kept too.
    package func scores(_ samples: [TrainingSample], foods: Bool = false,
                       progress: (@Sendable (Int, Int) -> Void)? = nil) -> [Scored?] {
        PhotoWorkers.map(samples.map(\.path), workers: recognizers.count, minShortSide: FoodRecognizer.inputSize, progress: progress) { w, _, decoded in
            guard case .success(let image) = decoded else { return nil }
            let r = recognizers[w]
            if foods {
                guard let (rec, context) = try? r.recognizeScored(image) else { return nil }
                let top = rec.foods.max { $0.confidence < $1.confidence }
                return Scored(ranked: rec.top, foodContext: context, foodsTop: rec.unknown ? nil : top?.label)
            }
            guard let e = try? r.embed(image), let ranked = try? r.head.predict(e.embedding) else { return nil }
            return Scored(ranked: ranked, foodContext: e.foodContext, foodsTop: nil)
        }
    }

    package func evaluate(_ samples: [TrainingSample], calibration: RecognitionCalibration, foods: Bool = false,
                         progress: (@Sendable (Int, Int) -> Void)? = nil) -> ClassificationReport {
        let results = scores(samples, foods: foods, progress: progress)
        var perLabel: [String: (n: Int, t1: Int, t5: Int, rej: Int, conf: [String: Int], f1: Int)] = [:]
        var failures = 0, lost = 0, gained = 0
        for (s, r) in zip(samples, results) {
            guard let scored = r else { failures += 1; continue }
            let ranked = scored.ranked
            var row = perLabel[s.label] ?? (0, 0, 0, 0, [:], 0)
            row.n += 1
            let headRight = ranked.first?.label == s.label, foodsRight = scored.foodsTop == s.label
            if foodsRight { row.f1 += 1 }
            if headRight && !foodsRight { lost += 1 }
            if foodsRight && !headRight { gained += 1 }
            if ranked.first?.label == s.label { row.t1 += 1 } else if let p = ranked.first?.label { row.conf[p, default: 0] += 1 }
            if ranked.prefix(5).contains(where: { $0.label == s.label }) { row.t5 += 1 }
            if calibration.rejects(headProbability: ranked.first?.probability ?? 0, foodContext: scored.foodContext) { row.rej += 1 }
            perLabel[s.label] = row
        }
        let rows = perLabel.keys.sorted().map { label -> ClassificationReport.LabelRow in
            let r = perLabel[label]!
            return .init(label: label, group: LabelGroup.group(of: label), count: r.n, top1: Double(r.t1) / Double(r.n),
                         top5: Double(r.t5) / Double(r.n), rejectedAsUnknown: r.rej,
                         mostConfusedWith: r.conf.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }?.key,
                         foodsTop1: foods ? Double(r.f1) / Double(r.n) : nil)
        }
        /// Photo-weighted mean of a per-label rate (a label without the rate counts as 0).
        func rate(_ rs: [ClassificationReport.LabelRow], _ value: (ClassificationReport.LabelRow) -> Double?) -> Double {
            let n = rs.reduce(0) { $0 + $1.count }
            return n == 0 ? 0 : rs.reduce(0.0) { $0 + (value($1) ?? 0) * Double($1.count) } / Double(n)
        }
        var byGroup1: [String: Double] = [:], byGroup5: [String: Double] = [:], foodsByGroup: [String: Double] = [:]
        for g in ["dish", "produce"] {
            let rs = rows.filter { $0.group == g }
            if !rs.isEmpty { byGroup1[g] = rate(rs) { $0.top1 }; byGroup5[g] = rate(rs) { $0.top5 }; foodsByGroup[g] = rate(rs) { $0.foodsTop1 } }
        }
        var confusions: [ClassificationReport.Confusion] = []
        for (label, r) in perLabel { for (p, c) in r.conf { confusions.append(.init(truth: label, predicted: p, count: c)) } }
        confusions.sort { $0.count > $1.count || ($0.count == $1.count && ($0.truth, $0.predicted) < ($1.truth, $1.predicted)) }
        let total = rows.reduce(0) { $0 + $1.count }
        return ClassificationReport(photos: total, failures: failures, top1: rate(rows) { $0.top1 }, top5: rate(rows) { $0.top5 },
                                    top1ByGroup: byGroup1, top5ByGroup: byGroup5,
                                    rejectedRate: total == 0 ? 0 : Double(rows.reduce(0) { $0 + $1.rejectedAsUnknown }) / Double(total),
                                    labels: rows, confusions: Array(confusions.prefix(15)), unknownThreshold: calibration.unknownThreshold,
                                    foodsTop1: foods ? rate(rows) { $0.foodsTop1 } : nil, foodsTop1ByGroup: foods ? foodsByGroup : nil,
                                    foodsLost: foods ? lost : nil, foodsGained: foods ? gained : nil)
    }
}
