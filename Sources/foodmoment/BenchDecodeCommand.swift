import ArgumentParser
import Foundation
import FoodMoment
import FoodRecognition
import FoodTraining

struct BenchDecodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-decode",
        abstract: "Benchmark photo decoding: full size vs scaled to the model's input size.",
        discussion: """
        Each file is read once, then decoded --runs times at full size and --runs times scaled, interleaved, \
        after a warm-up: JPEG at the smallest libjpeg DCT scale whose shorter side is still >= --min-short-side, \
        WebP scaled by libwebp to the same size, HEIC from its embedded thumbnail when that is large enough. \
        Prints p50/p95 and the scaled/full ratio, plus the peak RSS of the process.

        Examples:
          foodmoment dev bench-decode ../shared/data/bench
          foodmoment dev bench-decode photo.jpg --runs 21 --json
        """
    )

    @Argument(help: "Photos or folders.") var paths: [String]
    @Option(help: "Timed runs per file and mode.") var runs = 7
    @Option(help: "Target shorter side for the scaled decode.") var minShortSide = 224
    @Flag(help: "Print JSON.") var json = false
    @Flag(help: "Allow timing a debug build (figures are meaningless for comparisons).") var allowDebug = false

    func validate() throws {
        if runs < 1 { throw ValidationError("--runs must be at least 1") }
        #if DEBUG
        if !allowDebug { throw ValidationError("this is a debug build: build with -c release (./foodmoment does) or pass --allow-debug") }
        #endif
    }

    func run() async throws {
        let files = FileWalker().expand(paths).compactMap { item -> String? in
            if case .photo(let p) = item { return p } else { return nil }
        }
        let rows = try DecodeBenchmark(runs: runs, minShortSide: minShortSide).run(paths: files)
        let machine = MachineInfo.current()
        if json {
            struct Doc: Encodable { var machine: MachineInfo; var runs: Int; var results: [DecodeBenchmark.Row] }
            print(try Output.json(Doc(machine: machine, runs: runs, results: rows)))
            return
        }
        print(machine.header)
        print("decode, \(runs) runs each (p50 / p95 ms); scaled = smallest DCT scale with shorter side >= \(minShortSide)")
        print(Output.pad("file", 22) + Output.padLeft("stored", 11) + Output.padLeft("full p50", 10) + Output.padLeft("p95", 8)
              + Output.padLeft("scaled", 10) + Output.padLeft("p50", 8) + Output.padLeft("p95", 8) + Output.padLeft("ratio", 8))
        for r in rows {
            let name = URL(fileURLWithPath: r.file).lastPathComponent
            print(Output.pad(name, 22) + Output.padLeft("\(r.storedWidth)x\(r.storedHeight)", 11)
                  + Output.padLeft(String(format: "%.2f", r.fullMedianMs), 10) + Output.padLeft(String(format: "%.2f", r.fullP95Ms), 8)
                  + Output.padLeft("\(r.scaledWidth)x\(r.scaledHeight)", 10)
                  + Output.padLeft(String(format: "%.2f", r.scaledMedianMs), 8) + Output.padLeft(String(format: "%.2f", r.scaledP95Ms), 8)
                  + Output.padLeft(String(format: "%.3f", r.ratio), 8))
        }
        print("peak RSS: \(machine.peakRSSMegabytes()) MB")
    }
}
