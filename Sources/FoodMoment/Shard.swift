import FoodRecognition
import FoodCore
import Foundation
import ImageCodecs
import FoodVision

/// `--shard K/N`: a deterministic 1/N of the files, chosen from each file's path relative to the folder named on
/// the command line (so machines that mount the corpus in different places agree). K counts from 0, as a
/// Kubernetes Indexed Job's `JOB_COMPLETION_INDEX` does.
public struct Shard: Sendable, Equatable, CustomStringConvertible {
    public var index: Int
    public var count: Int

    public init(index: Int, count: Int) { self.index = index; self.count = count }

    /// Parses `K/N` with 0 ≤ K < N.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let k = Int(parts[0]), let n = Int(parts[1]), n >= 1, k >= 0, k < n else { return nil }
        index = k; count = n
    }

    public var description: String { "\(index)/\(count)" }

    /// Where `--shard auto` found its index and count.
    public enum Scheduler: String, Sendable, Equatable {
        case kubernetes = "Kubernetes Indexed Job"
        case slurm = "Slurm job array"
    }

    /// The shard a scheduler's array job gives this process: a Kubernetes Indexed Job (`JOB_COMPLETION_INDEX`, the count
    /// in `FOODMOMENT_SHARD_COUNT`, which the Job sets to its `completions`) or a Slurm job array (the task's place,
    /// `(SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN) / SLURM_ARRAY_TASK_STEP`, of `SLURM_ARRAY_TASK_COUNT`). The error says
    /// what is missing or inconsistent.
    public static func fromScheduler(environment env: [String: String]) -> Result<(Shard, Scheduler), ShardError> {
        func int(_ name: String) -> Result<Int?, ShardError> {
            guard let text = env[name]?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return .success(nil) }
            guard let v = Int(text) else { return .failure(.notANumber(name, text)) }
            return .success(v)
        }
        do {
            if let index = try int("JOB_COMPLETION_INDEX").get() {
                guard let count = try int("FOODMOMENT_SHARD_COUNT").get() else { return .failure(.kubernetesWithoutCount) }
                guard count >= 1, (0..<count).contains(index) else { return .failure(.outOfRange(index: index, count: count, from: .kubernetes)) }
                return .success((Shard(index: index, count: count), .kubernetes))
            }
            if let id = try int("SLURM_ARRAY_TASK_ID").get() {
                guard let count = try int("SLURM_ARRAY_TASK_COUNT").get(), let min = try int("SLURM_ARRAY_TASK_MIN").get() else {
                    return .failure(.slurmIncomplete)
                }
                let step = max(1, try int("SLURM_ARRAY_TASK_STEP").get() ?? 1)
                let offset = id - min
                guard count >= 1, offset >= 0, offset % step == 0, (0..<count).contains(offset / step) else {
                    return .failure(.outOfRange(index: offset / step, count: count, from: .slurm))
                }
                return .success((Shard(index: offset / step, count: count), .slurm))
            }
        } catch {
            return .failure(error)
        }
        return .failure(.noScheduler)
    }

    /// FNV-1a (64-bit) of the relative path, then the SplitMix64 finaliser (FNV alone spreads names that differ
    /// only in their last characters unevenly), modulo N.
    public func contains(relativePath: String) -> Bool {
        Int(SplitMix64.mix(SplitMix64.fnv1a(relativePath)) % UInt64(count)) == index
    }

    /// The path relative to the root argument it was found under (the file name for a file named directly).
    public static func relativePath(_ path: String, root: String) -> String {
        let r = root.hasSuffix("/") ? root : root + "/"
        if path.hasPrefix(r) { return String(path.dropFirst(r.count)) }
        return (path as NSString).lastPathComponent
    }
}

public enum ShardError: Error, Equatable, CustomStringConvertible {
    case noScheduler
    case kubernetesWithoutCount
    case slurmIncomplete
    case notANumber(String, String)
    case outOfRange(index: Int, count: Int, from: Shard.Scheduler)

    public var description: String {
        switch self {
        case .noScheduler:
            "--shard auto found no array job: run it as a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with "
                + "FOODMOMENT_SHARD_COUNT set to the Job's completions) or a Slurm job array (sbatch --array), or give --shard K/N"
        case .kubernetesWithoutCount:
            "JOB_COMPLETION_INDEX is set but FOODMOMENT_SHARD_COUNT is not: set it to the Job's completions (see deploy/kubernetes/batch-job.yaml)"
        case .slurmIncomplete:
            "SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MIN is not: submit with sbatch --array"
        case let .notANumber(name, value):
            "\(name)=\(value) is not a whole number"
        case let .outOfRange(index, count, from):
            "the \(from.rawValue) gives shard \(index) of \(count), which does not exist (0…\(max(0, count - 1)))"
        }
    }
}
