import FoodCore
import FoodMomentTestSupport
import Foundation
import ImageCodecs
import Nutrition
@testable import FoodMoment
import FoodRecognition
import FoodVision
import Testing

@Suite struct ShardTests {
    @Test func parsesOnlyValidShards() {
        #expect(Shard(parsing: "0/4") == Shard(index: 0, count: 4))
        #expect(Shard(parsing: "3/4") == Shard(index: 3, count: 4))
        for bad in ["4/4", "-1/4", "1/0", "1", "a/b", "1/2/3", ""] { #expect(Shard(parsing: bad) == nil, "\(bad)") }
    }

    @Test func everyFileLandsInExactlyOneShardAndShardsAreEven() {
        let names = (0..<4000).map { "2024/\($0 / 100)/IMG_\(String(format: "%04d", $0)).jpg" }
        var counts = [0, 0, 0, 0]
        for name in names {
            let owners = (0..<4).filter { Shard(index: $0, count: 4).contains(relativePath: name) }
            #expect(owners.count == 1)
            counts[owners[0]] += 1
        }
        // 1,000 expected per shard; the binomial standard deviation is ≈ 27.
        for c in counts { #expect((880...1120).contains(c), "\(counts)") }
    }

    @Test func autoTakesTheShardFromAKubernetesIndexedJobOrASlurmArray() {
        func shard(_ env: [String: String]) -> String {
            switch Shard.fromScheduler(environment: env) {
            case .success(let (s, scheduler)): "\(s) \(scheduler == .kubernetes ? "k8s" : "slurm")"
            case .failure(let e): "\(e)"
            }
        }
        #expect(shard(["JOB_COMPLETION_INDEX": "3", "FOODMOMENT_SHARD_COUNT": "8"]) == "3/8 k8s")
        #expect(shard(["SLURM_ARRAY_TASK_ID": "12", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_COUNT": "4"]) == "2/4 slurm")
        // --array=1-9:4 runs tasks 1, 5, 9: three shards.
        #expect(shard(["SLURM_ARRAY_TASK_ID": "9", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_STEP": "4", "SLURM_ARRAY_TASK_COUNT": "3"]) == "2/3 slurm")
        func refusal(_ env: [String: String]) -> ShardError? {
            if case .failure(let e) = Shard.fromScheduler(environment: env) { return e }
            return nil
        }
        #expect(refusal([:]) == .noScheduler)
        #expect(refusal(["JOB_COMPLETION_INDEX": "0"]) == .kubernetesWithoutCount)
        #expect(refusal(["JOB_COMPLETION_INDEX": "8", "FOODMOMENT_SHARD_COUNT": "8"]) == .outOfRange(index: 8, count: 8, from: .kubernetes))
        #expect(refusal(["JOB_COMPLETION_INDEX": "x", "FOODMOMENT_SHARD_COUNT": "8"]) == .notANumber("JOB_COMPLETION_INDEX", "x"))
        #expect(refusal(["SLURM_ARRAY_TASK_ID": "3"]) == .slurmIncomplete)
        #expect(refusal(["SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "3", "SLURM_ARRAY_TASK_COUNT": "4"])
                == .outOfRange(index: -1, count: 4, from: .slurm))
        for e in [ShardError.noScheduler, .kubernetesWithoutCount, .slurmIncomplete] { #expect(e.description.count > 40) }
    }

    @Test func relativePathIgnoresWhereTheCorpusIsMounted() {
        #expect(Shard.relativePath("/mnt/a/corpus/x/1.jpg", root: "/mnt/a/corpus") == "x/1.jpg")
        #expect(Shard.relativePath("/data/corpus/x/1.jpg", root: "/data/corpus/") == "x/1.jpg")
        #expect(Shard.relativePath("/somewhere/1.jpg", root: "/somewhere/1.jpg") == "1.jpg")
    }
}

@Suite struct MealTimeTests {
    let fileTime = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func exifWithOffsetIsExact() {
        let t = MealTime.resolve(dateTimeOriginal: "2024:05:01 12:30:00", offsetTimeOriginal: "+08:00",
                                 fileModified: fileTime, timeZone: TimeZone(identifier: "America/New_York")!)
        #expect(t.source == .exif)
        #expect(t.utcOffsetSeconds == 8 * 3600)
        #expect(t.date == Date(timeIntervalSince1970: 1_714_537_800))  // 2024-05-01T04:30:00Z
    }

    @Test func exifWithoutOffsetIsLocalTime() {
        let t = MealTime.resolve(dateTimeOriginal: "2024:05:01 12:30:00", offsetTimeOriginal: nil,
                                 fileModified: fileTime, timeZone: TimeZone(identifier: "Europe/Berlin")!)
        #expect(t.source == .exifLocal)
        #expect(t.date == Date(timeIntervalSince1970: 1_714_559_400))  // 10:30Z (CEST = UTC+2)
        #expect(t.utcOffsetSeconds == 7200)
    }

    @Test(arguments: ["0000:00:00 00:00:00", "    :  :     :  :  ", "2024:13:01 12:00:00", "garbage"])
    func blankOrBadExifFallsBackToTheFileTime(_ text: String) {
        let t = MealTime.resolve(dateTimeOriginal: text, offsetTimeOriginal: "+01:00", fileModified: fileTime, timeZone: .gmt)
        #expect(t.source == .fileTime)
        #expect(t.date == fileTime)
    }

    @Test func badOffsetIsIgnored() {
        let t = MealTime.resolve(dateTimeOriginal: "2024:05:01 12:30:00", offsetTimeOriginal: "+99:00",
                                 fileModified: fileTime, timeZone: .gmt)
        #expect(t.source == .exifLocal)
    }
}

@Suite struct ResultCSVTests {
    @Test func quotesAndFormulaGuard() {
        #expect(ResultCSV.line(["a,b", "say \"hi\"", "=cmd()", "-12.5", "plain", "two\nlines"])
                == "\"a,b\",\"say \"\"hi\"\"\",'=cmd(),-12.5,plain,\"two\nlines\"")
    }

    @Test func failedFileIsOneRowWithTheReason() {
        let r = PhotoResult(file: "x.jpg", error: PhotoError(kind: .truncated, message: "cannot decode x.jpg: truncated"))
        let rows = ResultCSV.rows(r)
        #expect(rows.count == 1)
        #expect(rows[0].hasPrefix("x.jpg,,failed,truncated: cannot decode x.jpg: truncated"))
        #expect(rows[0].split(separator: ",", omittingEmptySubsequences: false).count
                == ResultCSV.header.split(separator: ",").count)
    }
}

@Suite struct MealInputTests {
    @Test func analysedPhotosBecomeMealsAndUnknownOnesSaySo() {
        var r = PhotoResult(file: "a.jpg")
        r.photoHash = "abc"
        #expect(r.mealInput(fileModified: Date(), timeZone: .gmt) == nil)  // decoded only: not analysed
        #expect(PhotoResult(file: "b.jpg", error: PhotoError(kind: .truncated, message: "x")).mealInput(fileModified: Date(), timeZone: .gmt) == nil)
        let food = MealFood(label: "banana", name: "Banana", nameZh: "香蕉", emoji: "🍌", color: "#ffd700", confidence: 0.9,
                            box: .whole, grams: 118, gramsSource: .defaultPortion, source: .model, foodId: "sr:173944",
                            foodName: "Bananas, raw", provenance: "USDA",
                            per100g: Macros(kcal: 89, proteinG: 1.09, carbsG: 22.84, fatG: 0.33, fiberG: 2.6),
                            nutrients: Macros(kcal: 105, proteinG: 1.3, carbsG: 27, fatG: 0.4, fiberG: 3.1, sugarsG: 14.4, sodiumMg: 1))
        r.foods = [food]
        let meal = r.mealInput(fileModified: Date(timeIntervalSince1970: 0), timeZone: .gmt)
        #expect(meal?.foods.count == 1)
        #expect(meal?.foods.first?.photoHash == "abc")
        #expect(meal?.foods.first?.nutrients.kcal == 105)  // 89 × 1.18 = 105.0
        #expect(meal?.foods.first?.nutrients.sodiumMg == 1 && meal?.foods.first?.color == "#ffd700", "the same value, not a copy into another type")
        #expect(meal?.photo.timeSource == .fileTime)
        // A time the user gives wins over the file time.
        let given = Date(timeIntervalSince1970: 1_790_000_000)
        let told = r.mealInput(fileModified: Date(timeIntervalSince1970: 0), timeZone: .gmt, givenTime: given)
        #expect(told?.photo.takenAt == given && told?.photo.timeSource == .given)
        // Unknown: a meal of its own with no foods, the best guess in its text.
        r.unknown = true
        r.top = [LabelScore(label: "pizza", probability: 0.31)]
        let unknown = r.mealInput(fileModified: Date(), timeZone: .gmt)
        #expect(unknown?.foods.isEmpty == true && unknown?.title == "Unrecognised photo")
        #expect(unknown?.analysis?.contains("best guess pizza 0.31") == true, "\(String(describing: unknown?.analysis))")
    }
}

@Suite struct BatchRunnerTests {
    /// Decode-only batch over real files: order kept, each bad file reported, every good one processed.
    @Test func decodeOnlyBatchKeepsOrderAndReportsBadFiles() async throws {
        let dir = TestPaths.makeTempDirectory("batch")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let samples = try FileManager.default.contentsOfDirectory(atPath: TestPaths.repoRoot + "/samples").filter { $0.hasSuffix(".jpg") }.sorted()
        var paths: [String] = []
        for (i, name) in samples.enumerated() {
            let dst = dir + "/\(i)-\(name)"
            try FileManager.default.copyItem(atPath: TestPaths.repoRoot + "/samples/" + name, toPath: dst)
            paths.append(dst)
            if i == 2 {
                let bad = dir + "/\(i)-truncated.jpg"
                let bytes = TestPaths.read(dst)
                try Data(bytes.prefix(bytes.count / 3)).write(to: URL(fileURLWithPath: bad))
                paths.append(bad)
            }
        }
        paths.append(dir + "/missing.jpg")
        let runner = BatchRunner(analyzers: [], decoder: PhotoDecoder(), journal: nil, options: .init(settings: "t", chunkPerWorker: 1))
        var seen: [String] = []
        let summary = await runner.run(paths: paths, workers: 2, onItem: { seen.append($0.result.file) })
        #expect(seen == paths)
        #expect(summary.files == paths.count)
        #expect(summary.failed == 2)
        #expect(summary.succeeded == samples.count)
    }

    @Test func stopRequestEndsBetweenChunks() async {
        let paths = (0..<10).map { "/nonexistent/\($0).jpg" }
        let runner = BatchRunner(analyzers: [], decoder: PhotoDecoder(), journal: nil, options: .init(settings: "t", chunkPerWorker: 1))
        var n = 0
        let summary = await runner.run(paths: paths, workers: 2, onItem: { _ in n += 1 }, shouldStop: { n >= 4 })
        #expect(summary.files == 4)
    }

    /// `analyze` reads and decodes its first photo while the model loads: the batch then gives the same results as when
    /// it reads the photo itself, and an early decode of another path than the batch's first is not used.
    @Test func anEarlyDecodedFirstPhotoGivesTheSameResults() async throws {
        let recognizer = try #require(bundledRecognizer)
        let db = try NutritionDatabase.load(directory: URL(fileURLWithPath: TestPaths.repoRoot + "/nutrition-db"))
        let analyzer = MealAnalyzer(decoder: PhotoDecoder(), recognizer: recognizer, nutrition: db)
        let dir = TestPaths.makeTempDirectory("early")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let apple = TestPaths.repoRoot + "/samples/apple.jpg", banana = TestPaths.repoRoot + "/samples/banana.jpg"
        let truncated = dir + "/truncated.jpg"
        try Data(TestPaths.read(apple).prefix(2000)).write(to: URL(fileURLWithPath: truncated))
        func results(_ paths: [String], early: String?, analyzers: [MealAnalyzer]) async -> [PhotoResult] {
            let runner = BatchRunner(analyzers: analyzers, decoder: analyzer.decoder, journal: nil,
                                     options: .init(settings: "t", chunkPerWorker: 1))
            runner.firstPhoto = early.map { path in Background(name: "first-photo") { EarlyDecode(path: path, decoder: analyzer.decoder) } }
            var out: [PhotoResult] = []
            _ = await runner.run(paths: paths, workers: 1, onItem: { item in
                var r = item.result
                r.timings = nil
                r.decode?.decodeMilliseconds = 0
                out.append(r)
            })
            return out
        }
        for paths in [[apple, banana], [truncated, apple], [dir + "/missing.jpg", banana]] {
            for analyzers in [[analyzer], []] {
                let plain = await results(paths, early: nil, analyzers: analyzers)
                #expect(await results(paths, early: paths[0], analyzers: analyzers) == plain, "\(paths) \(analyzers.count)")
                #expect(await results(paths, early: paths[1], analyzers: analyzers) == plain, "\(paths) \(analyzers.count)")
            }
        }
        let plain = await results([apple, banana], early: nil, analyzers: [analyzer])
        #expect(plain.map(\.foods?.first?.label) == ["apple", "banana"])
        #expect(plain.map(\.succeeded) == [true, true])
        let failed = await results([truncated, dir + "/missing.jpg"], early: truncated, analyzers: [analyzer])
        #expect(failed.map(\.succeeded) == [false, false])
        #expect(failed.first?.error?.kind != nil)

        // The batch does use the early decode: the file is replaced after it, and the answer is the early one's.
        let swapped = dir + "/swapped.jpg"
        try Data(TestPaths.read(apple)).write(to: URL(fileURLWithPath: swapped))
        let early = Background(name: "first-photo") { EarlyDecode(path: swapped, decoder: analyzer.decoder) }
        _ = early.value
        try Data(TestPaths.read(banana)).write(to: URL(fileURLWithPath: swapped))
        let runner = BatchRunner(analyzers: [analyzer], decoder: analyzer.decoder, journal: nil, options: .init(settings: "t"))
        runner.firstPhoto = early
        var labels: [String?] = []
        _ = await runner.run(paths: [swapped, banana], workers: 1, onItem: { labels.append($0.result.foods?.first?.label) })
        #expect(labels == ["apple", "banana"])
    }

    @Test func settingsKeyChangesWithDecodeOptions() {
        let models = TestPaths.repoRoot + "/models", nutrition = TestPaths.repoRoot + "/nutrition-db"
        let a = BatchSettings.key(modelsDirectory: models, nutritionDirectory: nutrition, userDataDirectory: "/nonexistent", decodeSize: 224, acceptDamaged: false, precision: .fp32)
        let b = BatchSettings.key(modelsDirectory: models, nutritionDirectory: nutrition, userDataDirectory: "/nonexistent", decodeSize: 448, acceptDamaged: false, precision: .fp32)
        let c = BatchSettings.key(modelsDirectory: models, nutritionDirectory: nutrition, userDataDirectory: "/nonexistent", decodeSize: 224, acceptDamaged: false, precision: .fp32)
        #expect(a != b)
        #expect(a == c)
        // The arithmetic is part of the key when this CPU runs another one (answers move by a hundredth).
        let other = BatchSettings.key(modelsDirectory: models, nutritionDirectory: nutrition, userDataDirectory: "/nonexistent", decodeSize: 224, acceptDamaged: false, precision: .bf16)
        #expect((other != a) == InferencePrecision.bf16Supported)
    }
}
