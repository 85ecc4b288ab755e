import ArgumentParser
import FoodCore
import FoodVision
import ImageCodecs
import Foundation
import FoodMoment
import FoodRecognition
import FoodTraining

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
          foodmoment dev train --data ../shared/data/images/train --detection ../shared/data/detection/sohl.jsonl
          foodmoment dev train --data my-photos --out /tmp/head --views 2
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
    @Option(help: "Leave out photos of these sources (comma-separated names from the MANIFEST.csv beside --data), for cross-source evaluation.") var excludeSource: String?
    @Option(help: "Embedding the head reads: backbone (the network's own; `finetune` starts from it) or food (the shipped food top's, models/food-head/food-top.*: a head that goes with that top as it is, no finetune).") var embedding: HeadEmbedding = .backbone

    @Option(help: "Side of the square views the network reads (default its own, 224; 64 reads every photo as a thumbnail).") var viewSize: Int?

    enum HeadEmbedding: String, ExpressibleByArgument, CaseIterable { case backbone, food }

    func validate() throws {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: data, isDirectory: &isDir), isDir.boolValue else {
            throw ValidationError("--data must be a folder of <label>/ subfolders: \(data)")
        }
        for d in detection where !FileManager.default.fileExists(atPath: d) { throw ValidationError("no such file: \(d)") }
        if views < 1 || threads < 1 { throw ValidationError("--views and --threads must be at least 1") }
    }

    func run() async throws {
        var samples = try TrainingSet.folders(data, sources: [], excluding: commaSet(excludeSource))
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
            let top = embedding == .food ? try FoodTop.load(directory: ProcessSettings.modelsDirectory + "/food-head",
                                                                             precision: ProcessSettings.inference().precision) : nil
            let extractor = try EmbeddingExtractor(modelDirectory: ProcessSettings.modelsDirectory + "/efficientnet-lite0",
                                                   threads: threads, foodTop: top, inference: ProcessSettings.inference())
            extractor.viewSize = viewSize
            let start = ContinuousClock.now
            let progress = ProgressLine(total: samples.count)
            let (embeddings, failures) = extractor.embed(samples, views: views, seed: seed) { done, total in
                progress.advance("\(done)/\(total)")
            }
            progress.finish()
            for f in failures { Output.note("note: skipped \(f.path): \(f.reason)") }
            failureCount = failures.count
            embedSeconds = (ContinuousClock.now - start).milliseconds / 1000
            var labelNames: [String] = []
            for (s, e) in zip(samples, embeddings) where !e.isEmpty {
                for v in e { xs.append(v); ys.append(index[s.label]!); labelNames.append(s.label) }
            }
            if let cache { try EmbeddingCache.write(cache, embeddings: xs, labels: labelNames) }
        }
        Output.note(String(format: "train: %d embeddings (%.1f s to embed); fitting the head", xs.count, embedSeconds))
        // Views of one photo must not straddle the split: hold out whole photos by grouping their views, and whole
        // portions (ECUSTFD shots) and photos (box crops) by their hold-out groups — when every photo gave views.
        let groups = xs.count == samples.count * views ? TrainingSet.holdOutGroups(samples) : nil
        if groups == nil { Output.note("train: some photos gave no views; holding out by photo only") }
        var head = try SoftmaxHead.train(embeddings: xs, labels: ys, classes: classes, l2: l2, holdOutFraction: 0.15,
                                         maxEpochs: epochs, seed: seed, learningRate: learningRate, groupSize: views,
                                         photoGroups: groups)
        // A head on the food embedding belongs to that top, like finetune's: finetune must not start from it.
        if embedding == .food { head.fineTuned = true }
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try head.save(to: out + "/head.json")
        struct Report: Encodable {
            var data: String; var detection: [String]; var photos: Int; var failures: Int; var labels: Int
            var views: Int; var embeddings: Int; var embedSeconds: Double; var seed: UInt64; var l2: Float; var learningRate: Float
            var training: SoftmaxHead.TrainingReport?
            var excludedSources: [String]
        }
        let report = Report(data: data, detection: detection, photos: samples.count, failures: failureCount, labels: classes.count,
                            views: views, embeddings: xs.count, embedSeconds: embedSeconds, seed: seed, l2: l2,
                            learningRate: learningRate, training: head.report, excludedSources: commaSet(excludeSource).sorted())
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
        abstract: "Teach a food from a few photos, without retraining (stored in your data folder).",
        discussion: """
        Each photo and its mirror image are embedded by the food model and kept as examples of LABEL (the newest 32). \
        Every later `analyze` compares a photo with your examples: the most similar one names it when its cosine \
        similarity is at least the threshold of models/food-head/calibration.json, unless the model is at least 0.9 \
        sure of a food of its own. `meal edit --replace` teaches the same way from a logged meal's photo; `--off` \
        stops that (`--on` resumes). Stored in $FOODMOMENT_HOME, else $XDG_DATA_HOME/foodmoment, else \
        ~/.local/share/foodmoment (learned-foods.json, learning.json). Teaching an existing label adds examples to it.

        Examples:
          foodmoment learn grandmas_dumplings dumplings1.jpg dumplings2.jpg dumplings3.jpg
          foodmoment learn --list
          foodmoment learn --forget grandmas_dumplings
          foodmoment learn --off
        """
    )

    @Argument(help: "LABEL then its photos.") var arguments: [String] = []
    @Flag(help: "List the foods you have taught.") var list = false
    @Option(help: "Forget a taught food.") var forget: String?
    @Flag(help: "Stop learning from meal corrections (`meal edit --replace`).") var off = false
    @Flag(help: "Learn from meal corrections again (the default).") var on = false

    func validate() throws {
        if off && on { throw ValidationError("give --off or --on, not both") }
        if list || forget != nil || off || on { return }
        guard arguments.count >= 2 else { throw ValidationError("give a LABEL and at least one photo") }
        let label = arguments[0]
        guard label.range(of: "^[a-z0-9_]{1,64}$", options: .regularExpression) != nil else {
            throw ValidationError("LABEL must be lower-case letters, digits and _ (e.g. grandmas_dumplings): \(label)")
        }
        for p in arguments.dropFirst() where !FileManager.default.fileExists(atPath: p) { throw ValidationError("no such file: \(p)") }
    }

    func run() async throws {
        let store = PersonalFoods(directory: ProcessSettings.userDataDirectory)
        do {
            try await run(store)
        } catch let error as PersonalFoodsError {
            Output.error(error.description)
            throw Exit.failed
        }
    }

    func run(_ store: PersonalFoods) async throws {
        if off || on {
            try store.setLearnsFromCorrections(on)
            print(on ? "learning from meal corrections is on" : "learning from meal corrections is off (`foodmoment learn --on` resumes)")
            return
        }
        if list {
            let matcher = try store.matcher()
            for p in matcher.prototypes { print("\(p.label)  \(p.count) examples") }
            if matcher.prototypes.isEmpty { print("no taught foods in \(store.matcherPath)") }
            print("learning from meal corrections: \(try store.learnsFromCorrections() ? "on" : "off")")
            return
        }
        if let forget {
            guard try store.forget(forget) else { Output.note("no taught food named \(forget)"); throw Exit.failed }
            print("forgot \(forget)")
            return
        }
        _ = try store.matcher()  // a damaged store is reported before any photo is read
        let label = arguments[0]
        let photos = Array(arguments.dropFirst())
        let decoder = PhotoDecoder(options: DecodeOptions(minShortSide: FoodRecognizer.inputSize))
        let analyzer = try MealAnalyzer.load(environment: ProcessSettings.environment, decoder: decoder)
        var examples: [[Float]] = [], failures: [(path: String, reason: String)] = []
        for path in photos {
            switch decoder.decode(path: path) {
            case .success(let (decoded, _)):
                do { examples += try analyzer.exampleEmbeddings(of: decoded.image, region: nil) } catch {
                    failures.append((path, "\(error)"))
                }
            case .failure(let e):
                failures.append((path, e.message))
            }
        }
        for f in failures { Output.error("\(f.path): \(f.reason)") }
        guard !examples.isEmpty else { Output.note("no photo could be used"); throw Exit.failed }
        try store.add(label: label, examples: examples)
        print("learned \(label) from \(photos.count - failures.count) photo(s); saved to \(store.matcherPath)")
        if !failures.isEmpty { throw Exit.failed }
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

struct TrainReferenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train-reference",
        abstract: "Train the coin finder and fit the per-label areal-density model for grams from a reference coin.",
        discussion: """
        Coin: the backbone's 14×14 feature map (448×448 input, as analyze's localisation pass) of every ECUSTFD \
        train photo gives one positive cell (the one holding the coin's centre) and negatives (random cells two or \
        more cells away, and the food's centre); --negatives folders add random cells of photos without a coin. A \
        two-class softmax head (reference_coin / background) is fitted over those cells: OUT/coin-head.json. \
        Grams: on the same train photos, k per label = geometric mean of grams / area_cm²^e, area = the food box \
        at the coin's scale (--fit predicted: analyze's own boxes and found coins; truth: the annotated ones). The \
        exponent e (one for all, or a slope per label) is chosen by its error on portions it was not fitted on \
        (--folds folds of the train portions; 0 = in-sample error). Writes OUT/reference.json with the thresholds \
        and how it was fitted.

        Example:
          foodmoment dev train-reference --data ../shared/data/detection/ecustfd.jsonl --negatives ../shared/data/images/train
        """
    )

    @Option(help: "ECUSTFD detection JSON-lines file (records with coins, grams and split).") var data: String
    @Option(help: "Folders of <label>/ photos without coins (cells used as negatives).") var negatives: [String] = []
    @Option(help: "Negative photos per label folder.") var negativesPerLabel = 6
    @Option(help: "Output folder.") var out: String = "models/food-head"
    @Option(help: "Models folder (backbone, food head).") var models: String?
    @Option(help: "Threads.") var threads = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: "L2 regularisation of the coin head.") var l2: Float = 0.01
    @Option(help: "Coin probability a cell needs.") var cellThreshold: Float = 0.8
    @Option(help: "Share of the circle's circumference on edges the pixel check needs.") var minEdgeSupport = 0.4
    @Option(help: "Exponents to try for all labels (default 0, 0.25 … 1.5).") var exponent: [Double] = []
    @Option(help: "Labels with at least this many train foods get their own exponent (0 = one exponent for all).") var perLabelMinCount = 20
    @Option(help: "Fit the density model on `predicted` boxes and coins (as analyze sees them) or `truth`.") var fit = "predicted"
    @Option(help: "Folds of the train portions the exponent is chosen on (0 = by in-sample error).") var folds = 5

    func validate() throws {
        guard FileManager.default.fileExists(atPath: data) else { throw ValidationError("no such file: \(data)") }
        guard fit == "predicted" || fit == "truth" else { throw ValidationError("--fit is predicted or truth, not \(fit)") }
        guard folds == 0 || folds >= 2 else { throw ValidationError("--folds is 0 (in-sample) or at least 2, not \(folds)") }
    }

    func run() async throws {
        let records = try DetectionRecord.load(jsonl: data)
        let train = records.filter { $0.split == "train" && ($0.coins?.count ?? 0) == 1 }
        // The folds hold out physical items: a mix photo's apple is the same apple as its single portion's.
        let items = DetectionRecord.physicalItems(records)
        @Sendable func item(_ r: DetectionRecord) -> String { r.portion.map { items[$0] ?? $0 } ?? r.image }
        let ecustfdNames = Set(records.map { URL(fileURLWithPath: $0.image).lastPathComponent })
        var negativePhotos: [String] = []
        for dir in negatives {
            var seen: [String: Int] = [:]
            for s in try TrainingSet.folders(dir) where !ecustfdNames.contains(URL(fileURLWithPath: s.path).lastPathComponent) {
                seen[s.label, default: 0] += 1
                if seen[s.label]! <= negativesPerLabel { negativePhotos.append(s.path) }
            }
        }
        let recognizers = try loadRecognizers(threads: threads, models: models)
        let size = max(recognizers[0].calibration.localizationSize, FoodRecognizer.inputSize)
        let maps = recognizers[0].calibration.fusedMapBlocks.map { "fused whole-photo maps (blocks \($0))" } ?? "\(size)-px maps"
        Output.note("train-reference: \(train.count) ECUSTFD train photos with a coin, \(negativePhotos.count) negative photos, \(maps)")
        let jobs: [(path: String, record: DetectionRecord?)] = train.map { ($0.image, $0) } + negativePhotos.map { ($0, nil) }
        let (xs, ys) = ReferenceTraining.coinCells(jobs, recognizers: recognizers) { done, total in
            if done % 250 == 0 { Output.note("train-reference: \(done)/\(total) photos") }
        }
        Output.note("train-reference: \(ys.filter { $0 == 1 }.count) coin cells, \(ys.filter { $0 == 0 }.count) background cells; fitting")
        let head = try SoftmaxHead.train(embeddings: xs, labels: ys, classes: ["background", "reference_coin"], l2: l2,
                                         holdOutFraction: 0.1, maxEpochs: 60, learningRate: 0.001)
        try head.save(to: out + "/coin-head.json")
        if let r = head.report { Output.note(String(format: "train-reference: coin head hold-out accuracy %.4f", r.holdOutAccuracy ?? 0)) }
        var model = ReferenceModel()
        model.cellThreshold = cellThreshold
        model.minEdgeSupport = minEdgeSupport
        let finder = try CoinFinder(head: head, model: model)

        // With the physical item each sample shows, so the exponent is judged on items it was not fitted on.
        let samples: [ReferenceTraining.Sample]
        if fit == "truth" {
            samples = ReferenceTraining.truthSamples(train, coinDiameterMM: model.coinDiameterMM, item: item)
        } else {
            // The recognisers as loaded (food top, cell detector, plate head: analyze's own labels and boxes) with the
            // coin finder just trained.
            let withCoin = recognizers.map { $0.with(calibration: $0.calibration, coinFinder: .some(finder)) }
            let found: Int
            (samples, found) = ReferenceTraining.predictedSamples(train, recognizers: withCoin, item: item)
            Output.note("train-reference: coin found in \(found) of \(train.count) train photos")
        }
        let exponents = exponent.isEmpty ? stride(from: 0.0, through: 1.5, by: 0.25).map { $0 } : exponent
        let (fittedModel, trial) = ReferenceModel.fit(samples: samples.map { ($0.label, $0.areaCm2, $0.grams) }, exponents: exponents,
                                                      perLabelMinCount: perLabelMinCount,
                                                      groups: folds >= 2 ? samples.map(\.item) : nil, folds: folds)
        var fitted = fittedModel
        fitted.cellThreshold = cellThreshold
        fitted.minEdgeSupport = minEdgeSupport
        fitted.note = "foodmoment dev train-reference --fit \(fit): coin head on \(xs.count) cells of \(maps) (\(ys.filter { $0 == 1 }.count) coin) "
            + "from \(train.count) ECUSTFD train photos + \(negativePhotos.count) photos without coins; k (and, where chosen, the exponent) per label "
            + "from log grams on log area_cm² over \(samples.count) foods of the ECUSTFD train split (labels with < 3 foods use fallback_k); "
            + (folds >= 2 ? "exponent chosen by MAE % on held-out portions (\(folds) folds of the train portions by a hash, a mix photo's portion with the single portions of its items): " : "exponent chosen by in-sample train MAE %: ") + trial.map { $0.exponent < 0 ? String(format: "per label → %.1f %%", $0.maePercent) : String(format: "%.2f → %.1f %%", $0.exponent, $0.maePercent) }.joined(separator: ", ") + "."
        try Output.json(fitted).write(toFile: out + "/reference.json", atomically: true, encoding: .utf8)
        print("wrote \(out)/coin-head.json and \(out)/reference.json (\(fitted.k.count) labels, fallback k \(fitted.fallbackK))")
    }
}

struct TrainCellsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "train-cells",
        abstract: "Train the per-cell food detector (background + food labels over every cell of the localisation map).",
        discussion: """
        For every training record of the detection files (SOHL plates not held out, ECUSTFD train, fruit scenes), the \
        backbone's feature map at each --sizes input (448 → 14×14 cells, 320 → 10×10; scales as augmentation), of the \
        photo and (except ECUSTFD, which has plenty) its mirror image, gives labelled cells: a cell at least half \
        covered by a box takes its label, a cell no box touches is background (the coin included), the rest is \
        skipped (or, below --background-below, background too). With calibration.json's fusedMapBlocks the map is the \
        whole-photo pass's fused one (--sizes and --aspect do not apply). Up to --max-foreground / --max-background cells per map (--ecustfd-foreground / \
        --ecustfd-background for ECUSTFD's one-food photos) train a softmax head (background first). Writes \
        OUT/cell-head.json with the box thresholds and how it was trained.

        Example:
          foodmoment dev train-cells --data ../shared/data/detection/sohl.jsonl --data ../shared/data/detection/ecustfd.jsonl \\
            --data ../shared/data/detection/fruitdet.jsonl
        """
    )

    @Option(help: "Detection JSON-lines files.") var data: [String]
    @Option(help: "Localisation input sizes to extract maps at.") var sizes: [Int] = [448, 384, 320]
    @Option(help: "Map shapes to extract: stretch (square), keep (the photo's aspect, long side = size, as calibration.json's keepAspect), or both.") var aspect = "stretch"

    @Option(help: "Foreground cells per map (SOHL, fruit scenes).") var maxForeground = 60
    @Option(help: "Background cells per map (SOHL, fruit scenes).") var maxBackground = 30
    @Option(help: "Foreground cells per map (ECUSTFD).") var ecustfdForeground = 6
    @Option(help: "Background cells per map (ECUSTFD).") var ecustfdBackground = 5
    @Option(help: "Output folder.") var out: String = "models/food-head"
    @Option(help: "Models folder (backbone).") var models: String?
    @Option(help: "Threads.") var threads = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: "L2 regularisation.") var l2: Float = 0.01
    @Option(help: "Maximum epochs.") var epochs = 40
    @Option(help: "Thresholds on a fine cell's argmax food probability; regions at each are pooled before NMS.") var minProbability: [Float] = [0.3, 0.5, 0.7]
    @Option(help: "Regions smaller than this many map cells are dropped.") var minCells = 0.5
    @Option(help: "Weight of the whole-photo head in a region's confidence (0 … 1).") var globalWeight = 0.0
    @Option(help: "The answer keeps regions with at least this confidence.") var minConfidence = 0.5
    @Option(help: "A region lying this much inside a better one of its label is dropped from the answer (1 = never).") var containedFraction = 0.7
    @Option(help: "A cell a box covers less than this share of is background rather than skipped (0 = every touched cell is skipped).") var backgroundBelow = 0.0
    @Option(help: "Cell cache: read the labelled cells from FILE when it exists, else extract and write them there.") var cache: String?

    func validate() throws {
        if data.isEmpty { throw ValidationError("give at least one --data FILE.jsonl") }
        for d in data where !FileManager.default.fileExists(atPath: d) { throw ValidationError("no such file: \(d)") }
        if minProbability.isEmpty || minProbability.contains(where: { !(0..<1).contains($0) }) {
            throw ValidationError("--min-probability values must be in 0..<1")
        }
        if sizes.isEmpty || sizes.contains(where: { $0 < 224 || $0 % 32 != 0 }) { throw ValidationError("--sizes must be multiples of 32, at least 224") }
        guard ["stretch", "keep", "both"].contains(aspect) else { throw ValidationError("--aspect is stretch, keep or both, not \(aspect)") }
    }

    var aspects: [Bool] { aspect == "both" ? [false, true] : [aspect == "keep"] }

    func run() async throws {
        var records: [DetectionRecord] = []
        for d in data { records += try DetectionRecord.load(jsonl: d) }
        let train = records.filter(CellTraining.isTraining)
        let labels = Set(train.flatMap { $0.boxes.map(\.label) }).sorted()
        let classes = ["background"] + labels
        let classIndex = Dictionary(uniqueKeysWithValues: classes.enumerated().map { ($1, $0) })
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        var xs: [[Float]] = [], ys: [Int] = []
        if let cache, let cached = try CellCache.read(cache, classes: classes) {
            (xs, ys) = cached
            Output.note("train-cells: \(xs.count) cells from \(cache)")
        } else {
            (xs, ys) = try extract(train, classIndex: classIndex)
            if let cache { try CellCache.write(cache, classes: classes, features: xs, labels: ys) }
        }
        try fit(xs, ys, classes: classes, photos: train.count)
    }

    func extract(_ train: [DetectionRecord], classIndex: [String: Int]) throws -> ([[Float]], [Int]) {
        let recognizers = try loadRecognizers(threads: threads, models: models)
        Output.note("train-cells: \(train.count) training photos, \(classIndex.count - 1) food labels, sizes \(sizes)")
        var budget = CellTraining.CellBudget()
        budget.maxForeground = maxForeground; budget.maxBackground = maxBackground
        budget.ecustfdForeground = ecustfdForeground; budget.ecustfdBackground = ecustfdBackground
        budget.backgroundBelow = backgroundBelow
        let got = CellTraining.extract(train, classIndex: classIndex, sizes: sizes, aspects: aspects, budget: budget,
                                       recognizers: recognizers) { done, total in
            if done % 250 == 0 { Output.note("train-cells: \(done)/\(total) photos") }
        }
        for f in got.failures.prefix(5) { Output.note("note: could not use \(f)") }
        return (got.features, got.labels)
    }

    func fit(_ xs: [[Float]], _ ys: [Int], classes: [String], photos: Int) throws {
        var counts = [Int](repeating: 0, count: classes.count)
        for y in ys { counts[y] += 1 }
        Output.note("train-cells: \(xs.count) cells (\(counts[0]) background); fitting")
        let head = try SoftmaxHead.train(embeddings: xs, labels: ys, classes: classes, l2: l2, holdOutFraction: 0.1,
                                         maxEpochs: epochs, learningRate: 0.001, batchSize: 64, patience: 4)
        var model = CellHeadModel(head: head)
        model.minProbability = minProbability.min() ?? 0.4
        model.minProbabilities = minProbability
        model.minCells = minCells
        model.globalWeight = globalWeight
        model.minConfidence = minConfidence
        model.containedFraction = containedFraction
        let accuracy = head.report?.holdOutAccuracy.map { String(format: "%.3f", $0) } ?? "n/a"
        model.note = "foodmoment dev train-cells: \(xs.count) cells (\(counts[0]) background) from \(photos) photos "
            + "(SOHL plates not held out, ECUSTFD train, fruit scenes) at sizes \(sizes.map(String.init).joined(separator: "/")), map shapes: \(aspect), "
            + "mirrored except ECUSTFD; cell label = box covering ≥ 50 % of the cell, background = no box touches it; "
            + "per map ≤ \(maxForeground)+\(maxBackground) cells (ECUSTFD \(ecustfdForeground)+\(ecustfdBackground)); "
            + (backgroundBelow > 0 ? "cells covered < \(backgroundBelow) count as background; " : "") + "l2 \(l2); "
            + "hold-out cell accuracy \(accuracy) (epoch \(head.report?.bestEpoch ?? 0))."
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(model).write(to: URL(fileURLWithPath: out + "/cell-head.json"))
        print("wrote \(out)/cell-head.json (\(classes.count) classes, hold-out cell accuracy \(accuracy))")
    }
}

/// The labelled cells of `train-cells` in one binary file (so thresholds and regularisation can be retried without
/// the backbone): "FMCELLS1", class count, class names, cell count, dimension, features (Float32), labels (Int32).
enum CellCache {
    static func write(_ path: String, classes: [String], features: [[Float]], labels: [Int]) throws {
        var data = Data("FMCELLS1".utf8)
        func int(_ v: Int) { withUnsafeBytes(of: Int64(v).littleEndian) { data.append(contentsOf: $0) } }
        int(classes.count)
        for c in classes { int(c.utf8.count); data.append(contentsOf: Array(c.utf8)) }
        let d = features.first?.count ?? 0
        int(features.count); int(d)
        for f in features { f.withUnsafeBytes { data.append(contentsOf: $0) } }
        for l in labels { withUnsafeBytes(of: Int32(l).littleEndian) { data.append(contentsOf: $0) } }
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// The cells, or nil when the file is absent; an error when it was made for other classes.
    static func read(_ path: String, classes: [String]) throws -> ([[Float]], [Int])? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try data.withUnsafeBytes { raw -> ([[Float]], [Int]) in
            var at = 8
            guard raw.count >= 8, String(decoding: raw[0..<8], as: UTF8.self) == "FMCELLS1" else {
                throw ValidationError("\(path) is not a train-cells cache; delete it")
            }
            func int() throws -> Int {
                guard at + 8 <= raw.count else { throw ValidationError("\(path) is truncated; delete it") }
                defer { at += 8 }
                return Int(Int64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: Int64.self)))
            }
            var names: [String] = []
            for _ in 0..<(try int()) {
                let n = try int()
                guard at + n <= raw.count else { throw ValidationError("\(path) is truncated; delete it") }
                names.append(String(decoding: raw[at..<(at + n)], as: UTF8.self)); at += n
            }
            guard names == classes else { throw ValidationError("\(path) was made for other classes; delete it") }
            let count = try int(), d = try int()
            guard at + count * d * 4 + count * 4 <= raw.count else { throw ValidationError("\(path) is truncated; delete it") }
            var xs: [[Float]] = []
            xs.reserveCapacity(count)
            for i in 0..<count {
                xs.append((0..<d).map { raw.loadUnaligned(fromByteOffset: at + (i * d + $0) * 4, as: Float.self) })
            }
            at += count * d * 4
            let ys = (0..<count).map { Int(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: at + $0 * 4, as: Int32.self))) }
            return (xs, ys)
        }
    }
}
