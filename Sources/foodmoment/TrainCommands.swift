import ArgumentParser
import FoodVision
import Foundation
import Pipeline

struct TrainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train",
        abstract: "Train the food head on backbone embeddings of labelled photos.",
        discussion: """
        Every image under DIR/<label>/ is decoded, turned into --views augmented views (whole photo, mirror, \
        random crops), embedded by the EfficientNet-Lite0 backbone, and a softmax head (L2, early stopping on a \
        stratified held-out part) is fitted over the embeddings. Boxes from --detection files (SOHL thalis) add \
        their labels from box crops; one SOHL source photo group in three is held out for eval-detect. \
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
    @Option(help: "Learning rate (Adam).") var learningRate: Float = 0.001
    @Option(help: "Embedding cache: reused when present (same data and options), written otherwise.") var cache: String?

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
        let index = Dictionary(uniqueKeysWithValues: classes.enumerated().map { ($1, $0) })
        var xs: [[Float]] = [], ys: [Int] = []
        var failureCount = 0
        var embedSeconds = 0.0
        if let cache, let cached = EmbeddingCache.read(cache), cached.labels.count == cached.embeddings.count {
            xs = cached.embeddings
            ys = cached.labels.compactMap { index[$0] }
            Output.note("train: \(xs.count) embeddings from the cache \(cache)")
        } else {
            Output.note("train: \(samples.count) photos/crops, \(classes.count) labels, \(views) views each, \(threads) threads")
            let extractor = try EmbeddingExtractor(modelDirectory: ResourceLocator.modelsDirectory() + "/efficientnet-lite0", threads: threads)
            let start = ContinuousClock.now
            let progress = ProgressLine(total: samples.count)
            let (embeddings, failures) = extractor.embed(samples, views: views, seed: seed) { done, total in
                progress.advance("\(done)/\(total)")
            }
            progress.finish()
            for f in failures { Output.note("note: skipped \(f.path): \(f.reason)") }
            failureCount = failures.count
            embedSeconds = PhotoDecoder.milliseconds(ContinuousClock.now - start) / 1000
            var labelNames: [String] = []
            for (s, e) in zip(samples, embeddings) where !e.isEmpty {
                for v in e { xs.append(v); ys.append(index[s.label]!); labelNames.append(s.label) }
            }
            if let cache { try EmbeddingCache.write(cache, embeddings: xs, labels: labelNames) }
        }
        Output.note(String(format: "train: %d embeddings (%.1f s to embed); fitting the head", xs.count, embedSeconds))
        // Views of one photo must not straddle the split: hold out whole photos by grouping their views.
        let head = try SoftmaxHead.train(embeddings: xs, labels: ys, classes: classes, l2: l2, holdOutFraction: 0.15,
                                         maxEpochs: epochs, seed: seed, learningRate: learningRate, groupSize: views)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try head.save(to: out + "/head.json")
        struct Report: Encodable {
            var data: String; var detection: [String]; var photos: Int; var failures: Int; var labels: Int
            var views: Int; var embeddings: Int; var embedSeconds: Double; var seed: UInt64; var l2: Float; var learningRate: Float
            var training: SoftmaxHead.TrainingReport?
        }
        let report = Report(data: data, detection: detection, photos: samples.count, failures: failureCount, labels: classes.count,
                            views: views, embeddings: xs.count, embedSeconds: embedSeconds, seed: seed, l2: l2,
                            learningRate: learningRate, training: head.report)
        try Output.json(report).write(toFile: out + "/training-report.json", atomically: true, encoding: .utf8)
        if let r = head.report {
            print(String(format: "head: %d labels, %d epochs (best %d), train accuracy %.3f, held-out accuracy %@ (%d held-out views)",
                         classes.count, r.epochs, r.bestEpoch, r.trainAccuracy,
                         r.holdOutAccuracy.map { String(format: "%.3f", $0) } ?? "n/a", r.holdOutCount))
        }
        print("wrote \(out)/head.json")
    }
}

struct LearnCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "learn",
        abstract: "Teach a new food from a few photos, without retraining (stored in your data folder).",
        discussion: """
        Each photo and its mirror image are embedded by the backbone and averaged into a prototype for LABEL. \
        Every later `analyze` matches photos against your prototypes (cosine similarity, threshold from \
        models/food-head/calibration.json). Stored in $FOODMOMENT_HOME, else $XDG_DATA_HOME/foodmoment, else \
        ~/.local/share/foodmoment (learned-foods.json). Teaching an existing label adds examples to it.

        Examples:
          foodmoment learn grandmas_dumplings dumplings1.jpg dumplings2.jpg dumplings3.jpg
          foodmoment learn --list
          foodmoment learn --forget grandmas_dumplings
        """
    )

    @Argument(help: "LABEL then its photos.") var arguments: [String] = []
    @Flag(help: "List the foods you have taught.") var list = false
    @Option(help: "Forget a taught food.") var forget: String?

    func validate() throws {
        if list || forget != nil { return }
        guard arguments.count >= 2 else { throw ValidationError("give a LABEL and at least one photo") }
        let label = arguments[0]
        guard label.range(of: "^[a-z0-9_]{1,64}$", options: .regularExpression) != nil else {
            throw ValidationError("LABEL must be lower-case letters, digits and _ (e.g. grandmas_dumplings): \(label)")
        }
        for p in arguments.dropFirst() where !FileManager.default.fileExists(atPath: p) { throw ValidationError("no such file: \(p)") }
    }

    func run() async throws {
        let dir = ResourceLocator.userDataDirectory()
        let path = dir + "/learned-foods.json"
        var matcher = FileManager.default.fileExists(atPath: path)
            ? try PrototypeMatcher.load(from: path) : PrototypeMatcher(dimension: EfficientNetLite0.embeddingSize)
        if list {
            for p in matcher.prototypes { print("\(p.label)  \(p.count) examples") }
            if matcher.prototypes.isEmpty { print("no taught foods in \(path)") }
            return
        }
        if let forget {
            guard matcher.labels.contains(forget) else { Output.note("no taught food named \(forget)"); throw ExitCode(1) }
            matcher.remove(label: forget)
            try matcher.save(to: path)
            print("forgot \(forget)")
            return
        }
        let label = arguments[0]
        let photos = Array(arguments.dropFirst())
        let extractor = try EmbeddingExtractor(modelDirectory: ResourceLocator.modelsDirectory() + "/efficientnet-lite0", threads: 1)
        let samples = photos.map { TrainingSample(path: $0, label: label) }
        let (embeddings, failures) = extractor.embed(samples, views: 2)
        for f in failures { Output.note("error: \(f.path): \(f.reason)") }
        let examples = embeddings.flatMap { $0 }
        guard !examples.isEmpty else { Output.note("no photo could be used"); throw ExitCode(1) }
        try matcher.add(label: label, examples: examples)
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try matcher.save(to: path)
        print("learned \(label) from \(photos.count - failures.count) photo(s); saved to \(path)")
        if !failures.isEmpty { throw ExitCode(1) }
    }
}

/// Training embeddings on disk, so head experiments do not re-run the backbone: `FILE` holds
/// `[u32 count][u32 dim][count*dim f32]` (little-endian), `FILE.labels.json` the label of each row.
enum EmbeddingCache {
    static func write(_ path: String, embeddings: [[Float]], labels: [String]) throws {
        var data = Data()
        var header = [UInt32(embeddings.count), UInt32(embeddings.first?.count ?? 0)]
        data.append(Data(bytes: &header, count: 8))
        for e in embeddings { e.withUnsafeBytes { data.append(contentsOf: $0) } }
        try data.write(to: URL(fileURLWithPath: path))
        try JSONEncoder().encode(labels).write(to: URL(fileURLWithPath: path + ".labels.json"))
    }

    static func read(_ path: String) -> (embeddings: [[Float]], labels: [String])? {
        guard let data = FileManager.default.contents(atPath: path), data.count >= 8,
              let labelData = FileManager.default.contents(atPath: path + ".labels.json"),
              let labels = try? JSONDecoder().decode([String].self, from: labelData) else { return nil }
        return data.withUnsafeBytes { raw -> ([[Float]], [String])? in
            let count = Int(raw.load(fromByteOffset: 0, as: UInt32.self)), dim = Int(raw.load(fromByteOffset: 4, as: UInt32.self))
            guard data.count == 8 + count * dim * 4 else { return nil }
            let floats = raw.baseAddress!.advanced(by: 8).assumingMemoryBound(to: Float.self)
            return ((0..<count).map { Array(UnsafeBufferPointer(start: floats + $0 * dim, count: dim)) }, labels)
        }
    }
}
