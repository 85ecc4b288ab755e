import ArgumentParser
import FoodCore
import FoodVision
import Foundation
import ImageCodecs
import Nutrition
import Pipeline

struct AnalyzeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Analyse meal photos: files and folders (walked recursively).",
        discussion: """
        Per photo: decode (format from the content, not the name; EXIF orientation applied; JPEGs decoded at the \
        smallest DCT scale that still feeds the model), then the foods with confidence, box, grams (and where \
        the grams came from) and nutrition from the bundled tables. A photo that shows no food we know is \
        reported as unknown. Files inside folders that are not images are skipped with a note on stderr; a \
        damaged, truncated or oversized photo is reported with its reason and the rest of the batch goes on.

        Examples:
          foodmoment analyze samples/
          foodmoment analyze lunch.jpg dinner.png --json
          foodmoment analyze ~/Photos --json > results.json
          foodmoment analyze ~/Photos --decode-only

        Exit codes: 0 all files succeeded, 1 some failed (the others were processed), 2 usage error.
        """
    )

    @Argument(help: "Photos or folders (walked recursively).")
    var paths: [String]

    @Flag(help: "Print one JSON document (an array of per-file results) on stdout.")
    var json = false

    @Option(help: "Refuse images with more pixels than this (checked before any pixel is allocated).")
    var maxPixels: Int = 100_000_000

    @Option(help: "Refuse files larger than this many bytes.")
    var maxFileBytes: Int = 256 << 20

    @Option(help: "Decode JPEGs at the smallest DCT scale whose shorter side is at least this (0 = full size).")
    var decodeSize: Int = 224

    @Flag(help: "Accept truncated/corrupt JPEG data (libjpeg's recovered pixels) and report it as a warning.")
    var acceptDamaged = false

    @Flag(help: "Only decode (no recognition, no nutrition).")
    var decodeOnly = false

    @Option(help: "Models folder (default: the bundled models/, or $FOODMOMENT_MODELS).")
    var models: String?

    @Option(help: "Nutrition database folder (default: the bundled nutrition-db/, or $FOODMOMENT_NUTRITION_DB).")
    var db: String?

    @Option(help: "Photos analysed at once (one model instance each).")
    var threads = ProcessInfo.processInfo.activeProcessorCount

    @OptionGroup(title: "LLM refinement (optional)") var llm: RefineOptions

    func validate() throws {
        if paths.isEmpty { throw ValidationError("name at least one photo or folder") }
        for path in paths where !FileManager.default.fileExists(atPath: path) {
            throw ValidationError("no such file or folder: \(path)")
        }
        if maxPixels <= 0 { throw ValidationError("--max-pixels must be positive") }
        if decodeSize < 0 { throw ValidationError("--decode-size must be 0 or more") }
        if threads < 1 { throw ValidationError("--threads must be at least 1") }
    }

    func run() async throws {
        let items = FileWalker().expand(paths)
        var photos: [String] = []
        for item in items {
            switch item {
            case .photo(let path): photos.append(path)
            case .skipped(let path, let reason): Output.note("note: skipped \(path): \(reason)")
            }
        }
        if llm.explainNetwork { try llm.explain(photoCount: photos.count); return }
        let decoder = PhotoDecoder(options: DecodeOptions(
            minShortSide: decodeSize > 0 ? decodeSize : nil, maxPixels: maxPixels, maxFileBytes: maxFileBytes,
            acceptDamagedData: acceptDamaged))
        var analyzers: [MealAnalyzer] = []
        let workers = max(1, min(threads, photos.count))
        if !decodeOnly && !photos.isEmpty {
            let nutrition: NutritionDatabase?
            do {
                nutrition = try NutritionDatabase.load(directory: db.map { URL(fileURLWithPath: $0) } ?? NutritionDatabase.defaultDirectory())
            } catch {
                Output.note("note: no nutrition numbers: \(error)")
                nutrition = nil
            }
            do {
                for _ in 0..<workers {
                    let recognizer = try FoodRecognizer.load(modelsDirectory: models ?? ResourceLocator.modelsDirectory(),
                                                             userDataDirectory: ResourceLocator.userDataDirectory(),
                                                             displays: MealAnalyzer.displays(from: nutrition))
                    analyzers.append(MealAnalyzer(decoder: decoder, recognizer: recognizer, nutrition: nutrition))
                }
            } catch {
                Output.note("error: cannot load the recognition model: \(error)\n(run with --decode-only to only decode, or `foodmoment train` to build models/food-head)")
                throw ExitCode(1)
            }
        }
        let refiner = decodeOnly ? nil : try llm.makeRefiner(nutrition: analyzers.first?.nutrition)
        let progress = ProgressLine(total: photos.count)
        let nameWidth = min(60, photos.map(\.count).max() ?? 0)
        var results: [PhotoResult] = []
        results.reserveCapacity(photos.count)
        let start = ContinuousClock.now
        // Chunks of a few photos per worker: every worker has its own model, results print in input order, and
        // memory stays bounded by the chunk (decoded pixels are dropped as soon as a photo is done).
        let chunkSize = workers * 4
        for chunkStart in stride(from: 0, to: photos.count, by: chunkSize) {
            let chunk = Array(photos[chunkStart..<min(photos.count, chunkStart + chunkSize)])
            let lock = NSLock()
            nonisolated(unsafe) var chunkResults = [PhotoResult?](repeating: nil, count: chunk.count)
            let analyzersCopy = analyzers
            DispatchQueue.concurrentPerform(iterations: min(workers, chunk.count)) { w in
                var i = w
                while i < chunk.count {
                    let r: PhotoResult
                    if w < analyzersCopy.count {
                        r = analyzersCopy[w].analyze(path: chunk[i])
                    } else {
                        switch decoder.decode(path: chunk[i]) {
                        case .success(let (_, summary)): r = PhotoResult(file: chunk[i], decode: summary)
                        case .failure(let error): r = PhotoResult(file: chunk[i], error: error)
                        }
                    }
                    lock.lock(); chunkResults[i] = r; lock.unlock()
                    progress.advance(chunk[i])
                    i += min(workers, chunk.count)
                }
            }
            for r in await llm.refine(chunkResults.compactMap({ $0 }), with: refiner) {
                results.append(r)
                if !json { printLine(r, nameWidth: nameWidth) }
            }
        }
        progress.finish()
        let failed = results.filter { !$0.succeeded }.count
        if json {
            print(try Output.json(results))
        } else {
            let elapsed = PhotoDecoder.milliseconds(ContinuousClock.now - start)
            let foods = results.reduce(0) { $0 + ($1.foods?.count ?? 0) }
            let rate = elapsed > 0 ? Double(results.count) / elapsed * 1000 : 0
            print("\(results.count) files, \(results.count - failed) ok, \(failed) failed, \(foods) foods, "
                  + String(format: "%.1f ms, %.1f photos/s on %d thread%@", elapsed, rate, workers, workers == 1 ? "" : "s"))
        }
        if photos.isEmpty { Output.note("note: no photos found under \(paths.joined(separator: ", "))") }
        if failed > 0 { throw ExitCode(1) }
    }

    private func printLine(_ r: PhotoResult, nameWidth: Int) {
        let file = Output.pad(r.file, nameWidth)
        if let d = r.decode {
            let size = Output.pad("\(d.format.uppercased()) \(d.width)x\(d.height)", 15)
            let orient = Output.pad(d.orientation == 1 ? "upright" : "EXIF \(d.orientationDescription)", 27)
            let decoded = Output.pad("decoded \(d.decodedWidth)x\(d.decodedHeight) (\(d.scale))", 24)
            let time = String(format: "%7.1f ms", d.decodeMilliseconds)
            var line = "\(file)  \(size) \(orient) \(decoded) \(time)"
            if !d.warnings.isEmpty { line += "  warning: \(d.warnings.joined(separator: "; "))" }
            if let e = r.error { line += "  error: \(e.message)" }
            print(line)
            if r.unknown == true {
                let best = r.top?.first.map { String(format: " (best guess %@ %.2f)", $0.label, $0.probability) } ?? ""
                print("    ❓ unknown / not a food we know\(best)")
            }
            for f in r.foods ?? [] {
                let food = f.food
                let names = food.nameZh.isEmpty ? food.name : "\(food.name) · \(food.nameZh)"
                let box = String(format: "[%.2f %.2f %.2f×%.2f]", food.box.x, food.box.y, food.box.w, food.box.h)
                let kcal = f.nutrition?.kcal.map { String(format: "%5.0f kcal", $0) } ?? "      — kcal"
                print("    \(food.emoji) \(Output.pad(names, 30)) \(String(format: "%.2f", food.confidence))  \(box)  "
                      + "\(Output.padLeft(String(format: "%.0f g", food.grams), 6)) (\(food.gramsSource))  \(kcal)")
            }
            if let t = r.totals, (r.foods?.count ?? 0) > 1 {
                print(String(format: "    total %.0f kcal · protein %.1f g · carbs %.1f g · fat %.1f g · fiber %.1f g",
                             t.kcal, t.proteinG, t.carbsG, t.fatG, t.fiberG))
            }
            for flag in r.flags ?? [] { print("    ⚠️  \(flag.message)") }
            if let info = r.refinement { print("    \(info.summary)") }
        } else if let e = r.error {
            print("\(file)  error: \(e.message)")
        }
    }
}
