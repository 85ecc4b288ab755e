public import ArgumentParser
import FoodCore
import FoodVision
import Foundation
import Nutrition
import FoodMoment
import FoodRecognition
import FoodTraining

/// One recognizer per thread (the backbone keeps a per-instance arena), sharing one load's weights.
func loadRecognizers(threads: Int, models: String?) throws -> [FoodRecognizer] {
    let dir = models ?? ProcessSettings.modelsDirectory
    let db = try? ProcessSettings.loadNutrition()
    let portions = MealAnalyzer.portions(from: db)
    return try FoodRecognizer.load(modelsDirectory: dir, userDataDirectory: nil, portions: portions,
                                   inference: ProcessSettings.inference()).forWorkers(threads)
}

struct EvalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Top-1/top-5 accuracy per label on a folder of <label>/ subfolders: the head's and the foods list's.",
        discussion: """
        Runs stage 1 on every photo as `analyze` does and prints, per label and per group (dishes vs produce), \
        the food head's whole-photo top-1/top-5 and the user's view: whether the most confident food of the \
        `foods` list is the photo's label (an empty or unknown answer counts as wrong). Also the worst labels, \
        the most frequent confusions, and how many photos the unknown/not-food threshold would reject.

        Cross-source evaluation: --source keeps only photos of the named sources (from the MANIFEST.csv beside \
        the data folder); pair it with a head trained without them (`dev train --exclude-source`). See \
        docs/recognition.md for the protocol.

        Examples:
          foodmoment dev eval --data ../shared/data/images/dev
          foodmoment dev eval --data ../shared/data/images/dev --json > eval.json
          foodmoment dev eval --data ../shared/data/images/train --data ../shared/data/images/dev --source grocerystore \\
              --models /tmp/loso-grocerystore \\
              --labels apple,banana,kiwi,lemon,mango,orange,peach,pear,plum,tomato
        """
    )

    @Option(help: "Folder with one subfolder of photos per label (repeat for several, e.g. train and dev of one source).") var data: [String]
    @Option(help: "Threads.") var threads = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: "Models folder.") var models: String?
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "Only the head's whole-photo answer (skips the localisation pass and the foods list).") var headOnly = false
    @Option(help: "Only photos of these sources (comma-separated names from MANIFEST.csv).") var source: String?
    @Option(help: "Leave out photos of these sources (comma-separated).") var excludeSource: String?
    @Option(help: "Only these labels (comma-separated).") var labels: String?
    @Option(help: "Only fold K of N (K/N): photos whose file-name hash is K mod N — choose settings on one fold, report another.") var fold: String?
    @OptionGroup var passes: PassOptions

    func run() async throws {
        guard !data.isEmpty else { throw ValidationError("give at least one --data FOLDER of <label>/ subfolders") }
        var samples: [TrainingSample] = []
        for folder in data { samples += try TrainingSet.folders(folder, sources: commaSet(source), excluding: commaSet(excludeSource)) }
        let wanted = commaSet(labels)
        if !wanted.isEmpty { samples = samples.filter { wanted.contains($0.label) } }
        if let fold { samples = try inFold(samples, fold) }
        guard !samples.isEmpty else { throw ValidationError("no photos left in \(data.joined(separator: ", ")) after --source / --exclude-source / --labels") }
        let recognizers = try passes.apply(loadRecognizers(threads: threads, models: models))
        let progress = ProgressLine(total: samples.count)
        let report = ClassificationEvaluator(recognizers: recognizers)
            .evaluate(samples, calibration: recognizers[0].calibration, foods: !headOnly) { _, _ in progress.advance("eval") }
        progress.finish()
        if json { print(try Output.json(report)); return }
        print(String(format: "%d photos (%d failed to decode): head top-1 %.1f %%, top-5 %.1f %%", report.photos, report.failures,
                     report.top1 * 100, report.top5 * 100)
              + (report.foodsTop1.map { String(format: "; foods list top-1 %.1f %%", $0 * 100) } ?? ""))
        for g in report.top1ByGroup.keys.sorted() {
            print(String(format: "  %-8@ head top-1 %.1f %%, top-5 %.1f %%", g, report.top1ByGroup[g]! * 100, report.top5ByGroup[g]! * 100)
                  + (report.foodsTop1ByGroup?[g].map { String(format: "; foods list top-1 %.1f %%", $0 * 100) } ?? ""))
        }
        if let lost = report.foodsLost, let gained = report.foodsGained {
            print("  foods list vs head: \(lost) photos right by the head but not the foods list, \(gained) the other way round")
        }
        print(String(format: "  rejected as unknown at threshold %.2f: %.1f %% of these food photos", report.unknownThreshold, report.rejectedRate * 100))
        print("\nlabel                    group    n   top-1  top-5  foods  most confused with")
        for r in report.labels {
            print(Output.pad(r.label, 24) + " " + Output.pad(r.group, 7) + Output.padLeft("\(r.count)", 4)
                  + Output.padLeft(String(format: "%.0f%%", r.top1 * 100), 8) + Output.padLeft(String(format: "%.0f%%", r.top5 * 100), 7)
                  + Output.padLeft(r.foodsTop1.map { String(format: "%.0f%%", $0 * 100) } ?? "-", 7)
                  + "  " + (r.mostConfusedWith ?? ""))
        }
        print("\nworst five: " + report.labels.sorted { $0.top1 < $1.top1 || ($0.top1 == $1.top1 && $0.label < $1.label) }
            .prefix(5).map { String(format: "%@ %.0f%%", $0.label, $0.top1 * 100) }.joined(separator: ", "))
        print("most frequent confusions: " + report.confusions.prefix(8).map { "\($0.truth)→\($0.predicted) ×\($0.count)" }.joined(separator: ", "))
    }
}

struct CalibrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calibrate",
        abstract: "Choose the unknown/not-food threshold from food photos and non-food photos.",
        discussion: """
        The threshold on the head's best probability is set so that at most --max-food-rejected of the food \
        photos under --dev are rejected; the command then reports how many --not-food photos it rejects, and \
        writes models/food-head/calibration.json. Synthetic non-food images (noise, flat colours, gradients, \
        stripes, checkerboards) are added to --not-food unless --no-synthetic.

        Example:
          foodmoment dev calibrate --dev ../shared/data/images/dev --not-food ../shared/data/barcodes
        """
    )

    @Option(help: "Folder of <label>/ food photos.") var dev: String
    @Option(help: "Folders of photos that show no food.") var notFood: [String] = []
    @Option(help: "Largest share of food photos that may be rejected.") var maxFoodRejected = 0.01
    @Option(help: "Leave out --dev photos of these sources (comma-separated, from the MANIFEST.csv beside --dev).") var excludeSource: String?
    @Flag(help: "Do not add synthetic non-food images.") var noSynthetic = false
    @Option(help: "Threads.") var threads = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: "Models folder.") var models: String?
    @Flag(help: "Report only; do not write calibration.json.") var dryRun = false

    func run() async throws {
        let recognizers = try loadRecognizers(threads: threads, models: models)
        let evaluator = ClassificationEvaluator(recognizers: recognizers)
        let food = evaluator.scores(try TrainingSet.folders(dev, sources: [], excluding: commaSet(excludeSource))).compactMap { $0 }.map { ($0.ranked.first?.probability ?? 0, $0.foodContext) }
        let negatives = FileWalker().expand(notFood).compactMap { item -> TrainingSample? in
            if case .photo(let p) = item { return TrainingSample(path: p, label: "not_food") } else { return nil }
        }
        var notFoodScores = evaluator.scores(negatives).compactMap { $0 }.map { ($0.ranked.first?.probability ?? 0, $0.foodContext) }
        if !noSynthetic {
            for image in SyntheticImages.all() {
                let e = try recognizers[0].embed(image)
                notFoodScores.append((try recognizers[0].head.predict(e.embedding).first?.probability ?? 0, e.foodContext))
            }
        }
        guard !food.isEmpty else { throw ValidationError("no food photos decoded under \(dev)") }
        // Two thresholds (head probability, food-context mass): over a grid of food-context thresholds, the head
        // threshold is the largest that keeps the food photos rejected within budget; keep the pair that rejects
        // the most non-food images.
        // A third, the head probability that overrides a low food context (a litchi the ImageNet classes have no
        // name for), is tried from a short list; among equally good triples the one that overrides most wins.
        func saved(_ head: Float, _ ov: Float?) -> Bool { ov.map { head >= $0 } ?? false }
        func rejected(_ xs: [(Float, Float)], _ th: Float, _ tf: Float, _ ov: Float?) -> Int {
            xs.filter { x in x.0 < th || (x.1 < tf && !saved(x.0, ov)) }.count
        }
        let budget = Int((Double(food.count) * maxFoodRejected).rounded(.down))
        var best: (th: Float, tf: Float, ov: Float?, neg: Int) = (0, 0, nil, -1)
        let overrides: [Float?] = [nil, 0.99, 0.97, 0.95, 0.9, 0.85, 0.8]
        for ov in overrides {
            // Food photos the context threshold can reject: those the override does not save.
            let exposed = food.filter { x in !saved(x.0, ov) }.map(\.1).sorted()
            for tf in [Float(0)] + exposed.prefix(budget + 1) {
                let remaining = food.filter { x in x.1 >= tf || saved(x.0, ov) }.map(\.0).sorted()
                let allowed = budget - (food.count - remaining.count)
                guard allowed >= 0 else { continue }
                let th = allowed < remaining.count ? remaining[allowed] : 1
                let neg = rejected(notFoodScores, th, tf, ov)
                if neg >= best.neg { best = (th, tf, ov, neg) }
            }
        }
        let threshold = best.th, contextThreshold = best.tf, override = best.ov
        let foodRejected = Double(rejected(food, threshold, contextThreshold, override)) / Double(food.count)
        let notFoodRejected = notFoodScores.isEmpty ? 0
            : Double(rejected(notFoodScores, threshold, contextThreshold, override)) / Double(notFoodScores.count)
        print(String(format: "head threshold %.3f, food-context threshold %.4f (overridden at head %@): rejects %.1f %% of %d food photos and %.1f %% of %d non-food images",
                     threshold, contextThreshold, override.map { String(format: "%.2f", $0) } ?? "never",
                     foodRejected * 100, food.count, notFoodRejected * 100, notFoodScores.count))
        let headOnly = Double(rejected(notFoodScores, food.map(\.0).sorted()[min(budget, food.count - 1)], 0, nil)) / Double(max(1, notFoodScores.count))
        print(String(format: "(head probability alone at the same food budget would reject %.1f %% of the non-food images)", headOnly * 100))
        guard !dryRun else { return }
        let dir = (models ?? ProcessSettings.modelsDirectory) + "/food-head"
        var cal = recognizers[0].calibration
        cal.unknownThreshold = threshold
        cal.foodContextThreshold = contextThreshold
        cal.confidentFoodProbability = override
        cal.note = String(format: "foodmoment dev calibrate: %.1f%% of %d dev food photos rejected, %.1f%% of %d non-food images rejected",
                          foodRejected * 100, food.count, notFoodRejected * 100, notFoodScores.count)
        try Output.json(cal).write(toFile: dir + "/calibration.json", atomically: true, encoding: .utf8)
        print("wrote \(dir)/calibration.json")
    }
}

/// Generated images that show no food: the easy negatives every food detector must reject.
enum SyntheticImages {
    static func all() -> [RGBImage] {
        var rng = SystemRandomNumberGenerator()
        var out: [RGBImage] = []
        for seed in 0..<40 {
            var img = RGBImage(width: 256, height: 192)
            let kind = seed % 5
            let c1 = (UInt8(truncatingIfNeeded: seed * 53), UInt8(truncatingIfNeeded: seed * 97), UInt8(truncatingIfNeeded: seed * 29))
            for y in 0..<192 {
                for x in 0..<256 {
                    switch kind {
                    case 0: img[x, y] = (UInt8.random(in: 0...255, using: &rng), UInt8.random(in: 0...255, using: &rng), UInt8.random(in: 0...255, using: &rng))
                    case 1: img[x, y] = c1
                    case 2: img[x, y] = (UInt8(x), UInt8(y), c1.2)
                    case 3: img[x, y] = (x / (4 + seed % 7)) % 2 == 0 ? (20, 20, 20) : (235, 235, 235)
                    default: img[x, y] = ((x / 16 + y / 16) % 2 == 0) ? c1 : (255 &- c1.0, 255 &- c1.1, 255 &- c1.2)
                    }
                }
            }
            out.append(img)
        }
        return out
    }
}

struct EvalDetectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval-detect",
        abstract: "mAP@0.5 of the food boxes, and grams error where grams are known, on detection JSON-lines files.",
        discussion: """
        Runs `analyze`'s recognition on every image of the files (format of ../shared/data/detection) and reports \
        per subset: SOHL plates held out of training vs trained on, ECUSTFD train/dev, fruit scenes.

        Examples:
          foodmoment dev eval-detect --data ../shared/data/detection/sohl.jsonl
          foodmoment dev eval-detect --data ../shared/data/detection/ecustfd.jsonl --json
        """
    )

    @Option(help: "Detection JSON-lines files.") var data: [String]
    @Option(help: "Threads.") var threads = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: "Models folder.") var models: String?
    @Flag(help: "Print JSON.") var json = false
    @OptionGroup var passes: PassOptions

    func validate() throws {
        if data.isEmpty { throw ValidationError("give at least one --data FILE.jsonl") }
        for d in data where !FileManager.default.fileExists(atPath: d) { throw ValidationError("no such file: \(d)") }
    }

    func run() async throws {
        var records: [DetectionRecord] = []
        for d in data { records += try DetectionRecord.load(jsonl: d) }
        let recognizers = try passes.apply(loadRecognizers(threads: threads, models: models))
        let progress = ProgressLine(total: records.count)
        let report = DetectionEvaluator(recognizers: recognizers).evaluate(records) { _, _ in progress.advance("eval-detect") }
        progress.finish()
        if json { print(try Output.json(report)); return }
        for f in report.failures.prefix(10) { Output.note("note: could not analyse \(f)") }
        if report.failures.count > 10 { Output.note("note: … and \(report.failures.count - 10) more") }
        print("subset                        images  boxes  mAP@0.5  grams MAE / median")
        for s in report.subsets {
            let grams = s.gramsMAEPercent.map { String(format: "%.1f %% / %.1f %% (%d)", $0, s.gramsMedianPercent ?? 0, s.gramsCount) } ?? "—"
            print(Output.pad(s.name, 30) + Output.padLeft("\(s.images)", 6) + Output.padLeft("\(s.boxes)", 7)
                  + Output.padLeft(String(format: "%.3f", s.mAP50), 9) + "  " + grams)
            for (source, e) in s.gramsBySource.sorted(by: { $0.key < $1.key }) {
                print("    grams from " + Output.pad(source, 17) + String(format: "MAE %.1f %%, median %.1f %% (%d foods)", e.maePercent, e.medianPercent, e.count))
            }
            if let c = s.coin {
                print("    coin: found \(c.found) of \(c.photosWithCoin) photos with a coin, \(c.wrong) elsewhere"
                      + (c.medianDiameterErrorPercent.map { String(format: ", median diameter error %.1f %%", $0) } ?? ""))
            }
        }
    }
}

struct EvalGateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval-gate",
        abstract: "Choose or check the localisation gate: what skipping the localisation pass would change, photo by photo.",
        discussion: """
        Runs every photo through stage 1 twice — with the localisation pass and with boxes from the whole-photo \
        7×7 map (what a photo the gate lets through gets) — and records the gate's evidence (the head's best \
        probability, the plate head, the coin head's highest cell, the foods the cell detector finds on the 7×7 \
        map). Then, for each gate of a grid (or the one of --gate / calibration.json), per set: how many photos \
        would skip the pass, and of those how many keep the same foods, lose a coin, keep their box and grams. \
        Choose thresholds on training photos, report on held-out ones.

        Examples:
          foodmoment dev eval-gate --images ../shared/data/images/train --fold 0/4 --detection ../shared/data/detection/ecustfd.jsonl
          foodmoment dev eval-gate --images ../shared/data/images/dev --gate 0.8,0.1 --csv /tmp/gate.csv
        """
    )

    @Option(help: "Folder with one subfolder of photos per label (repeatable).") var images: [String] = []
    @Option(help: "Detection JSON-lines files (repeatable).") var detection: [String] = []
    @Option(help: "Only fold K of N of the --images photos (K/N, by file-name hash, as `dev eval --fold`).") var fold: String?
    @Option(help: "Only detection records of these subsets (comma-separated names as eval-detect prints them).") var subsets: String?
    @Option(help: "Threads.") var threads = ProcessInfo.processInfo.activeProcessorCount
    @Option(help: "Models folder.") var models: String?
    @Option(help: "Score only this gate (TOP,COIN) instead of the grid (default: the grid, plus calibration.json's gate).") var gate: String?
    @Option(help: "Write one CSV row per photo (evidence and both answers) to FILE.") var csv: String?
    @Flag(help: "Print JSON.") var json = false

    /// Before any photo is analysed.
    func validate() throws { _ = try gateToScore() }

    /// `--gate`: the one gate to score (nil = the grid).
    func gateToScore() throws -> LocalizationGate? {
        guard let gate else { return nil }
        guard let one = try parseGate(gate) else { throw ValidationError("--gate of eval-gate is a gate to score (TOP,COIN), not off") }
        return one
    }

    func run() async throws {
        var photos: [(path: String, set: String)] = []
        for folder in images {
            var samples = try TrainingSet.folders(folder, sources: [], excluding: [])
            if let fold { samples = try inFold(samples, fold) }
            photos += samples.map { ($0.path, "images (\(LabelGroup.group(of: $0.label)))") }
        }
        let wanted = commaSet(subsets)
        for file in detection {
            for r in try DetectionRecord.load(jsonl: file) where wanted.isEmpty || wanted.contains(DetectionEvaluator.subsetName(r)) {
                photos.append((r.image, DetectionEvaluator.subsetName(r)))
            }
        }
        guard !photos.isEmpty else { throw ValidationError("give --images FOLDER and/or --detection FILE.jsonl") }
        let recognizers = try loadRecognizers(threads: threads, models: models)
        let progress = ProgressLine(total: photos.count)
        let rows = GateProbe(recognizers: recognizers).run(photos) { _, _ in progress.advance("eval-gate") }
        progress.finish()
        let ok = rows.compactMap { $0 }
        if ok.count < rows.count { Output.note("note: \(rows.count - ok.count) photos could not be analysed") }
        if let csv {
            var text = "path,set,top_probability,plate,coin_probability,whole_map_foods,labels,unknown,whole_map_labels,whole_map_unknown,box_iou,grams_ratio,box_area,whole_map_box_area,coin\n"
            for r in ok {
                let fields: [String] = [r.path, r.set, "\(r.topProbability)", "\(r.plate)", "\(r.coinProbability)", "\(r.wholeMapFoods)",
                                        r.labels.joined(separator: " "), "\(r.unknown)", r.wholeMapLabels.joined(separator: " "),
                                        "\(r.wholeMapUnknown)", r.boxIoU.map { "\($0)" } ?? "", r.gramsRatio.map { "\($0)" } ?? "",
                                        r.boxArea.map { "\($0)" } ?? "", r.wholeMapBoxArea.map { "\($0)" } ?? "", "\(r.coin)"]
                text += ResultCSV.line(fields) + "\n"
            }
            try Data(text.utf8).write(to: URL(fileURLWithPath: csv))
        }
        var gates: [LocalizationGate] = []
        if let one = try gateToScore() {
            gates = [one]
        } else {
            for top: Float in [0.5, 0.6, 0.7, 0.8, 0.9, 0.95] {
                for coin: Float in [0.02, 0.05, 0.1, 0.2, 0.4] { gates.append(LocalizationGate(minTopProbability: top, maxCoinProbability: coin)) }
            }
            if let shipped = recognizers[0].calibration.localizationGate { gates.append(shipped) }
        }
        let scored = gates.map { g in (gate: g, scores: GateProbe.score(ok, gate: g)) }
        if json {
            struct Entry: Encodable { var minTopProbability: Float; var maxCoinProbability: Float; var sets: [GateProbe.Score] }
            print(try Output.json(scored.map { Entry(minTopProbability: $0.gate.minTopProbability, maxCoinProbability: $0.gate.maxCoinProbability, sets: $0.scores) }))
            return
        }
        print("gate (top, coin)  set                            photos  skipped  same foods  coins lost  median IoU  grams ratio  grams ±20 %")
        for (g, scores) in scored {
            for s in scores {
                let pct = { (n: Int, of: Int) in of == 0 ? "—" : String(format: "%.1f %%", 100 * Double(n) / Double(of)) }
                print(Output.pad(String(format: "%.2f, %.2f", g.minTopProbability, g.maxCoinProbability), 18)
                      + Output.pad(s.set, 30) + Output.padLeft("\(s.photos)", 7)
                      + Output.padLeft(pct(s.skipped, s.photos), 9) + Output.padLeft(pct(s.sameFoods, s.skipped), 12)
                      + Output.padLeft("\(s.coinsLost)", 12) + Output.padLeft(s.medianIoU.map { String(format: "%.2f", $0) } ?? "—", 12)
                      + Output.padLeft(s.medianGramsRatio.map { String(format: "%.2f", $0) } ?? "—", 13)
                      + Output.padLeft(pct(s.gramsWithin20, s.gramsCompared), 13))
            }
        }
    }
}

/// Overrides of stage 1's pass structure and localiser, for measuring the choices in `calibration.json`.
struct PassOptions: ParsableArguments {
    @Option(help: "Whole-photo embedding from: mirror_pair, single, localisation (default: calibration.json).") var embedding: EmbeddingSource?
    @Option(help: "Localization pass input size (0 = reuse the 224 pass; default: calibration.json).") var localizationSize: Int?
    @Option(help: "Boxes from: cells, cam (default: calibration.json).") var localizer: Localizer?
    @Option(help: "Cell head JSON to use instead of models/food-head/cell-head.json.") var cellHead: String?
    @Option(help: "Localisation pass shape: keep (the photo's aspect) or stretch (a square) (default: calibration.json).") var aspect: String?
    @Flag(help: "Every region the cell detector ranks, without merging them into one answer per food (the detector's own mAP).") var rawBoxes = false
    @Flag(help: "Ignore coins: grams as for a photo without one (the coin finder off).") var noCoin = false
    @Option(help: "Photo-portions JSON to use instead of models/food-head/photo-portions.json ('none': household portions).") var photoPortions: String?
    @Option(help: "Localisation gate: off, or TOP,COIN — skip the localisation pass when the head's best probability is at least TOP, no cell of the whole-photo map has a coin probability of COIN, no plate, one food at most (default: calibration.json).") var gate: String?

    func validate() throws {
        if let a = aspect, !["keep", "stretch"].contains(a) { throw ValidationError("--aspect is keep or stretch, not \(a)") }
        _ = try parsedGate()
        if let s = localizationSize, s != 0 && (s < 224 || s % 32 != 0) {
            throw ValidationError("--localization-size is 0 or a multiple of 32 of at least 224, not \(s)")
        }
    }

    /// `--gate`: nil = as calibration.json; `.some(nil)` = off.
    func parsedGate() throws -> LocalizationGate?? {
        guard let gate else { return nil }
        return .some(try parseGate(gate))
    }

    func apply(_ recognizers: [FoodRecognizer]) throws -> [FoodRecognizer] {
        let gateChoice = try parsedGate()
        var detector: CellDetector??
        if let cellHead {
            let data = try Data(contentsOf: URL(fileURLWithPath: cellHead))
            detector = .some(try CellDetector(model: JSONDecoder().decode(CellHeadModel.self, from: data)))
        }
        var photo: PhotoPortionModel??
        if let photoPortions {
            photo = photoPortions == "none" ? .some(nil)
                : .some(try JSONDecoder().decode(PhotoPortionModel.self, from: Data(contentsOf: URL(fileURLWithPath: photoPortions))))
        }
        return recognizers.map { r in
            var c = r.calibration
            if let embedding { c.embeddingSource = embedding }
            if let localizationSize { c.localizationSize = localizationSize }
            if let localizer { c.localizer = localizer }
            if rawBoxes { c.consolidate = false }
            if let aspect { c.keepAspect = aspect == "keep" }
            if let gateChoice { c.localizationGate = gateChoice }
            return r.with(calibration: c, cellDetector: detector, coinFinder: noCoin ? .some(nil) : nil, photoPortions: photo)
        }
    }
}

/// `--fold K/N`: the samples whose file-name hash is K mod N (choose settings on one fold, report another).
func inFold(_ samples: [TrainingSample], _ fold: String) throws -> [TrainingSample] {
    let parts = fold.split(separator: "/").compactMap { UInt64($0) }
    guard parts.count == 2, parts[1] > 0, parts[0] < parts[1] else { throw ValidationError("--fold is K/N with 0 ≤ K < N, not \(fold)") }
    return samples.filter { SplitMix64.fnv1a(($0.path as NSString).lastPathComponent) % parts[1] == parts[0] }
}

/// `--gate`: `off` (nil) or `TOP,COIN`, two probabilities.
func parseGate(_ text: String) throws -> LocalizationGate? {
    if text == "off" { return nil }
    let parts = text.split(separator: ",").compactMap { Float($0.trimmingCharacters(in: .whitespaces)) }
    guard parts.count == 2, parts.allSatisfy({ (0...1).contains($0) }) else {
        throw ValidationError("--gate is off or TOP,COIN (two probabilities, e.g. 0.8,0.1), not \(text)")
    }
    return LocalizationGate(minTopProbability: parts[0], maxCoinProbability: parts[1], note: "--gate \(text)")
}

/// `a,b , c` → ["a", "b", "c"]; nil or empty → [].
func commaSet(_ value: String?) -> Set<String> {
    Set((value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
}

extension EmbeddingSource: ExpressibleByArgument {}
extension Localizer: ExpressibleByArgument {}
extension InferencePrecision: ExpressibleByArgument {}
