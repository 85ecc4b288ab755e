import ArgumentParser
import FoodCore
import FoodVision
import Foundation
import ImageCodecs
import MealStore
import Nutrition
import FoodMoment
import FoodRecognition
import FoodTraining

struct AnalyzeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Analyse meal photos: files and folders (walked recursively).",
        discussion: """
        Per photo: decode (format from the content, not the name; EXIF orientation applied; JPEGs decoded at the \
        smallest DCT scale that still feeds the model), then the foods with confidence, box, grams (and where \
        the grams came from) and nutrition from the bundled tables. A photo that shows no food we know is \
        reported as unknown. Every file is accounted for in every output format, with a status: ok, unknown, \
        decoded, failed or skipped. A file named like a photo (.jpg .jpeg .png .heic .heif .webp, any case) or \
        starting like an image is analysed, and a damaged, empty, truncated, oversized or missing one is \
        failed with its reason while the rest of the batch goes on; other files inside folders are skipped \
        (listed with the reason, not counted as failures).

        Examples:
          foodmoment analyze samples/
          foodmoment analyze lunch.jpg dinner.png --json
          foodmoment analyze ~/Photos --json > results.json
          foodmoment analyze ~/Photos --decode-only
          foodmoment analyze ~/Photos --precision fp32   the reference arithmetic
          foodmoment analyze ~/Photos --log            also merge into the meal diary
          foodmoment analyze copied/ --log --date 2026-11-24 --time 19:30   photos without EXIF time
          foodmoment analyze /corpus --ndjson --shard 3/8 > part-3.ndjson
          foodmoment analyze /corpus --ndjson --shard auto > part-$JOB_COMPLETION_INDEX.ndjson   (an array job; see deploy/)

        Resuming: every finished photo is kept in a journal (in the meal store) under its content hash, so a run \
        stopped at any moment (Ctrl-C, kill -9, a crash) and started again skips what was done, prints its stored \
        result, and never logs a photo twice. --force analyses everything again; --no-journal keeps nothing.

        The diary (--log): photos of the same meal type taken within 45 minutes on the same day join one meal, \
        but only when their time can be trusted (EXIF DateTimeOriginal, or --time): a photo that only has a file \
        time (copied, downloaded, screenshots) is a meal of its own. A photo with no food we know is logged as an \
        "Unrecognised photo" meal (add its foods with `foodmoment meal edit`). A photo whose meal you deleted \
        stays deleted (--force logs it again).

        Exit codes: 0 no photo failed, 1 some failed (the others were processed), 2 usage error, 130 interrupted.
        """
    )

    @Argument(help: "Photos or folders (walked recursively).")
    var paths: [String]

    @Flag(help: "Print one JSON document (an array of per-file results) on stdout, streamed as photos finish.")
    var json = false

    @Flag(help: "Print one JSON object per file per line (NDJSON) on stdout, as photos finish.")
    var ndjson = false

    @Option(help: ArgumentHelp("Also write one CSV row per food (one per file without foods) to this file.", valueName: "file"))
    var csv: String?

    @Flag(help: "Merge the results into meal records in the meal store (the diary): see `foodmoment meal list`.")
    var log = false

    @Option(help: ArgumentHelp("The meal store (default: meals.sqlite in your data folder, see $FOODMOMENT_HOME).", valueName: "file"))
    var db: String?

    @Option(help: ArgumentHelp("Write each photo with its boxes, labels, grams and kcal drawn on it (JPEG, longest side ≤ 1600 px) into this folder.", valueName: "dir"))
    var annotate: String?

    @Flag(help: "Analyse again even photos finished in an earlier run (their diary foods are replaced; photos whose meal was deleted are logged again).")
    var force = false

    @Option(help: ArgumentHelp("With --log: the time these photos were taken, instead of their EXIF or file time: HH:MM (today, or on --date), 'YYYY-MM-DD HH:MM' or ISO 8601.", valueName: "time"))
    var time: String?

    @Option(help: ArgumentHelp("With --log and --time: the day of --time HH:MM (YYYY-MM-DD, today, yesterday).", valueName: "day"))
    var date: String?

    @Flag(help: "With --log: every photo becomes a meal of its own (no merging by time).")
    var noMerge = false

    @Flag(help: "Do not read or write the batch journal (no resume, nothing stored).")
    var noJournal = false

    @Option(help: ArgumentHelp("Process only shard K of N (K = 0…N-1): a deterministic 1/N of the files, by path. `auto` takes K and N from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, FOODMOMENT_SHARD_COUNT) or a Slurm job array (SLURM_ARRAY_TASK_*).", valueName: "K/N|auto"))
    var shard: String?

    @Option(parsing: .unconditional, help: "Refuse images with more pixels than this (checked before any pixel is allocated).")
    var maxPixels: Int = 100_000_000

    @Option(parsing: .unconditional, help: "Refuse files larger than this many bytes.")
    var maxFileBytes: Int = 256 << 20

    @Option(parsing: .unconditional, help: ArgumentHelp("Per-photo decode time budget in seconds: a photo that takes longer is reported (resource_limit) and skipped. Recognition runs on a fixed-size input and cannot run away.", valueName: "seconds"))
    var timeBudget: Double = 10

    @Option(parsing: .unconditional, help: "Decode JPEGs at the smallest DCT scale whose shorter side is at least this (0 = full size).")
    var decodeSize: Int = 224

    @Flag(help: "Accept truncated/corrupt JPEG data (libjpeg's recovered pixels) and report it as a warning.")
    var acceptDamaged = false

    @Flag(help: "Only decode (no recognition, no nutrition, no journal).")
    var decodeOnly = false

    @Option(help: "Models folder (default: the bundled models/, or $FOODMOMENT_MODELS).")
    var models: String?

    @Option(help: ArgumentHelp("Nutrition database folder (default: the bundled nutrition-db/, or $FOODMOMENT_NUTRITION_DB).", valueName: "dir"))
    var nutritionDb: String?

    @Option(help: ArgumentHelp("Arithmetic of the network's 1x1 convolutions: fp32 (the reference), bf16 (AVX-512 BF16) or int8 (AVX-512 VNNI, its narrow layers in BF16). Default: int8 where the CPU has AVX-512 VNNI and BF16, else bf16 where it has BF16, else fp32 (or $FOODMOMENT_PRECISION). A CPU without the instructions falls back (to fp32 at worst).", valueName: "fp32|bf16|int8"))
    var precision: InferencePrecision?

    @Option(parsing: .unconditional, help: "Photos analysed at once (one model instance each).")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @OptionGroup(title: "LLM refinement (optional)") var llm: RefineOptions

    func validate() throws {
        if paths.isEmpty { throw ValidationError("name at least one photo or folder") }
        if json && ndjson { throw ValidationError("choose one of --json and --ndjson") }
        if maxPixels <= 0 { throw ValidationError("--max-pixels must be positive") }
        if maxFileBytes <= 0 { throw ValidationError("--max-file-bytes must be positive") }
        if decodeSize < 0 { throw ValidationError("--decode-size must be 0 or more") }
        if threads < 1 { throw ValidationError("--threads must be at least 1") }
        if !(timeBudget > 0) { throw ValidationError("--time-budget must be a positive number of seconds") }
        if shard == "auto" {
            if case .failure(let error) = Shard.fromScheduler(environment: ProcessInfo.processInfo.environment) {
                throw ValidationError(error.description)
            }
        } else if let shard, Shard(parsing: shard) == nil {
            throw ValidationError("--shard takes K/N with 0 ≤ K < N, e.g. --shard 0/4, or auto (got \(shard))")
        }
        if annotate != nil && decodeOnly { throw ValidationError("--annotate needs recognition: drop --decode-only") }
        if log && (noJournal || decodeOnly) { throw ValidationError("--log needs recognition and the store: drop --no-journal / --decode-only") }
        if !log && (time != nil || date != nil || noMerge) { throw ValidationError("--time, --date and --no-merge are for the diary: add --log") }
        if date != nil && time == nil { throw ValidationError("--date needs --time HH:MM (when the photos were taken)") }
        _ = try givenTime()
    }

    func run() async throws {
        // One arithmetic for the models and the journal key: --precision, else FOODMOMENT_PRECISION, else the CPU's best.
        let inference = ProcessSettings.inference(precision: precision)
        var shardFilter = shard.flatMap(Shard.init(parsing:))
        if shard == "auto", case .success(let (found, scheduler)) = Shard.fromScheduler(environment: ProcessInfo.processInfo.environment) {
            shardFilter = found
            Output.note("note: shard \(found) from the \(scheduler.rawValue)")
        }
        // A path that does not exist is a photo that fails ("no such file"), so the others are still analysed.
        var photos: [String] = []
        var skipped: [(path: String, reason: String)] = []
        for root in paths {
            for item in FileWalker().expand([root]) {
                switch item {
                case .photo(let path):
                    if let s = shardFilter, !s.contains(relativePath: Shard.relativePath(path, root: root)) { continue }
                    photos.append(path)
                case .skipped(let path, let reason):
                    if let s = shardFilter, !s.contains(relativePath: Shard.relativePath(path, root: root)) { continue }
                    skipped.append((path, reason))
                }
            }
        }
        if llm.explainNetwork { try llm.explain(photoCount: photos.count); return }
        let decoder = PhotoDecoder(options: DecodeOptions(
            minShortSide: decodeSize > 0 ? decodeSize : nil, maxPixels: maxPixels, maxFileBytes: maxFileBytes,
            acceptDamagedData: acceptDamaged, timeBudget: .milliseconds(Int64(timeBudget * 1000))))
        // The first photo is read and decoded on the other core while this thread loads the tables and the model.
        let firstPhoto = decodeOnly || photos.isEmpty ? nil : Background(name: "first-photo") { [path = photos[0]] in
            EarlyDecode(path: path, decoder: decoder)
        }
        var analyzers: [MealAnalyzer] = []
        let workers = max(1, min(threads, photos.count))
        let modelsDir = models ?? ProcessSettings.modelsDirectory
        let nutritionDir = nutritionDb.map { URL(fileURLWithPath: $0) } ?? ProcessSettings.nutritionDirectory
        // The settings key hashes the food head's files (~2.5 MB, ~2 ms): on the other core while the model loads.
        let (keyModels, keyNutrition, keyUser, keyDecode, keyDamaged) = (modelsDir, nutritionDir.path, ProcessSettings.userDataDirectory,
                                                                         decodeSize, acceptDamaged)
        let settingsKey = Background(name: "settings-key") {
            BatchSettings.key(modelsDirectory: keyModels, nutritionDirectory: keyNutrition, userDataDirectory: keyUser,
                              decodeSize: keyDecode, acceptDamaged: keyDamaged, precision: inference.precision)
        }
        if !decodeOnly && !photos.isEmpty {
            let nutrition: NutritionDatabase?
            do {
                nutrition = try ProcessSettings.loadNutrition(nutritionDir)
            } catch {
                Output.note("note: no nutrition numbers: \(error)")
                nutrition = nil
            }
            do {
                let portions = MealAnalyzer.portions(from: nutrition), userData = ProcessSettings.userDataDirectory
                let recognizers = try FoodRecognizer.load(modelsDirectory: modelsDir, userDataDirectory: nil, portions: portions,
                                                          inference: inference)
                    .forWorkers(workers)
                // Foods the user taught: a store that cannot be read is named, and the photos analysed without it.
                var taught: PrototypeMatcher?
                do { taught = try PersonalFoods(directory: userData).matcherIfAny(dimension: recognizers[0].head.dimension) } catch {
                    Output.note("warning: \(error.description); analysing without them")
                }
                analyzers = recognizers.map { MealAnalyzer(decoder: decoder, recognizer: $0, nutrition: nutrition, taughtFoods: taught) }
            } catch {
                Output.error("cannot load the recognition model: \(error)\n(run with --decode-only to only decode, or `foodmoment dev train` to build models/food-head)")
                throw Exit.failed
            }
        }
        let refiner = decodeOnly ? nil : try llm.makeRefiner(nutrition: analyzers.first?.nutrition)
        var journal: MealStore.Journal?
        if !decodeOnly && !noJournal && !photos.isEmpty {
            do {
                journal = try openJournal()
            } catch {
                // Without --log the journal is a convenience: analyse anyway, say that nothing will resume.
                if log { Output.error("\(error)"); throw Exit.failed }
                Output.note("note: \(error); analysing without a journal (this run cannot be resumed)")
            }
        }
        var settings = settingsKey.value
        if let refiner { settings += "+" + refiner.identity }
        let llmOptions = llm
        var refineStage: (@Sendable ([AnalyzedPhoto]) async -> [PhotoResult])?
        if let refiner {
            refineStage = { photos in await llmOptions.refine(photos, with: refiner) }
        }
        let runner = BatchRunner(analyzers: analyzers, decoder: decoder, journal: journal,
                                 options: .init(settings: settings, force: force, log: log, givenTime: try givenTime()),
                                 refine: refineStage)
        runner.firstPhoto = firstPhoto
        if let annotate {
            let writer = try AnnotationWriter(directory: annotate)
            runner.output = { writer.write($0) }
        }
        var printers: [any ResultPrinter] = []
        if json { printers.append(JSONArrayPrinter()) } else if ndjson { printers.append(NDJSONPrinter()) } else {
            printers.append(TextPrinter(nameWidth: min(60, (photos + skipped.map(\.path)).map { Output.visible($0).count }.max() ?? 0)))
        }
        if let csv { printers.append(try CSVFilePrinter(path: csv)) }
        let progress = ProgressLine(total: photos.count)
        let interrupt = InterruptFlag()
        for p in printers { p.begin() }
        // Skipped files first (they take no time), so a long batch lists them before its first photo.
        for (i, s) in skipped.enumerated() {
            let item = BatchRunner.Item.skipped(index: i, path: s.path, reason: s.reason)
            for p in printers { p.print(item) }
        }
        var summary = await runner.run(paths: photos, workers: workers, onItem: { item in
            let r = item.result
            if let e = item.journalError { Output.note("warning: \(Output.visible(r.file)): not stored in the journal: \(e)") }
            if case .failure(let e)? = item.output { Output.note("warning: \(Output.visible(r.file)): no annotated picture: \(Output.visible(e.message))") }
            for p in printers { p.print(item) }
        }, onDone: { progress.advance($0) }, shouldStop: { interrupt.isSet })
        progress.finish()
        summary.skipped = skipped.count
        summary.files += skipped.count
        let line = summaryLine(summary, precision: inference.precision)
        for p in printers { p.finish(summary: line) }
        if log && summary.mealsCreated + summary.mealsMerged > 0 {
            // The run's own store, already open; an error here only means no new achievements are shown.
            for a in (try? journal?.store.updateAchievements()) ?? [] { Output.note("🏆 achievement unlocked: \(a.title)") }
        }
        if summary.fromJournal > 0 && !json && !ndjson {
            print("(\(summary.fromJournal) finished in an earlier run, taken from the journal \(journalPath()); --force analyses them again)")
        }
        if photos.isEmpty { Output.note("note: no photos found under \(paths.joined(separator: ", "))") }
        if interrupt.isSet {
            Output.note("interrupted: \(summary.files) of \(photos.count) files done; run the same command again to resume")
            throw Exit.interrupted
        }
        if summary.failed > 0 || summary.journalErrors > 0 { throw Exit.failed }
    }

    /// `--time` (on `--date`'s day or today) as an instant; nil without `--time`.
    func givenTime() throws -> Date? {
        guard let time else { return nil }
        do {
            let day = try date.map { try LocalDates.day($0) } ?? LocalDates.today
            return try LocalDates.time(time, on: day)
        } catch {
            throw ValidationError("--time \(time)\(date.map { " --date \($0)" } ?? ""): \(error)")
        }
    }

    private func summaryLine(_ s: BatchRunner.Summary, precision: InferencePrecision) -> String {
        var text = "\(s.files) files, \(s.succeeded) ok, \(s.failed) failed"
        if s.skipped > 0 { text += ", \(s.skipped) skipped" }
        text += ", \(s.foods) foods"
        if s.fromJournal > 0 { text += ", \(s.analysed) analysed, \(s.fromJournal) from the journal" }
        text += String(format: ", %.1f s, %.1f photos/s on %d thread%@", s.seconds, s.photosPerSecond, s.workers, s.workers == 1 ? "" : "s")
        text += " in \(precision.rawValue.uppercased())"   // which arithmetic the answers came from
        if log {
            text += "; diary: \(s.mealsCreated) meals created, \(s.mealsMerged) photos merged into meals, \(s.duplicates) already logged"
            if s.unknown > 0 { text += ", \(s.unknown) unrecognised (logged as such)" }
            if s.keptDeleted > 0 { text += ", \(s.keptDeleted) not logged again (their meal was deleted; --force logs them)" }
        }
        return text
    }
}
