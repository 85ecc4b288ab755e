import ArgumentParser
import FoodMoment
import FoodTraining
import FoodVision
import Foundation

/// `foodmoment dev compare-backbones`: which backbone (or pair) buys the most accuracy per millisecond.
struct CompareBackbonesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare-backbones",
        abstract: "Compare backbones by dev and cross-source top-1 of the same linear food head, and by cost.",
        discussion: """
        Each --model (a converted EfficientNet-Lite0/1/2 directory, see `dev model convert`) embeds every photo of \
        --train and --dev at its own input size, as the whole photo and its mirror image. The same linear head \
        (the one `dev train` fits) is trained on each backbone's embeddings — and with --pairs on the first \
        model's embedding concatenated with each other's — and scored two ways: on dev (trained on all of train), \
        and for each --hold-out source S on S's photos of --cross-labels, trained without S (sources from the \
        MANIFEST.csv beside the folders). Top-1 is given from the whole photo and from the mean of it and its mirror \
        image. The cost is each backbone's median forward time at its input size on one thread.

        Examples:
          foodmoment dev compare-backbones --model models/efficientnet-lite0 --model /tmp/lite1 --model /tmp/lite2 \\
              --train ../shared/data/images/train --dev ../shared/data/images/dev --pairs --cache-dir /tmp/bb
          foodmoment dev compare-backbones --model models/efficientnet-lite0 --train … --dev … --json

        Exit codes: 0 compared, 1 a model or a photo could not be read (every backbone must see the same photos), \
        2 usage error (no --model, a folder that is not there).
        """
    )

    @Option(help: "A converted model directory (repeat for each backbone; the first is the reference for --pairs).")
    var model: [String] = []
    @Option(help: "Training photos: <label>/ folders.") var train: String
    @Option(help: "Dev photos: <label>/ folders.") var dev: String
    @Option(help: "Sources to hold out one at a time (comma-separated, from MANIFEST.csv).") var holdOut = "grocerystore,ecustfd"
    @Option(help: "Labels scored on a held-out source (those other sources also have).")
    var crossLabels = "apple,banana,kiwi,lemon,mango,orange,peach,pear,plum,tomato"
    @Flag(help: "Also score the first model's embedding concatenated with each other model's.") var pairs = false
    @Option(help: "Worker threads for embedding.") var threads = 2
    @Option(help: "Timed forward passes per backbone (one thread).") var timingRuns = 20
    @Option(help: "Folder for the embedding caches (one file per backbone; reused when the photos match).") var cacheDir: String?
    @Flag(help: "Print the rows as JSON.") var json = false

    func validate() throws {
        if model.isEmpty { throw ValidationError("give at least one --model") }
        for m in model where !FileManager.default.fileExists(atPath: m + "/manifest.json") {
            throw ValidationError("\(m) is not a model directory (no manifest.json); make one with `foodmoment dev model convert`")
        }
        for (flag, dir) in [("--train", train), ("--dev", dev)] {
            var isDir: ObjCBool = false
            guard FileManager.default.fileExists(atPath: dir, isDirectory: &isDir), isDir.boolValue else {
                throw ValidationError("\(flag) must be a folder of <label>/ subfolders: \(dir)")
            }
        }
        if threads < 1 || timingRuns < 1 { throw ValidationError("--threads and --timing-runs must be at least 1") }
    }

    func run() async throws {
        let trainSamples = try TrainingSet.folders(train), devSamples = try TrainingSet.folders(dev)
        let samples = trainSamples + devSamples
        let splits = Array(repeating: BackboneComparison.Split.train, count: trainSamples.count)
            + Array(repeating: BackboneComparison.Split.dev, count: devSamples.count)
        let manifests = [try SourceManifest.find(forDataFolder: train), try SourceManifest.find(forDataFolder: dev)]
        let sources = samples.enumerated().map { i, s in manifests[i < trainSamples.count ? 0 : 1]?.source(of: s.path) }
        var photos: [String: [BackboneComparison.Photo]] = [:]
        var names: [String] = [], milliseconds: [String: Double] = [:]
        for dir in model {
            let nets = try (0..<threads).map { _ in try EfficientNetLite0(modelDirectory: dir) }
            let name = nets[0].architecture.name
            names.append(name)
            milliseconds[name] = try Self.medianForward(nets[0], runs: timingRuns)
            let cache = cacheDir.map { ($0 as NSString).appendingPathComponent("\(name).views.bin") }
            var embeddings = cache.flatMap { ViewEmbeddingCache.read($0, paths: samples.map(\.path)) }
            if embeddings == nil {
                Output.note("compare-backbones: \(name) (\(nets[0].inputSize) px) embeds \(samples.count) photos × 2 views")
                let progress = ProgressLine(total: samples.count)
                let start = ContinuousClock.now
                let (e, failures) = EmbeddingExtractor(networks: nets).embed(samples, views: 2) { done, total in
                    progress.advance("\(name) \(done)/\(total)")
                }
                progress.finish()
                // Every feature set must see the same photos, so one unreadable photo stops the comparison.
                if let f = failures.first {
                    Output.error("\(failures.count) photos could not be embedded by \(name), e.g. \(f.path): \(f.reason)")
                    throw Exit.failed
                }
                Output.note(String(format: "compare-backbones: %@ embedded in %.0f s", name, (ContinuousClock.now - start).milliseconds / 1000))
                embeddings = e
                if let cacheDir, let cache {
                    try FileManager.default.createDirectory(atPath: cacheDir, withIntermediateDirectories: true)
                    try ViewEmbeddingCache.write(cache, paths: samples.map(\.path), embeddings: e)
                }
            }
            photos[name] = samples.indices.map { i in
                BackboneComparison.Photo(path: samples[i].path, label: samples[i].label, split: splits[i], source: sources[i],
                                         views: embeddings![i])
            }
        }
        let comparison = BackboneComparison(photos: photos, crossLabels: commaSet(crossLabels))
        var sets = names.map { [$0] }
        if pairs { sets += names.dropFirst().map { [names[0], $0] } }
        var rows: [BackboneComparison.Row] = []
        for set in sets {
            Output.note("compare-backbones: training and scoring \(set.joined(separator: " + "))")
            rows.append(try comparison.row(set, milliseconds: set.map { milliseconds[$0]! }.reduce(0, +),
                                           heldOut: commaSet(holdOut).sorted()))
        }
        if json {
            print(try Output.json(rows))
            return
        }
        let held = commaSet(holdOut).sorted()
        print("backbones                                ms    dev top-1 (mirror)  dishes  produce  " + held.map { "\($0) (mirror)" }.joined(separator: "  "))
        for r in rows {
            func pct(_ x: Double?) -> String { x.map { String(format: "%5.1f %%", 100 * $0) } ?? "    —  " }
            var line = r.backbones.joined(separator: " + ").padding(toLength: 38, withPad: " ", startingAt: 0)
            line += String(format: " %6.2f  ", r.milliseconds) + pct(r.dev.top1) + " (" + pct(r.dev.top1Mirror) + ")  "
            line += pct(r.dev.dishTop1) + "  " + pct(r.dev.produceTop1)
            for s in held { line += "  " + pct(r.crossSource[s]?.top1) + " (" + pct(r.crossSource[s]?.top1Mirror) + ")" }
            print(line)
        }
    }

    /// Median time of one forward pass of a single image at the network's input size.
    static func medianForward(_ net: EfficientNetLite0, runs: Int) throws -> Double {
        let s = net.inputSize
        var rng = SplitMix64(seed: 7)
        let image = FloatImage(width: s, height: s, channels: 3, values: (0..<(s * s * 3)).map { _ in Float.random(in: -1...1, using: &rng) })
        for _ in 0..<3 { _ = try net.forward([image]) }
        var times: [Double] = []
        for _ in 0..<runs {
            let t = ContinuousClock.now
            _ = try net.forward([image])
            times.append((ContinuousClock.now - t).milliseconds)
        }
        return times.sorted()[times.count / 2]
    }
}
