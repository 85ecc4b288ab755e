public import FoodCore
import Foundation
import ImageCodecs

/// mAP@0.5 and grams error for files in the `../shared/data/detection` format.
public struct DetectionReport: Sendable, Codable {
    public struct Subset: Sendable, Codable {
        public var name: String
        public var images: Int
        public var boxes: Int
        public var mAP50: Double
        public var apByLabel: [String: Double]
        /// Mean absolute grams error in percent of the true grams, over foods with known grams that were detected.
        public var gramsMAEPercent: Double?
        public var gramsCount: Int
        enum CodingKeys: String, CodingKey {
            case name, images, boxes
            case mAP50 = "map50", apByLabel = "ap_by_label", gramsMAEPercent = "grams_mae_percent", gramsCount = "grams_count"
        }
    }
    public var subsets: [Subset]
    /// Images that could not be decoded or recognised (they count as images with no detections).
    public var failures: [String]
}

public struct DetectionEvaluator: Sendable {
    public var recognizers: [FoodRecognizer]
    public init(recognizers: [FoodRecognizer]) { self.recognizers = recognizers }

    struct Prediction { var image: Int; var label: String; var confidence: Double; var box: NormalizedBox; var grams: Double }

    /// Subsets: by source, SOHL split into plates held out of training vs plates trained on, ECUSTFD by split.
    public static func subsetName(_ r: DetectionRecord) -> String {
        let source = r.source ?? "unknown"
        if source == "sohl", let g = r.group { return DetectionRecord.isHeldOut(group: g) ? "sohl (held-out plates)" : "sohl (trained-on plates)" }
        if let split = r.split, split == "train" || split == "dev" { return "\(source) (\(split))" }
        return source
    }

    public func evaluate(_ records: [DetectionRecord], progress: (@Sendable (Int, Int) -> Void)? = nil) -> DetectionReport {
        let lock = NSLock()
        nonisolated(unsafe) var predictions = [[DetectedFood]?](repeating: nil, count: records.count)
        nonisolated(unsafe) var done = 0
        let decoder = PhotoDecoder(options: DecodeOptions(minShortSide: FoodRecognizer.inputSize))
        let workers = recognizers.count
        DispatchQueue.concurrentPerform(iterations: workers) { w in
            var i = w
            while i < records.count {
                if case .success(let (decoded, _)) = decoder.decode(path: records[i].image),
                   let rec = try? recognizers[w].recognize(decoded.image) {
                    lock.lock(); predictions[i] = rec.foods; lock.unlock()
                }
                lock.lock(); done += 1; let d = done; lock.unlock()
                progress?(d, records.count)
                i += workers
            }
        }
        var groups: [String: [Int]] = [:]
        for (i, r) in records.enumerated() { groups[Self.subsetName(r), default: []].append(i) }
        let subsets = groups.keys.sorted().map { name -> DetectionReport.Subset in
            let idx = groups[name]!
            return Self.score(name: name, records: idx.map { records[$0] }, predictions: idx.map { predictions[$0] ?? [] })
        }
        let failures = records.indices.filter { predictions[$0] == nil }.map { records[$0].image }
        return DetectionReport(subsets: subsets, failures: failures)
    }

    static func score(name: String, records: [DetectionRecord], predictions: [[DetectedFood]]) -> DetectionReport.Subset {
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
        for (r, p) in zip(records, predictions) {
            guard let grams = r.grams else { continue }
            for (label, truthGrams) in grams where truthGrams > 0 {
                let truthBox = r.boxes.first { $0.label == label }?.normalized
                let candidates = p.filter { $0.label == label }
                guard let best = candidates.max(by: { ($0.box.iou(truthBox ?? .whole)) < ($1.box.iou(truthBox ?? .whole)) }) else { continue }
                errors.append(abs(best.grams - truthGrams) / truthGrams * 100)
            }
        }
        let mAP = apByLabel.isEmpty ? 0 : apByLabel.values.reduce(0, +) / Double(apByLabel.count)
        return DetectionReport.Subset(name: name, images: records.count, boxes: records.reduce(0) { $0 + $1.boxes.count },
                                      mAP50: (mAP * 1000).rounded() / 1000,
                                      apByLabel: apByLabel.mapValues { ($0 * 1000).rounded() / 1000 },
                                      gramsMAEPercent: errors.isEmpty ? nil : (errors.reduce(0, +) / Double(errors.count) * 10).rounded() / 10,
                                      gramsCount: errors.count)
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
