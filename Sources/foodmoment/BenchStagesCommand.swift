import ArgumentParser
import FoodCore
import Foundation
import ImageCodecs
import FoodMoment
import FoodRecognition
import FoodTraining

struct BenchStagesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-stages",
        abstract: "Benchmark stage 1 per step (decode, preprocess, backbone, localisation pass, head, localise) on photos, 1 and N threads.",
        discussion: """
        Single thread: every photo is analysed --runs times after a warm-up; p50/p95 per step over all runs. \
        Then the same photos are analysed on --threads threads (one recognizer each) and the throughput \
        (photos/s) is compared with one thread. Refuses debug builds.

        Examples:
          foodmoment dev bench-stages ../shared/data/bench
          foodmoment dev bench-stages samples --runs 20 --json
        """
    )

    @Argument(help: "Photos or folders.") var paths: [String]
    @Option(help: "Timed runs per photo (single thread).") var runs = 10
    @Option(help: "Threads for the throughput run.") var threads = 2
    @Option(help: "Models folder.") var models: String?
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "Allow timing a debug build.") var allowDebug = false
    @OptionGroup var passes: PassOptions

    func validate() throws {
        if runs < 1 || threads < 1 { throw ValidationError("--runs and --threads must be at least 1") }
        #if DEBUG
        if !allowDebug { throw ValidationError("this is a debug build: build with -c release or pass --allow-debug") }
        #endif
    }

    struct StageStats: Encodable { var stage: String; var p50Ms: Double; var p95Ms: Double }
    struct Report: Encodable {
        var machine: MachineInfo; var photos: Int; var runs: Int; var stages: [StageStats]
        var singleThreadPhotosPerSecond: Double; var threads: Int; var multiThreadPhotosPerSecond: Double; var speedup: Double
        var peakRSSMB: Int
    }

    func run() async throws {
        let files = FileWalker().expand(paths).compactMap { item -> String? in
            if case .photo(let p) = item { return p } else { return nil }
        }
        guard !files.isEmpty else { throw ValidationError("no photos under \(paths.joined(separator: " "))") }
        let recognizers = try passes.apply(loadRecognizers(threads: threads, models: models))
        let decoder = PhotoDecoder(options: DecodeOptions(minShortSide: FoodRecognizer.inputSize))
        var samples: [String: [Double]] = [:]
        func once(_ path: String, _ r: FoodRecognizer, record: Bool) throws {
            let t = ContinuousClock.now
            guard case .success(let (decoded, _)) = decoder.decode(path: path) else { return }
            let decodeMs = (ContinuousClock.now - t).milliseconds
            let rec = try r.recognize(decoded.image)
            if record {
                samples["decode", default: []].append(decodeMs)
                for (k, v) in rec.timings.milliseconds { samples[k.rawValue, default: []].append(v) }
                samples["total", default: []].append((ContinuousClock.now - t).milliseconds)
            }
        }
        for f in files { try once(f, recognizers[0], record: false) }
        let singleStart = ContinuousClock.now
        for _ in 0..<runs { for f in files { try once(f, recognizers[0], record: true) } }
        let singleSeconds = (ContinuousClock.now - singleStart).milliseconds / 1000
        let singleRate = Double(runs * files.count) / singleSeconds
        // Throughput on N threads: the same work split across recognizers.
        let work = (0..<runs).flatMap { _ in files }
        let multiStart = ContinuousClock.now
        let workers = recognizers.count
        WorkerPool.forEach(work.count, workers: workers) { i, w in
            if case .success(let (decoded, _)) = decoder.decode(path: work[i]) { _ = try? recognizers[w].recognize(decoded.image) }
        }
        let multiSeconds = (ContinuousClock.now - multiStart).milliseconds / 1000
        let multiRate = Double(work.count) / multiSeconds
        let order = ["decode", "preprocess", "backbone", "backbone_local", "fuse", "head", "reference", "localise", "total"]
        let stages = order.compactMap { k in samples[k].map {
            StageStats(stage: k, p50Ms: DecodeBenchmark.percentile($0, 0.5), p95Ms: DecodeBenchmark.percentile($0, 0.95)) } }
        let machine = MachineInfo.current()
        let report = Report(machine: machine, photos: files.count, runs: runs, stages: stages, singleThreadPhotosPerSecond: singleRate,
                            threads: workers, multiThreadPhotosPerSecond: multiRate, speedup: multiRate / singleRate,
                            peakRSSMB: machine.peakRSSMegabytes())
        if json { print(try Output.json(report)); return }
        print(machine.header)
        print("\(files.count) photos × \(runs) runs, one thread (p50 / p95 ms per photo):")
        for s in stages { print("  " + Output.pad(s.stage, 11) + Output.padLeft(String(format: "%.2f", s.p50Ms), 9) + Output.padLeft(String(format: "%.2f", s.p95Ms), 9)) }
        print(String(format: "throughput: 1 thread %.1f photos/s, %d threads %.1f photos/s (%.2f×); peak RSS %d MB",
                     singleRate, workers, multiRate, multiRate / singleRate, report.peakRSSMB))
    }
}
