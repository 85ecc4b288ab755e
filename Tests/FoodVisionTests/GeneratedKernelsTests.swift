import Foundation
import Testing

/// The SIMD kernels in `Sources/FoodVision` that scripts in `tools/` write: each committed file must be exactly
/// what its generator writes today, so a hand edit (or a generator change without regenerating) fails here.
@Suite("Generated kernels")
struct GeneratedKernelsTests {
    @Test(.enabled(if: Python3.path != nil, "python3 is not on PATH"))
    func gemmMicroKernelsMatchTheirGenerator() throws {
        try expectGenerated("Sources/FoodVision/GemmMicroKernels.swift", by: "tools/gen_gemm_kernels.py")
    }

    @Test(.enabled(if: Python3.path != nil, "python3 is not on PATH"))
    func depthwiseRowKernelsMatchTheirGenerator() throws {
        try expectGenerated("Sources/FoodVision/DepthwiseRowKernels.swift", by: "tools/gen_depthwise_kernels.py")
    }

    /// Runs `python3 <generator> --output <temporary file>` and compares that file with `committed`, byte for byte.
    private func expectGenerated(_ committed: String, by generator: String) throws {
        let python = try #require(Python3.path)
        let root = TestPaths.repoRoot
        let output = FileManager.default.temporaryDirectory
            .appendingPathComponent("fv-generated-\(UUID().uuidString).swift")
        defer { try? FileManager.default.removeItem(at: output) }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [root.appendingPathComponent(generator).path, "--output", output.path]
        process.currentDirectoryURL = root
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let stderr = Pipe()
        process.standardError = stderr
        try process.run()
        let messages = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationReason == .exit && process.terminationStatus == 0,
                     "\(python) \(generator) --output … failed (status \(process.terminationStatus)): \(messages)")

        let generated = try Data(contentsOf: output)
        let onDisk = try Data(contentsOf: root.appendingPathComponent(committed))
        guard generated != onDisk else { return }
        // Name the first line that differs, so the failure says where the file was edited by hand.
        let new = String(decoding: generated, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let old = String(decoding: onDisk, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let line = zip(new, old).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(new.count, old.count)
        Issue.record("""
            \(committed) is not what \(generator) writes (first difference at line \(line + 1): \
            committed \(line < old.count ? "\"\(old[line])\"" : "<end of file>"), \
            generated \(line < new.count ? "\"\(new[line])\"" : "<end of file>")). \
            Edit the generator, then run: python3 \(generator) --output \(committed)
            """)
    }
}

/// `python3` as found on PATH (the generators need nothing beyond the standard library).
enum Python3 {
    static let path: String? = {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        for directory in directories where !directory.isEmpty {
            let candidate = "\(directory)/python3"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }()
}
