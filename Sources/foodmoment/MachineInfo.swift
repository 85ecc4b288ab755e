import FoodVision
import Foundation

/// What a benchmark figure was measured on: printed as a header and embedded in JSON.
struct MachineInfo: Encodable {
    var cpu: String
    var cores: Int
    var build: String
    var targetCPU: String
    var swift: String
    /// The GEMM micro-kernel the CNN runtime measured fastest here (hints at the vector width compiled in).
    var gemmKernel: String
    /// The arithmetic of the CNN's 1x1 convolutions (`InferencePrecision.automatic` unless a command says otherwise).
    var precision: String

    static func current() -> MachineInfo {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" } ?? "unknown"
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        #if FOODMOMENT_CPU_TUNED
        let target = "tuned: built with FOODMOMENT_TARGET_CPU=<cpu> (-target-cpu)"
        #else
        let target = "portable (built without FOODMOMENT_TARGET_CPU)"
        #endif
        return MachineInfo(cpu: model, cores: ProcessInfo.processInfo.activeProcessorCount, build: build,
                           targetCPU: target, swift: "6.x", gemmKernel: (ProcessSettings.inference().kernel ?? GemmKernel.fastest).rawValue,
                           precision: ProcessSettings.inference().precision.rawValue)
    }

    var header: String {
        "machine: \(cpu), \(cores) cores; build: \(build); cpu target: \(targetCPU)"
    }

    /// Peak resident set size of this process (getrusage, kilobytes on Linux).
    func peakRSSMegabytes() -> Int {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int(usage.ru_maxrss) / 1024
    }
}
