import ArgumentParser
import FoodVision
import Foundation
import Pipeline

struct TrainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train",
        abstract: "Train the food head on backbone embeddings of labelled photos.",
        discussion: """
        Every image under DIR/<label>/ is decoded, turned into --views augmented views (whole photo, mirror,
        random crops), embedded by the EfficientNet-Lite0 backbone, and a softmax head (L2, early stopping on a
        stratified held-out part) is fitted over the embeddings. Boxes from --detection files (SOHL thalis) add
        their labels from box crops; one SOHL source photo group in three is held out for eval-detect.
        Writes OUT/head.json and OUT/training-report.json.

        Examples:
          foodmoment train --data ../shared/data/images/train --detection ../shared/data/detection/sohl.jsonl
          foodmoment train --data my-photos --out /tmp/head --views 2
        """
    )

    @Option(help: "Folder with one subfolder of photos per label.") var data: String
    @Option(help: "Detection JSON-lines files whose SOHL boxes add plate classes.") var detection: [String] = []
    @Option(help: "Output folder for the head.") var out: String = "models/food-head"
    @Option(help: "Augmented views per photo.") var views = 4
    @Option(help: "Threads for embedding (one network each).") var threads = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: "L2 regularisation.") var l2: Float = 1e-3
    @Option(help: "Maximum epochs.") var epochs = 200
    @Option(help: "Random seed (augmentation, split, training).") var seed: UInt64 = 1
    @Option(help: "Use at most this many photos per label (0 = all).") var limitPerLabel = 0

    func validate() throws {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: data, isDirectory: &isDir), isDir.boolValue else {
            throw ValidationError("--data must be a folder of <label>/ subfolders: \(data)")
        }
        for d in detection where !FileManager.default.fileExists(atPath: d) { throw ValidationError("no such file: \(d)") }
        if views < 1 || threads < 1 { throw ValidationError("--views and --threads must be at least 1") }
    }

    func run() async throws {
        var samples = try TrainingSet.folders(data)
        if limitPerLabel > 0 {
            var seen: [String: Int] = [:]
            samples = samples.filter { s in seen[s.label, default: 0] += 1; return seen[s.label]! <= limitPerLabel }
        }
        for file in detection {
            samples += TrainingSet.detectionCrops(try DetectionRecord.load(jsonl: file))
        }
        let classes = Array(Set(samples.map(\.label))).sorted()
        Output.note("train: \(samples.count) photos/crops, \(classes.count) labels, \(views) views each, \(threads) threads")
        let extractor = try EmbeddingExtractor(modelDirectory: ResourceLocator.modelsDirectory() + "/efficientnet-lite0", threads: threads)
        let start = ContinuousClock.now
        let progress = ProgressLine(total: samples.count)
        let (embeddings, failures) = extractor.embed(samples, views: views, seed: seed) { done, total in
            progress.advance("\(done)/\(total)")
        }
        progress.finish()
        for f in failures { Output.note("note: skipped \(f.path): \(f.reason)") }
        let embedSeconds = PhotoDecoder.milliseconds(ContinuousClock.now - start) / 1000
        var xs: [[Float]] = [], ys: [Int] = []
        let index = Dictionary(uniqueKeysWithValues: classes.enumerated().map { ($1, $0) })
        for (s, e) in zip(samples, embeddings) where !e.isEmpty {
            for v in e { xs.append(v); ys.append(index[s.label]!) }
        }
        Output.note(String(format: "train: %d embeddings in %.1f s; fitting the head", xs.count, embedSeconds))
        // Views of one photo must not straddle the split: hold out whole photos by grouping their views.
        let head = try SoftmaxHead.train(embeddings: xs, labels: ys, classes: classes, l2: l2, holdOutFraction: 0.15,
                                         maxEpochs: epochs, seed: seed, groupSize: views)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try head.save(to: out + "/head.json")
        struct Report: Encodable {
            var data: String; var detection: [String]; var photos: Int; var failures: Int; var labels: Int
            var views: Int; var embeddings: Int; var embedSeconds: Double; var seed: UInt64; var l2: Float
            var training: SoftmaxHead.TrainingReport?
        }
        let report = Report(data: data, detection: detection, photos: samples.count, failures: failures.count, labels: classes.count,
                            views: views, embeddings: xs.count, embedSeconds: embedSeconds, seed: seed, l2: l2, training: head.report)
        try Output.json(report).write(toFile: out + "/training-report.json", atomically: true, encoding: .utf8)
        if let r = head.report {
            print(String(format: "head: %d labels, %d epochs (best %d), train accuracy %.3f, held-out accuracy %@ (%d held-out views)",
                         classes.count, r.epochs, r.bestEpoch, r.trainAccuracy,
                         r.holdOutAccuracy.map { String(format: "%.3f", $0) } ?? "n/a", r.holdOutCount))
        }
        print("wrote \(out)/head.json")
    }
}
