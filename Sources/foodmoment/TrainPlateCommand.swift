import ArgumentParser
import FoodMoment
import FoodRecognition
import FoodTraining
import FoodVision
import Foundation

struct TrainPlateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train-plate",
        abstract: "Train the plate head: a shared plate of several foods, or one dish (decides whom to trust when the food head and the cell detector disagree).",
        discussion: """
        Positives: the detection records that train the cell detector and show several foods (SOHL plates not held \
        out, fruit scenes with two or more labels), --plate-views views each. Negatives: the first --per-label \
        photos of every label folder under --dishes, --dish-views views each. Embeddings are the food embedding \
        stage 1 computes. Reports the plate probability on the held-out SOHL plates and fruit scenes and on --check \
        photos (e.g. dev), and writes OUT/plate-head.json with --threshold.

        Example:
          foodmoment dev train-plate --detection ../shared/data/detection/sohl.jsonl \\
            --detection ../shared/data/detection/fruitdet.jsonl --dishes ../shared/data/images/train \\
            --check ../shared/data/images/dev
        """
    )

    @Option(help: "Detection JSON-lines files (plates and scenes).") var detection: [String]
    @Option(help: "Folder of <label>/ photos of single dishes and produce (negatives).") var dishes: String
    @Option(help: "Folder of <label>/ photos to report the plate rate on (not used for training).") var check: String?
    @Option(help: "Negative photos per label.") var perLabel = 20
    @Option(help: "Leave out --dishes photos of these sources (comma-separated, from the MANIFEST.csv beside --dishes).") var excludeSource: String?
    @Option(help: "Views per plate photo.") var plateViews = 10
    @Option(help: "Views per dish photo.") var dishViews = 2
    @Option(help: "Plate probability at which a photo counts as a plate (0.3 shipped: see docs/recognition.md).") var threshold = 0.3
    @Option(help: "L2 regularisation.") var l2: Float = 0.01
    @Option(help: "Random seed.") var seed: UInt64 = 1
    @Option(help: "Threads.") var threads = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: "Models folder (backbone, food top).") var models: String?
    @Option(help: "Output folder.") var out: String = "models/food-head"

    func validate() throws {
        if plateViews < 1 || dishViews < 1 || perLabel < 1 { throw ValidationError("--plate-views, --dish-views and --per-label must be at least 1") }
        if !(0...1).contains(threshold) { throw ValidationError("--threshold is a probability (0 … 1), not \(threshold)") }
    }

    func run() async throws {
        let recognizers = try loadRecognizers(threads: threads, models: models)
        var records: [DetectionRecord] = []
        for file in detection { records += try DetectionRecord.load(jsonl: file) }
        let plates = PlateTraining.plates(records)
        let negatives = PlateTraining.dishes(try TrainingSet.folders(dishes, sources: [], excluding: commaSet(excludeSource)), perLabel: perLabel)
        let samples = plates + negatives
        Output.note("train-plate: \(plates.count) plate photos × \(plateViews) views, \(negatives.count) dish photos × \(dishViews) views")
        let progress = ProgressLine(total: samples.count)
        let pv = plateViews, dv = dishViews
        let embeddings = PlateTraining.embed(samples, views: { $0.label == PlateHeadModel.plateClass ? pv : dv },
                                             recognizers: recognizers, seed: seed) { _, _ in progress.advance("embed") }
        progress.finish()
        let head = try PlateTraining.train(embeddings: embeddings, labels: samples.map(\.label), l2: l2, seed: seed)
        if let r = head.report {
            print(String(format: "plate head: %d epochs (best %d), train accuracy %.3f, held-out view accuracy %@",
                         r.epochs, r.bestEpoch, r.trainAccuracy, r.holdOutAccuracy.map { String(format: "%.3f", $0) } ?? "n/a"))
        }
        // Rates on photos no view of which trained the head.
        let model = PlateHeadModel(head: head, threshold: threshold, note: "")
        let scorers = recognizers.map { $0.with(calibration: $0.calibration, plateHead: .some(model)) }
        func rate(_ name: String, _ photos: [TrainingSample]) -> String {
            guard !photos.isEmpty else { return "" }
            let e = PlateTraining.embed(photos, views: { _ in 1 }, recognizers: scorers, seed: seed)
            let scored = e.compactMap(\.first)
            let plates = scored.filter { (try? model.isPlate($0)) == true }.count
            let line = String(format: "%@: %d of %d photos (%.1f %%) count as plates", name, plates, scored.count,
                              100 * Double(plates) / Double(max(1, scored.count)))
            print(line)
            return line
        }
        var lines: [String] = []
        lines.append(rate("held-out plates and mixed fruit scenes", PlateTraining.plates(records, heldOut: true)))
        if let check { lines.append(rate("check photos (\(check))", try TrainingSet.folders(check))) }
        var saved = model
        saved.note = "foodmoment dev train-plate --per-label \(perLabel) --plate-views \(plateViews) --dish-views \(dishViews) --l2 \(l2) --threshold \(threshold) --seed \(seed): "
            + "\(plates.count) plate photos, \(negatives.count) dish photos; held-out view accuracy "
            + (head.report?.holdOutAccuracy.map { String(format: "%.3f", $0) } ?? "n/a") + "; " + lines.filter { !$0.isEmpty }.joined(separator: "; ")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try saved.save(to: out + "/" + PlateHeadModel.fileName)
        print("wrote \(out)/\(PlateHeadModel.fileName)")
    }
}
