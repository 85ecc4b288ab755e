package import FoodRecognition
import FoodMoment
import FoodCore
import ImageCodecs
import Foundation

/// For choosing and checking `LocalizationGate` (`foodmoment dev eval-gate`): every photo through stage 1 twice —
/// with the localisation pass, and with boxes from the whole-photo map (what a photo the gate lets through gets) —
/// and the gate's evidence, so any thresholds can be scored afterwards without running the network again.
package struct GateProbe: Sendable {
    /// One photo.
    package struct Row: Sendable, Codable, Equatable {
        package var path: String
        /// Which set it belongs to (a detection subset, or `images (dish)` / `images (produce)`).
        package var set: String
        package var topProbability: Float
        package var plate: Bool
        package var coinProbability: Float
        /// Foods the cell detector answers on the whole-photo map.
        package var wholeMapFoods: Int
        /// The answer with the localisation pass: its foods' labels (best first), and whether it was "unknown".
        package var labels: [String]
        package var unknown: Bool
        /// The answer from the whole-photo map alone.
        package var wholeMapLabels: [String]
        package var wholeMapUnknown: Bool
        /// With one food in both answers: the IoU of the two boxes and grams (whole map) / grams (with the pass).
        package var boxIoU: Double?
        package var gramsRatio: Double?
        /// With one food in both answers: its box's share of the photo, with the pass and from the whole-photo map.
        package var boxArea: Double?
        package var wholeMapBoxArea: Double?
        /// A coin was found with the localisation pass.
        package var coin: Bool

        /// The two answers name the same foods (and agree on "unknown").
        package var sameFoods: Bool { unknown == wholeMapUnknown && labels.sorted() == wholeMapLabels.sorted() }

        package func skipped(by gate: LocalizationGate) -> Bool {
            FoodRecognizer.GateEvidence(topProbability: topProbability, plate: plate, coinProbability: coinProbability,
                                foods: wholeMapFoods).allowsSkipping(gate)
        }
    }

    /// `withPass[i]` and `wholeMap[i]` share one thread's backbone; `wholeMap` reads boxes from the whole-photo pass.
    package var withPass: [FoodRecognizer]
    package var wholeMap: [FoodRecognizer]

    /// The gate off in both; the second set with boxes from the whole-photo map.
    package init(recognizers: [FoodRecognizer]) {
        withPass = recognizers.map { r in
            var c = r.calibration
            c.localizationGate = nil
            return r.with(calibration: c)
        }
        wholeMap = recognizers.map { r in
            var c = r.calibration
            c.localizationGate = nil
            c.localizationSize = 0
            return r.with(calibration: c)
        }
    }

    /// One row per photo (nil where it could not be decoded or recognised), in input order.
    package func run(_ photos: [(path: String, set: String)], progress: (@Sendable (Int, Int) -> Void)? = nil) -> [Row?] {
        PhotoWorkers.map(photos.map(\.path), workers: withPass.count, minShortSide: FoodRecognizer.inputSize, progress: progress) { w, i, decoded in
            guard case .success(let image) = decoded else { return nil }
            return try? probe(image, path: photos[i].path, set: photos[i].set, worker: w) ?? nil
        }
    }

    func probe(_ image: RGBImage, path: String, set: String, worker w: Int) throws -> Row? {
        guard let evidence = try wholeMap[w].gateEvidence(image) else { return nil }
        let a = try withPass[w].recognize(image), b = try wholeMap[w].recognize(image)
        var iou: Double?, ratio: Double?, areas: (Double, Double)?
        if a.foods.count == 1, b.foods.count == 1 {
            iou = a.foods[0].box.iou(b.foods[0].box)
            areas = (a.foods[0].box.area, b.foods[0].box.area)
            ratio = a.foods[0].grams > 0 ? b.foods[0].grams / a.foods[0].grams : nil
        }
        return Row(path: path, set: set, topProbability: evidence.topProbability, plate: evidence.plate,
                   coinProbability: evidence.coinProbability, wholeMapFoods: evidence.foods,
                   labels: a.foods.map(\.label), unknown: a.unknown, wholeMapLabels: b.foods.map(\.label), wholeMapUnknown: b.unknown,
                   boxIoU: iou, gramsRatio: ratio, boxArea: areas?.0, wholeMapBoxArea: areas?.1, coin: a.reference != nil)
    }

    /// What a gate does to one set of rows.
    package struct Score: Sendable, Codable, Equatable {
        package var set: String
        package var photos: Int
        /// Photos the gate lets skip the localisation pass.
        package var skipped: Int
        /// Of those: the same foods either way; a coin the pass would have found; median box IoU and grams ratio
        /// where both answers have one food; grams within ±20 %.
        package var sameFoods: Int
        package var coinsLost: Int
        package var medianIoU: Double?
        package var medianGramsRatio: Double?
        package var gramsWithin20: Int
        package var gramsCompared: Int
    }

    package static func score(_ rows: [Row], gate: LocalizationGate) -> [Score] {
        Dictionary(grouping: rows, by: \.set).sorted { $0.key < $1.key }.map { set, all in
            let skipped = all.filter { $0.skipped(by: gate) }
            let ious = skipped.compactMap(\.boxIoU).sorted(), ratios = skipped.compactMap(\.gramsRatio).sorted()
            return Score(set: set, photos: all.count, skipped: skipped.count, sameFoods: skipped.filter(\.sameFoods).count,
                         coinsLost: skipped.filter(\.coin).count, medianIoU: ious.isEmpty ? nil : ious[ious.count / 2],
                         medianGramsRatio: ratios.isEmpty ? nil : ratios[ratios.count / 2],
                         gramsWithin20: ratios.filter { abs($0 - 1) <= 0.2 }.count, gramsCompared: ratios.count)
        }
    }
}
