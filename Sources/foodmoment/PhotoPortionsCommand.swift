import ArgumentParser
import FoodCore
import FoodMoment
import FoodRecognition
import FoodTraining
import Foundation
import ImageCodecs

struct FitPhotoPortionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fit-photo-portions",
        abstract: "Fit how grams follow a food's share of the photo when there is no coin (models/food-head/photo-portions.json).",
        discussion: """
        Exponent: the pooled within-label slope of log grams on log box area (the annotated boxes of ECUSTFD's train \
        split), over labels whose weighed portions differ (sd of log grams ≥ 0.15). Per label area: the median box \
        area of analyze's own answer on up to --per-label training photos of the label where that answer is one food \
        of the label (coin finder off; the --weights photos, framed to show a coin, left out). Grams and bounds per label (what a typical photo shows: a whole pizza, not one \
        slice) are kept from --priors, by hand and with their reason. Dev photos are never read.

        Example:
          foodmoment dev fit-photo-portions --train ../shared/data/images/train --weights ../shared/data/detection/ecustfd.jsonl
        """
    )

    @Option(help: "Folder of <label>/ training photos.") var train: String
    @Option(help: "ECUSTFD detection JSON-lines file (weighed portions; only its train split is read).") var weights: String
    @Option(help: "Photos per label to measure the typical box area on.") var perLabel = 40
    @Option(help: "A photo-portions JSON whose per-label grams, bounds and reasons are kept (default: the output file).") var priors: String?
    @Option(help: "Output folder.") var out: String = "models/food-head"
    @Option(help: "Models folder.") var models: String?
    @Option(help: "Threads.") var threads = ProcessInfo.processInfo.activeProcessorCount

    func validate() throws {
        guard FileManager.default.fileExists(atPath: train) else { throw ValidationError("no such folder: \(train)") }
        guard FileManager.default.fileExists(atPath: weights) else { throw ValidationError("no such file: \(weights)") }
        guard perLabel >= 5 else { throw ValidationError("--per-label must be at least 5, not \(perLabel)") }
    }

    func run() async throws {
        let outPath = out + "/photo-portions.json"
        let priorsPath = priors ?? outPath
        var model = PhotoPortionModel()
        if let data = FileManager.default.contents(atPath: priorsPath) {
            model = try JSONDecoder().decode(PhotoPortionModel.self, from: data)
        }
        // Exponent from weighed portions.
        var samples: [(label: String, area: Double, grams: Double)] = []
        let weighed = try DetectionRecord.load(jsonl: weights)
        for r in weighed where r.split == "train" && r.boxes.count == 1 {
            let b = r.boxes[0]
            if let g = r.grams?[b.label], g > 0 { samples.append((b.label, b.w * b.h, g)) }
        }
        let (exponent, used) = PhotoPortionModel.fitExponent(samples: samples)
        Output.note("fit-photo-portions: exponent \(exponent) from \(samples.count) weighed foods (labels whose portions differ: \(used.joined(separator: ", ")))")

        // Typical framing per label: analyze's own single-food answer on the label's training photos.
        var byLabel: [String: [String]] = [:]
        // Photos with a coin are framed to show it (and take the coin's path): not how a photo without one is framed.
        let withCoin = Set(weighed.map { URL(fileURLWithPath: $0.image).lastPathComponent })
        for s in try TrainingSet.folders(train) where !withCoin.contains(URL(fileURLWithPath: s.path).lastPathComponent) {
            byLabel[s.label, default: []].append(s.path)
        }
        let jobs: [(label: String, path: String)] = byLabel.sorted(by: { $0.key < $1.key }).flatMap { label, paths in
            let sorted = paths.sorted(), n = min(perLabel, sorted.count)
            return (0..<n).map { (label, sorted[$0 * sorted.count / n]) }
        }
        let recognizers = try loadRecognizers(threads: threads, models: models).map {
            $0.with(calibration: $0.calibration, coinFinder: .some(nil), photoPortions: .some(nil))
        }
        let progress = ProgressLine(total: jobs.count)
        let areas = PhotoPortionTraining.singleFoodAreas(jobs, recognizers: recognizers) { _, _ in progress.advance("fit-photo-portions") }
        progress.finish()
        var measured = 0
        for label in Set(byLabel.keys).union(model.labels.keys).sorted() {
            var prior = model.labels[label] ?? .init()
            prior.area = PhotoPortionTraining.typicalArea(jobs.indices.filter { jobs[$0].label == label }.compactMap { areas[$0] })
            if prior.area != nil { measured += 1 }
            model.labels[label] = prior == .init() ? nil : prior
        }
        model.exponent = exponent
        model.note = "foodmoment dev fit-photo-portions: exponent = pooled within-label slope of log grams on log box area over "
            + "\(samples.count) weighed ECUSTFD train foods (labels whose portions differ: \(used.joined(separator: ", "))); "
            + "area per label = median box area of analyze's single-food answer of that label on up to \(perLabel) of its training photos without a coin "
            + "(\(measured) labels with ≥ 5 such photos; default_area otherwise); grams and bounds per label set by hand (see `why`)."
        try Output.json(model).write(toFile: outPath, atomically: true, encoding: .utf8)
        print("wrote \(outPath): exponent \(exponent), typical areas for \(measured) labels")
    }
}
