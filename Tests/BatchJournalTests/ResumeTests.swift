import FoodCore
import FoodMomentTestSupport
import Foundation
import ImageCodecs
import MealStore
import Nutrition
import FoodMoment
import FoodRecognition
import Testing

/// A folder of distinct photos with file times spread over a day (so the merge rules make several meals):
/// the six samples, plus dev photos from ../shared/data when present.
func makePhotoFolder(extra: Int) throws -> (dir: String, paths: [String]) {
    let dir = TestPaths.makeTempDirectory("resume")
    var sources = try FileManager.default.contentsOfDirectory(atPath: TestPaths.repoRoot + "/samples")
        .filter { $0.hasSuffix(".jpg") }.sorted().map { TestPaths.repoRoot + "/samples/" + $0 }
    if TestPaths.hasSharedData, extra > 0 {
        let dev = TestPaths.sharedData + "/images/dev"
        let labels = try FileManager.default.contentsOfDirectory(atPath: dev).sorted()
        for label in labels.prefix(extra) {
            if let first = try FileManager.default.contentsOfDirectory(atPath: dev + "/" + label).sorted().first {
                sources.append(dev + "/" + label + "/" + first)
            }
        }
    }
    var paths: [String] = []
    let base = Date(timeIntervalSince1970: 1_763_800_000)  // 2025-11-22, times below spread over the day
    for (i, src) in sources.enumerated() {
        let dst = dir + String(format: "/%03d.jpg", i)
        try FileManager.default.copyItem(atPath: src, toPath: dst)
        try FileManager.default.setAttributes([.modificationDate: base.addingTimeInterval(Double(i) * 1_700)], ofItemAtPath: dst)
        paths.append(dst)
    }
    return (dir, paths)
}

/// What must be equal between an interrupted-and-resumed store and an uninterrupted one: meals as sets of photo
/// hashes with their type and totals.
func mealFingerprint(_ path: String) throws -> [String] {
    try MealStore(path: path, timeZone: TimeZone(identifier: "UTC")!).allMeals().map { m in
        "\(m.type.rawValue) \(m.photos.map(\.hash).sorted().joined(separator: "+")) \(m.totals.kcal) \(m.foods.count)"
    }.sorted()
}

@Suite("batch resume with the real meal store", .serialized)
struct ResumeTests {
    static let utc = TimeZone(identifier: "UTC")!

    func analyzer() throws -> MealAnalyzer {
        let nutrition = try NutritionDatabase.load(directory: URL(fileURLWithPath: TestPaths.repoRoot + "/nutrition-db"))
        let recognizer = try FoodRecognizer.load(modelsDirectory: TestPaths.repoRoot + "/models", userDataDirectory: nil,
                                                 portions: MealAnalyzer.portions(from: nutrition))
        return MealAnalyzer(decoder: PhotoDecoder(), recognizer: recognizer, nutrition: nutrition)
    }

    func run(_ paths: [String], store: String, analyzer: MealAnalyzer, stopAfter: Int? = nil, force: Bool = false) async throws -> BatchRunner.Summary {
        let journal = try MealStore(path: store, timeZone: Self.utc).journal()
        let runner = BatchRunner(analyzers: [analyzer], decoder: analyzer.decoder, journal: journal,
                                 options: .init(settings: "test", force: force, log: true, timeZone: Self.utc, chunkPerWorker: 2))
        var seen = 0
        return await runner.run(paths: paths, workers: 1, onItem: { _ in seen += 1 },
                                shouldStop: { stopAfter.map { seen >= $0 } ?? false })
    }

    @Test func anInterruptedBatchResumesToTheSameDiary() async throws {
        let (dir, paths) = try makePhotoFolder(extra: 10)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = try analyzer()
        let clean = dir + "/clean.sqlite", resumed = dir + "/resumed.sqlite"
        let full = try await run(paths, store: clean, analyzer: a)
        #expect(full.files == paths.count && full.failed == 0)

        let first = try await run(paths, store: resumed, analyzer: a, stopAfter: 3)
        #expect(first.files == 4)  // stops at the chunk boundary after the third photo
        let second = try await run(paths, store: resumed, analyzer: a, stopAfter: 5)
        #expect(second.fromJournal >= 4 && second.analysed >= 1)
        let last = try await run(paths, store: resumed, analyzer: a)
        #expect(last.files == paths.count)
        #expect(last.analysed == paths.count - second.files)
        #expect(try mealFingerprint(resumed) == (try mealFingerprint(clean)))
        let store = try MealStore(path: resumed)
        #expect(try store.journalCount() == paths.count)
        // Run again: nothing analysed, nothing logged twice.
        let again = try await run(paths, store: resumed, analyzer: a)
        #expect(again.analysed == 0 && again.fromJournal == paths.count)
        #expect(again.mealsCreated == 0 && again.mealsMerged == 0)
        #expect(try mealFingerprint(resumed) == (try mealFingerprint(clean)))
    }

    @Test func forceRedoesWithoutDuplicatingPhotos() async throws {
        let (dir, paths) = try makePhotoFolder(extra: 0)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let a = try analyzer()
        let store = dir + "/m.sqlite"
        _ = try await run(paths, store: store, analyzer: a)
        let before = try mealFingerprint(store)
        let forced = try await run(paths, store: store, analyzer: a, force: true)
        #expect(forced.analysed == paths.count && forced.fromJournal == 0)
        #expect(try mealFingerprint(store) == before)
        #expect(try MealStore(path: store).photoCount() == paths.count)
    }

    /// The real binary, killed with SIGKILL three times mid-batch, then run to the end: the store equals one
    /// uninterrupted run's.
    @Test(.timeLimit(.minutes(5)))
    func aBatchKilledWithSIGKILLResumesToTheSameDiary() throws {
        let (dir, _) = try makePhotoFolder(extra: 18)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let binary = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
            .deletingLastPathComponent().appendingPathComponent("foodmoment").path
        // The stores live outside the photo folder: files the walk skips are listed too, and would count as lines.
        let stores = TestPaths.makeTempDirectory("resume-stores")
        defer { try? FileManager.default.removeItem(atPath: stores) }
        var env = ProcessInfo.processInfo.environment
        env["FOODMOMENT_HOME"] = stores + "/home"
        env["TZ"] = "UTC"
        let photos = dir
        let clean = stores + "/clean.sqlite", killed = stores + "/killed.sqlite"
        let c = try runProcess(binary, ["analyze", photos, "--log", "--db", clean, "--ndjson", "--threads", "1"], environment: env)
        #expect(c.status == 0, "\(c.stderr)")
        for (round, linesBeforeKill) in [2, 6, 11].enumerated() {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: binary)
            p.arguments = ["analyze", photos, "--log", "--db", killed, "--ndjson", "--threads", "1"]
            p.environment = env
            let out = Pipe()
            p.standardOutput = out
            p.standardError = FileHandle.nullDevice
            try p.run()
            var buffer = Data()
            while buffer.split(separator: UInt8(ascii: "\n")).count < linesBeforeKill {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                buffer += chunk
            }
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            #expect(p.terminationReason == .uncaughtSignal, "round \(round): finished before the kill")
            // Whatever was printed was journaled first.
            #expect(try MealStore(path: killed).journalCount() >= linesBeforeKill)
        }
        let r = try runProcess(binary, ["analyze", photos, "--log", "--db", killed, "--ndjson", "--threads", "1"], environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("from the journal"))
        #expect(try mealFingerprint(killed) == (try mealFingerprint(clean)))
        let store = try MealStore(path: killed)
        #expect(try store.photoCount() == (try MealStore(path: clean).photoCount()))
        #expect(try store.integrityProblems().isEmpty)
    }
}
