package import FoodRecognition
import FoodMoment
import FoodVision
package import FoodCore
import Foundation
import ImageCodecs

/// mAP@0.5 and grams error for files in the `../shared/data/detection` format.
package struct DetectionReport: Sendable, Codable {
    package struct Subset: Sendable, Codable {
        package var name: String
        package var images: Int
        package var boxes: Int
        package var mAP50: Double
        package var apByLabel: [String: Double]
        /// Mean absolute grams error in percent of the true grams, over foods with known grams that were detected.
        package var gramsMAEPercent: Double?
        package var gramsCount: Int
        package var gramsMedianPercent: Double?
        /// The same errors split by the food's `grams_source`.
        package var gramsBySource: [String: GramsError]
        /// Coin (scale reference) finding: photos with a true coin, coins found there (IoU ≥ 0.5 with the true coin),
        /// coins reported anywhere else (wrong place, or a photo without a coin), median |diameter error| %.
        package var coin: CoinStats?
        enum CodingKeys: String, CodingKey {
            case name, images, boxes, coin
            case mAP50 = "map50", apByLabel = "ap_by_label", gramsMAEPercent = "grams_mae_percent", gramsCount = "grams_count"
            case gramsMedianPercent = "grams_median_percent", gramsBySource = "grams_by_source"
        }
    }
    package struct GramsError: Sendable, Codable {
        package var maePercent: Double
        package var medianPercent: Double
        package var count: Int
        enum CodingKeys: String, CodingKey { case count, maePercent = "mae_percent", medianPercent = "median_percent" }
    }
    package struct CoinStats: Sendable, Codable {
        package var photosWithCoin: Int
        package var found: Int
        package var wrong: Int
        package var medianDiameterErrorPercent: Double?
        enum CodingKeys: String, CodingKey {
            case found, wrong, photosWithCoin = "photos_with_coin", medianDiameterErrorPercent = "median_diameter_error_percent"
        }
    }
    package var subsets: [Subset]
    /// Images that could not be decoded or recognised (they count as images with no detections).
    package var failures: [String]
}

package struct DetectionEvaluator: Sendable {
    package var recognizers: [FoodRecognizer]
    package init(recognizers: [FoodRecognizer]) { self.recognizers = recognizers }

    struct Prediction { var image: Int; var label: String; var confidence: Double; var box: NormalizedBox; var grams: Double }

    /// Subsets: by source, SOHL split into plates held out of training vs plates trained on, ECUSTFD by split, fruit
    /// scenes held out of cell training vs trained on.
    package static func subsetName(_ r: DetectionRecord) -> String {
        let source = r.source ?? "unknown"
        if source == "sohl", let g = r.group { return DetectionRecord.isHeldOut(group: g) ? "sohl (held-out plates)" : "sohl (trained-on plates)" }
        if source == "fruitdet" { return CellTraining.isHeldOutFruitScene(r) ? "fruitdet (held-out scenes)" : "fruitdet (trained-on scenes)" }
        if let split = r.split, split == "train" || split == "dev" { return "\(source) (\(split))" }
        return source
    }

    package func evaluate(_ records: [DetectionRecord], progress: (@Sendable (Int, Int) -> Void)? = nil) -> DetectionReport {
        let recognised = PhotoWorkers.map(records.map(\.image), workers: recognizers.count, minShortSide: FoodRecognizer.inputSize,
                                          progress: progress) { w, _, decoded -> Recognition? in
            guard case .success(let image) = decoded else { return nil }
            return try? recognizers[w].recognize(image)
        }
        let predictions = recognised.map { $0?.foods }, references = recognised.map { $0?.reference }
        var groups: [String: [Int]] = [:]
        for (i, r) in records.enumerated() { groups[Self.subsetName(r), default: []].append(i) }
        let subsets = groups.keys.sorted().map { name -> DetectionReport.Subset in
            let idx = groups[name]!
            return Self.score(name: name, records: idx.map { records[$0] }, predictions: idx.map { predictions[$0] ?? [] },
                              references: idx.map { references[$0] })
        }
        let failures = records.indices.filter { predictions[$0] == nil }.map { records[$0].image }
        return DetectionReport(subsets: subsets, failures: failures)
    }

    static func score(name: String, records: [DetectionRecord], predictions: [[RecognizedFood]],
                      references: [ReferenceObject?] = []) -> DetectionReport.Subset {
        var labels = Set<String>()
        for r in records { for b in r.boxes { labels.insert(b.label) } }
        var apByLabel: [String: Double] = [:]
        for label in labels.sorted() {
            var preds: [Prediction] = []
            var truths: [[NormalizedBox]] = []
            var totalTruth = 0
            for (i, (r, p)) in zip(records, predictions).enumerated() {
                let t = r.boxes.filter { $0.label == label }.map(\.normalized)
                truths.append(t)
                totalTruth += t.count
                for f in p where f.label == label {
                    preds.append(Prediction(image: i, label: label, confidence: f.confidence, box: f.box, grams: f.grams))
                }
            }
            apByLabel[label] = averagePrecision(preds, truths: truths, totalTruth: totalTruth)
        }
        // Grams: each food with known grams against the detection of the same label with the best IoU.
        var errors: [Double] = []
        var bySource: [String: [Double]] = [:]
        for (r, p) in zip(records, predictions) {
            guard let grams = r.grams else { continue }
            for (label, truthGrams) in grams where truthGrams > 0 {
                let truthBox = r.boxes.first { $0.label == label }?.normalized
                let candidates = p.filter { $0.label == label }
                guard let best = candidates.max(by: { ($0.box.iou(truthBox ?? .whole)) < ($1.box.iou(truthBox ?? .whole)) }) else { continue }
                errors.append(abs(best.grams - truthGrams) / truthGrams * 100)
                bySource[best.gramsSource.rawValue, default: []].append(errors.last!)
            }
        }
        func round1(_ v: Double) -> Double { (v * 10).rounded() / 10 }
        func median(_ v: [Double]) -> Double? {
            guard !v.isEmpty else { return nil }
            let s = v.sorted()
            return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
        }
        var coin: DetectionReport.CoinStats?
        do {
            var stats = DetectionReport.CoinStats(photosWithCoin: 0, found: 0, wrong: 0)
            var diameterErrors: [Double] = []
            for (i, r) in records.enumerated() {
                let truth = (r.coins ?? []).map { NormalizedBox(x: $0.x, y: $0.y, w: $0.w, h: $0.h) }
                if !truth.isEmpty { stats.photosWithCoin += 1 }
                guard i < references.count, let found = references[i] else { continue }
                if let t = truth.max(by: { found.box.iou($0) < found.box.iou($1) }), found.box.iou(t) >= 0.5 {
                    stats.found += 1
                    let trueDiameter = max(t.w * Double(r.width), t.h * Double(r.height))
                    let measured = found.box.w * Double(r.width)
                    diameterErrors.append(abs(measured - trueDiameter) / trueDiameter * 100)
                } else {
                    stats.wrong += 1
                }
            }
            stats.medianDiameterErrorPercent = median(diameterErrors).map(round1)
            coin = stats
        }
        let mAP = apByLabel.isEmpty ? 0 : apByLabel.values.reduce(0, +) / Double(apByLabel.count)
        return DetectionReport.Subset(name: name, images: records.count, boxes: records.reduce(0) { $0 + $1.boxes.count },
                                      mAP50: (mAP * 1000).rounded() / 1000,
                                      apByLabel: apByLabel.mapValues { ($0 * 1000).rounded() / 1000 },
                                      gramsMAEPercent: errors.isEmpty ? nil : (errors.reduce(0, +) / Double(errors.count) * 10).rounded() / 10,
                                      gramsCount: errors.count, gramsMedianPercent: median(errors).map(round1),
                                      gramsBySource: bySource.mapValues {
                                          DetectionReport.GramsError(maePercent: round1($0.reduce(0, +) / Double($0.count)),
                                                                     medianPercent: round1(median($0) ?? 0), count: $0.count)
                                      }, coin: coin)
    }

    /// AP@0.5 for one label: predictions as (image index, confidence, box), truths per image.
    package static func averagePrecision(predictions: [(Int, Double, NormalizedBox)], truths: [[NormalizedBox]]) -> Double {
        averagePrecision(predictions.map { Prediction(image: $0.0, label: "", confidence: $0.1, box: $0.2, grams: 0) },
                         truths: truths, totalTruth: truths.reduce(0) { $0 + $1.count })
    }

    /// VOC-style all-point interpolated AP at IoU 0.5; each truth box can be matched once.
    static func averagePrecision(_ preds: [Prediction], truths: [[NormalizedBox]], totalTruth: Int) -> Double {
        guard totalTruth > 0 else { return 0 }
        let sorted = preds.sorted { $0.confidence > $1.confidence }
        var used = truths.map { [Bool](repeating: false, count: $0.count) }
        var tp: [Double] = [], fp: [Double] = []
        for p in sorted {
            var bestIoU = 0.0, bestJ = -1
            for (j, t) in truths[p.image].enumerated() {
                let iou = p.box.iou(t)
                if iou > bestIoU { bestIoU = iou; bestJ = j }
            }
            if bestIoU >= 0.5, bestJ >= 0, !used[p.image][bestJ] {
                used[p.image][bestJ] = true
                tp.append(1); fp.append(0)
            } else {
                tp.append(0); fp.append(1)
            }
        }
        var cumTP = 0.0, cumFP = 0.0
        var precision: [Double] = [], recall: [Double] = []
        for k in 0..<tp.count {
            cumTP += tp[k]; cumFP += fp[k]
            precision.append(cumTP / max(cumTP + cumFP, 1e-9))
            recall.append(cumTP / Double(totalTruth))
        }
        // Precision envelope, then area under the recall steps.
        var ap = 0.0, prevRecall = 0.0
        for k in 0..<precision.count {
            let envelope = precision[k...].max() ?? 0
            ap += (recall[k] - prevRecall) * envelope
            prevRecall = recall[k]
        }
        return ap
    }
}
