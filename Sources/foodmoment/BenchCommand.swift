import ArgumentParser
import FoodCore
import FoodVision
import Foundation
import FoodMoment
import FoodRecognition
import FoodTraining

/// `foodmoment dev bench`: times the backbone on one thread and compares with onnxruntime on the same input.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Time the EfficientNet-Lite0 forward pass (224x224, one thread) against onnxruntime.",
        discussion: """
        Prints a machine header (CPU, cores, build configuration, FOODMOMENT_TARGET_CPU as seen at run time, the GEMM kernel picked), then p50/p95/min of FoodMoment's forward pass after a warm-up, then runs tools/onnx/ort_bench.py (the same network exported to ONNX, onnxruntime with 1 intra-op thread, same input) when python3 with onnx and onnxruntime is available, and the ratios ours / onnxruntime (lower is faster). On a shared machine compare the ratio of minimums too: it is the least disturbed by other processes.

        Build in release first; debug timings are meaningless and refused unless --allow-debug. The default build is portable (SSE2 on x86-64); FOODMOMENT_TARGET_CPU=native at build time compiles for this CPU (AVX-512 here):
          swift build -c release --product foodmoment
          FOODMOMENT_TARGET_CPU=native swift build -c release --product foodmoment --scratch-path .build-native

        Examples:
          .build/release/foodmoment dev bench
          .build/release/foodmoment dev bench --runs 100 --json
          .build/release/foodmoment dev bench --skip-onnxruntime --batch 4

        FOODMOMENT_GEMM_KERNEL=tile8x32|tile8x32fma|tile6x16|tile6x16fma|tile6x8|tile6x8fma skips the kernel measurement and uses that one.

        Exit codes: 0 measured, 1 the model could not be loaded or this is a debug build, 2 usage error.
        """
    )

    @Option(help: "Model directory.")
    var model = "models/efficientnet-lite0"

    @Option(help: "Folder with efficientnet_lite0.safetensors and reference/ (input_224.f32, logits.f32).")
    var weights = "../shared/data/weights"

    @Option(help: "The onnxruntime script.")
    var ortScript = "tools/onnx/ort_bench.py"

    @Option(help: "Python interpreter for the onnxruntime comparison.")
    var python = "python3"

    @Option(help: "Timed runs (at least 30).")
    var runs = 50

    @Option(help: "Untimed warm-up runs.")
    var warmup = 10

    @Option(help: "Images per forward pass (the onnxruntime comparison always uses 1).")
    var batch = 1

    @Flag(help: "Also print where the time goes, per kind of layer (each kind's fastest run).")
    var layers = false

    @Flag(help: "With --layers: one line per layer instead of per kind.")
    var perLayer = false

    @Option(help: "With --layers: the input size, HEIGHTxWIDTH (448x352: the localisation pass on a landscape photo). The input is the 224 one, resampled. Default: 224x224.")
    var layersSize: String?

    @Option(help: "Only time the GEMM kernels on an M,K,N product (e.g. 784,512,512) and print GFLOP/s.")
    var gemm: String?

    @Option(help: "Arithmetic of the 1x1 convolutions: fp32 (the reference), bf16 (AVX-512 BF16) or int8 (AVX-512 VNNI). Default: int8 where the CPU has AVX-512 VNNI and BF16, else bf16 where it has BF16, else fp32 (or FOODMOMENT_PRECISION).")
    var precision: InferencePrecision?

    @Flag(help: "Also time the reduced-precision engines a user could pick instead (tools/onnx/int8_peers.py: onnxruntime INT8, OpenVINO FP32/BF16/INT8; needs the training photos for calibration).")
    var peers = false

    @Flag(help: "Do not run the onnxruntime comparison.")
    var skipOnnxruntime = false

    @Flag(help: "Time a debug build anyway.")
    var allowDebug = false

    @Flag(help: "Print one JSON document on stdout.")
    var json = false

    /// `--layers-size`, parsed; 224 x 224 without it.
    func layerInputSize() throws -> (Int, Int) {
        guard let text = layersSize else { return (224, 224) }
        let parts = text.lowercased().split(separator: "x").compactMap { Int($0) }
        guard parts.count == 2, parts.allSatisfy({ (32...2048).contains($0) }) else {
            throw ValidationError("--layers-size takes HEIGHTxWIDTH, each 32 to 2048 (e.g. 448x352), not '\(text)'")
        }
        return (parts[0], parts[1])
    }

    func validate() throws {
        _ = try layerInputSize()
        if runs < 30 { throw ValidationError("--runs must be at least 30 for a stable p95") }
        if warmup < 0 { throw ValidationError("--warmup must be 0 or more") }
        if batch < 1 { throw ValidationError("--batch must be at least 1") }
    }

    func run() async throws {
        var machine = MachineInfo.current()
        if machine.build == "debug" && !allowDebug {
            Output.error("this is a debug build; timings would be meaningless. Build with `swift build -c release --product foodmoment` (or pass --allow-debug).")
            throw Exit.failed
        }
        if let gemm {
            let dims = gemm.split(separator: ",").compactMap { Int($0) }
            guard dims.count == 3, dims.allSatisfy({ $0 > 0 }) else { throw ValidationError("--gemm takes M,K,N, e.g. 784,512,512") }
            print(machine.header)
            for kernel in GemmKernel.allCases {
                let rate = kernel.measureGFLOPS(m: dims[0], k: dims[1], n: dims[2], runs: runs)
                print(Output.pad(kernel.rawValue, 14) + String(format: "%8.1f GFLOP/s (best of %d)", rate, runs))
            }
            for (precision, supported, unit, missing) in [(InferencePrecision.bf16, InferencePrecision.bf16Supported, "GFLOP/s", "BF16"),
                                                          (.int8, InferencePrecision.int8Supported, "GOP/s", "VNNI")] {
                guard supported else {
                    print(Output.pad(precision.rawValue, 14) + "  not run: this CPU has no AVX-512 \(missing)")
                    continue
                }
                let rate = GemmKernel.fastest.measureGFLOPS(m: dims[0], k: dims[1], n: dims[2], runs: runs, precision: precision)
                var note = ""
                if precision == .int8, !InferencePrecision.int8Runs(inChannels: dims[1], outChannels: dims[2]) {
                    note = " — BF16's rate: int8 runs a layer this narrow in BF16"
                }
                print(Output.pad(precision.rawValue, 14) + String(format: "%8.1f %@ (best of %d)", rate, unit, runs) + note)
            }
            return
        }
        let network: EfficientNetLite0
        do { network = try EfficientNetLite0(modelDirectory: model, options: ProcessSettings.inference(precision: precision)) } catch {
            Output.error("\(error.description)")
            throw Exit.failed
        }
        let referenceDir = (weights as NSString).appendingPathComponent("reference")
        let inputPath = (referenceDir as NSString).appendingPathComponent("input_224.f32")
        let logitsPath = (referenceDir as NSString).appendingPathComponent("logits.f32")
        var input: [Float]
        var inputSource: String
        if let data = FileManager.default.contents(atPath: inputPath), data.count == 224 * 224 * 3 * 4 {
            input = floats(data)
            inputSource = inputPath
        } else {
            var state: UInt32 = 12345
            input = (0..<(224 * 224 * 3)).map { _ in
                state = state &* 1_664_525 &+ 1_013_904_223
                return Float(state >> 8) / Float(1 << 24) * 2 - 1
            }
            inputSource = "pseudo-random (reference input not found at \(inputPath))"
            Output.note("note: \(inputSource)")
        }
        let image = FloatImage(width: 224, height: 224, channels: 3, values: input)
        let images = [FloatImage](repeating: image, count: batch)

        var parity: Parity?
        let first = try network.forward([image])[0]
        if let data = FileManager.default.contents(atPath: logitsPath), data.count == 4000, inputSource == inputPath {
            let ref = floats(data)
            let diff = zip(first.logits, ref).reduce(Float(0)) { max($0, abs($1.0 - $1.1)) }
            let ours5 = network.topClasses(logits: first.logits, k: 5).map(\.index)
            let ref5 = Array(ref.indices.sorted { ref[$0] > ref[$1] }.prefix(5))
            parity = Parity(maxAbsLogitDiff: diff, top5: ours5, top5MatchesReference: ours5 == ref5)
        }

        for _ in 0..<warmup { _ = try network.forward(images) }
        var times = [Double]()
        let clock = ContinuousClock()
        for _ in 0..<runs {
            let d = try clock.measure { _ = try network.forward(images) }
            times.append(Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15)
        }
        times.sort()
        let ours = Timing(runs: runs, warmup: warmup, batch: batch, p50Ms: percentile(times, 0.5), p95Ms: percentile(times, 0.95),
                          minMs: times[0], perImageP50Ms: percentile(times, 0.5) / Double(batch), input: inputSource,
                          parity: parity)

        var layerProfile: [LayerProfile]?
        if layers {
            let (h, w) = try layerInputSize()
            // Nearest-neighbour from the 224 input: real pixel statistics; the arithmetic does not depend on them.
            let input = (h, w) == (image.height, image.width) ? image : FloatImage(
                width: w, height: h, channels: 3,
                values: (0..<h * w * 3).map { i in
                    let (y, x, c) = (i / (w * 3), i / 3 % w, i % 3)
                    return image.values[((y * image.height / h) * image.width + x * image.width / w) * 3 + c]
                })
            layerProfile = try network.profile(input, runs: runs, perLayer: perLayer)
        }

        var ort: OrtResult?
        var ortNote: String?
        if skipOnnxruntime {
            ortNote = "skipped (--skip-onnxruntime)"
        } else {
            (ort, ortNote) = runOnnxruntime(referenceDir: referenceDir)
        }
        let ratio = ort.map { ours.perImageP50Ms / $0.median_ms }
        let ratioOfMinimums = ort.map { ours.minMs / Double(batch) / $0.min_ms }
        var peerResults: [PeerResult]?
        var peersNote: String?
        var ourAgreement: Double?
        if peers {
            let dump = FileManager.default.temporaryDirectory.appendingPathComponent("fm-peers-\(getpid())").path
            defer { for ext in [".f32", ".json"] { try? FileManager.default.removeItem(atPath: dump + ext) } }
            (peerResults, peersNote) = runPeers(referenceDir: referenceDir, dump: dump)
            if peerResults != nil { ourAgreement = try agreement(of: network, dump: dump) }
        }
        machine.precision = network.precision.rawValue
        let report = BenchReport(machine: machine, foodmoment: ours, layers: layerProfile, onnxruntime: ort, onnxruntimeNote: ortNote,
                                 ratio: ratio, ratioOfMinimums: ratioOfMinimums, peers: peerResults, peersNote: peersNote,
                                 top1AgreementWithOnnxruntime: ourAgreement)
        if json {
            print(try Output.json(report))
        } else {
            printText(report)
        }
    }

    func runOnnxruntime(referenceDir: String) -> (OrtResult?, String?) {
        let safetensors = (weights as NSString).appendingPathComponent("efficientnet_lite0.safetensors")
        for (path, what) in [(ortScript, "onnxruntime script"), (safetensors, "safetensors weights"),
                             ((referenceDir as NSString).appendingPathComponent("input_224.f32"), "reference input")]
        where !FileManager.default.fileExists(atPath: path) {
            return (nil, "not run: \(what) not found at \(path)")
        }
        let check = runProcess([python, "-c", "import onnx, onnxruntime"])
        guard check.status == 0 else {
            return (nil, "not run: \(python) with onnx and onnxruntime is not available (pip install onnx onnxruntime)")
        }
        let result = runProcess([python, ortScript, "--safetensors", safetensors,
                                 "--input", (referenceDir as NSString).appendingPathComponent("input_224.f32"),
                                 "--reference", (referenceDir as NSString).appendingPathComponent("logits.f32"),
                                 "--runs", String(runs), "--warmup", String(warmup)])
        guard result.status == 0, let line = result.stdout.split(separator: "\n").last,
              let parsed = try? JSONDecoder().decode(OrtResult.self, from: Data(line.utf8)) else {
            return (nil, "failed (exit \(result.status)): \(result.stderr.suffix(400))")
        }
        return (parsed, nil)
    }

    /// How often our ImageNet top-1 equals onnxruntime FP32's on the peer script's agreement photos (same tensors).
    func agreement(of network: EfficientNetLite0, dump: String) throws -> Double? {
        struct Reference: Decodable { var top1: [Int] }
        guard let data = FileManager.default.contents(atPath: dump + ".f32"),
              let json = FileManager.default.contents(atPath: dump + ".json"),
              let reference = try? JSONDecoder().decode(Reference.self, from: json),
              !reference.top1.isEmpty, data.count == reference.top1.count * 224 * 224 * 3 * 4 else { return nil }
        let values = floats(data), size = 224 * 224 * 3
        var agree = 0
        for (i, want) in reference.top1.enumerated() {
            let image = FloatImage(width: 224, height: 224, channels: 3, values: Array(values[(i * size)..<((i + 1) * size)]))
            if network.topClasses(logits: try network.forward([image])[0].logits, k: 1)[0].index == want { agree += 1 }
        }
        return Double(agree) / Double(reference.top1.count)
    }

    /// tools/onnx/int8_peers.py beside the onnxruntime script, calibrated on `<weights>/../images/train` and checked
    /// for top-1 agreement on `<weights>/../images/dev`; its agreement tensors go to `dump` for `agreement(of:dump:)`.
    func runPeers(referenceDir: String, dump: String) -> ([PeerResult]?, String?) {
        let script = ((ortScript as NSString).deletingLastPathComponent as NSString).appendingPathComponent("int8_peers.py")
        let images = ((weights as NSString).deletingLastPathComponent as NSString).appendingPathComponent("images")
        let safetensors = (weights as NSString).appendingPathComponent("efficientnet_lite0.safetensors")
        for (path, what) in [(script, "peer script"), (safetensors, "safetensors weights"), (images + "/train", "training photos")]
        where !FileManager.default.fileExists(atPath: path) {
            return (nil, "not run: \(what) not found at \(path)")
        }
        let result = runProcess([python, script, "--safetensors", safetensors,
                                 "--input", (referenceDir as NSString).appendingPathComponent("input_224.f32"),
                                 "--calibration", images + "/train", "--agreement", images + "/dev",
                                 "--runs", String(runs), "--warmup", String(warmup), "--dump", dump])
        let rows = result.stdout.split(separator: "\n").compactMap { try? JSONDecoder().decode(PeerResult.self, from: Data($0.utf8)) }
        guard result.status == 0, !rows.isEmpty else {
            return (nil, "failed (exit \(result.status)): \(result.stderr.suffix(400))")
        }
        return (rows, nil)
    }

    func printText(_ r: BenchReport) {
        let m = r.machine
        print("machine     \(m.cpu), \(m.cores) cores")
        print("build       \(m.build), GEMM kernel \(m.gemmKernel), 1x1 convolutions in \(m.precision)")
        print("target cpu  \(m.targetCPU)")
        let o = r.foodmoment
        print("input       \(o.input)")
        print("")
        print(Output.pad("engine", 14) + Output.padLeft("p50 ms", 9) + Output.padLeft("p95 ms", 9) + Output.padLeft("min ms", 9) + "  notes")
        var notes = "batch \(o.batch), \(o.runs) runs after \(o.warmup) warm-up, 1 thread"
        if o.batch > 1 { notes += String(format: ", %.3f ms/image", o.perImageP50Ms) }
        if let p = o.parity { notes += String(format: "; max |logit diff| %.2e, top-5 %@", p.maxAbsLogitDiff, p.top5MatchesReference ? "matches" : "DIFFERS") }
        if let a = r.top1AgreementWithOnnxruntime, let n = r.peers?.first?.agreement_photos {
            notes += String(format: "; ImageNet top-1 agrees with onnxruntime FP32 on %.1f %% of %d dev photos", 100 * a, n)
        }
        print(Output.pad("foodmoment", 14) + fmt(o.p50Ms) + fmt(o.p95Ms) + fmt(o.minMs) + "  " + notes)
        if let ort = r.onnxruntime {
            print(Output.pad("onnxruntime", 14) + fmt(ort.median_ms) + fmt(ort.p95_ms) + fmt(ort.min_ms) +
                  String(format: "  %@, 1 intra-op thread; max |logit diff| %.2e, top-5 %@", ort.version, ort.max_abs_logit_diff,
                         ort.top5_matches_reference ? "matches" : "DIFFERS"))
        } else {
            print(Output.pad("onnxruntime", 14) + "  " + (r.onnxruntimeNote ?? "not run"))
        }
        if let peers = r.peers {
            for p in peers {
                guard let median = p.median_ms, let fastest = p.min_ms else {
                    print(Output.pad(p.engine, 14) + "  " + (p.note ?? "not run"))
                    continue
                }
                print(Output.pad(p.engine, 24) + fmt(median) + Output.padLeft("", 9) + fmt(fastest)
                      + String(format: "  ours / it %.2f (p50); ImageNet top-1 agrees with onnxruntime FP32 on %.1f %% of %d dev photos",
                               r.foodmoment.perImageP50Ms / median, 100 * (p.top1_agreement_with_ort_fp32 ?? 0), p.agreement_photos ?? 0))
            }
        } else if let note = r.peersNote {
            print(Output.pad("int8 peers", 14) + "  " + note)
        }
        if let layers = r.layers {
            print("")
            print(Output.pad("layer", 28) + Output.padLeft("ms", 9) + Output.padLeft("MMAC", 9) + Output.padLeft("GFLOP/s", 9))
            for l in layers {
                print(Output.pad(l.kind, 28) + fmt(l.milliseconds) + Output.padLeft(String(format: "%.1f", Double(l.multiplyAdds) / 1e6), 9)
                      + Output.padLeft(String(format: "%.1f", l.gflops), 9))
            }
        }
        if let ratio = r.ratio {
            print("")
            print(String(format: "ratio foodmoment / onnxruntime (p50 per image): %.2f", ratio))
            if let m = r.ratioOfMinimums { print(String(format: "ratio foodmoment / onnxruntime (min per image): %.2f", m)) }
        }
    }

    func fmt(_ v: Double) -> String { Output.padLeft(String(format: "%.3f", v), 9) }
}

/// One percentile definition for every figure (nearest rank; `tools/onnx/ort_bench.py` uses the same).
func percentile(_ values: [Double], _ q: Double) -> Double { DecodeBenchmark.percentile(values, q) }

private func floats(_ data: Data) -> [Float] {
    let count = data.count / 4
    var out = [Float](repeating: 0, count: count)
    out.withUnsafeMutableBytes { dst in data.withUnsafeBytes { dst.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<(count * 4)])) } }
    return out
}

private func runProcess(_ argv: [String]) -> (status: Int32, stdout: String, stderr: String) {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = argv
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    do { try p.run() } catch { return (127, "", "\(error)") }
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}

struct Parity: Encodable {
    var maxAbsLogitDiff: Float
    var top5: [Int]
    var top5MatchesReference: Bool
}

struct Timing: Encodable {
    var runs: Int
    var warmup: Int
    var batch: Int
    var p50Ms: Double
    var p95Ms: Double
    var minMs: Double
    var perImageP50Ms: Double
    var input: String
    var parity: Parity?
}

struct OrtResult: Codable {
    var engine: String
    var version: String
    var threads: Int
    var runs: Int
    var median_ms: Double
    var p95_ms: Double
    var min_ms: Double
    var max_abs_logit_diff: Double
    var top5: [Int]
    var top5_matches_reference: Bool
}

struct BenchReport: Encodable {
    var machine: MachineInfo
    var foodmoment: Timing
    var layers: [LayerProfile]?
    var onnxruntime: OrtResult?
    var onnxruntimeNote: String?
    /// FoodMoment p50 per image / onnxruntime p50.
    var ratio: Double?
    /// FoodMoment fastest run per image / onnxruntime fastest run.
    var ratioOfMinimums: Double?
    /// `--peers`: the reduced-precision engines, one row each.
    var peers: [PeerResult]?
    var peersNote: String?
    /// `--peers`: the share of the peer script's agreement photos where our ImageNet top-1 is onnxruntime FP32's.
    var top1AgreementWithOnnxruntime: Double?
}

/// One engine of tools/onnx/int8_peers.py (a row without times is a note, e.g. OpenVINO not installed).
struct PeerResult: Codable {
    var engine: String
    var version: String?
    var median_ms: Double?
    var min_ms: Double?
    var top1_agreement_with_ort_fp32: Double?
    var agreement_photos: Int?
    var calibration_photos: Int?
    var note: String?
}
