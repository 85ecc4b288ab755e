import Dispatch
public import Foundation
import FoodCore
#if canImport(Glibc)
import Glibc
#endif

/// Locations tests need: the repository root (from this file's path), fixtures, and `../shared/data`.
public enum TestPaths {
    public static let repoRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() } // Tests/Support/TestPaths.swift -> repo
        return url.path
    }()

    public static func fixture(_ module: String, _ name: String) -> String {
        "\(repoRoot)/Tests/\(module)/Fixtures/\(name)"
    }

    /// `../shared/data` beside the checkout (CI and developers have it; the product never needs it).
    public static let sharedData: String = {
        if let env = ProcessInfo.processInfo.environment["FOODMOMENT_SHARED_DATA"], !env.isEmpty { return env }
        return URL(fileURLWithPath: repoRoot).deletingLastPathComponent().appendingPathComponent("shared/data").path
    }()

    public static var hasSharedData: Bool {
        FileManager.default.fileExists(atPath: sharedData + "/README.md")
    }

    public static func read(_ path: String) -> [UInt8] {
        (try? Array(Data(contentsOf: URL(fileURLWithPath: path)))) ?? []
    }

    /// A fresh empty temporary directory.
    public static func makeTempDirectory(_ label: String = "fm") -> String {
        let path = NSTemporaryDirectory() + "\(label)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// Runs a program and captures stdout, stderr and the exit status.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var stdoutBytes: [UInt8]
}

/// A program still running after `timeout` has hung (every program the tests run ends in seconds, sanitizer builds
/// included): it is killed with SIGKILL and its stderr says so, so the test fails instead of blocking the run forever
/// (a time limit cannot interrupt a test blocked in `waitUntilExit`).
public func runProcess(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                       timeout: Duration = .seconds(300)) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    let dir = TestPaths.makeTempDirectory("proc")
    let outPath = dir + "/out", errPath = dir + "/err"
    // A file that cannot be made fails the FileHandle below with its reason.
    _ = FileManager.default.createFile(atPath: outPath, contents: nil)
    _ = FileManager.default.createFile(atPath: errPath, contents: nil)
    let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
    let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    try process.run()
    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
    let hung = exited.wait(timeout: .now() + seconds) == .timedOut
    if hung { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    try out.close(); try err.close()
    let o = TestPaths.read(outPath), e = TestPaths.read(errPath)
    try? FileManager.default.removeItem(atPath: dir)
    var errText = String(decoding: e, as: UTF8.self)
    if hung { errText += "\nrunProcess: \(executable) \(arguments.joined(separator: " ")) was still running after \(timeout) and was killed\n" }
    return ProcessResult(status: process.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                         stderr: errText, stdoutBytes: o)
}

/// PPM/PGM (binary P6/P5) reader for `djpeg` output.
public func parsePNM(_ bytes: [UInt8]) -> (width: Int, height: Int, rgb: [UInt8])? {
    var i = 0
    func token() -> String? {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 || bytes[i] == 0x23 {
            if bytes[i] == 0x23 { while i < bytes.count, bytes[i] != 0x0A { i += 1 } } else { i += 1 }
        }
        let start = i
        while i < bytes.count, !(bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09) { i += 1 }
        return start < i ? String(decoding: bytes[start..<i], as: UTF8.self) : nil
    }
    guard let magic = token(), let w = token().flatMap(Int.init), let h = token().flatMap(Int.init), token() != nil else { return nil }
    i += 1
    if magic == "P6" {
        guard bytes.count - i >= w * h * 3 else { return nil }
        return (w, h, Array(bytes[i..<(i + w * h * 3)]))
    }
    if magic == "P5" {
        guard bytes.count - i >= w * h else { return nil }
        return (w, h, bytes[i..<(i + w * h)].flatMap { [$0, $0, $0] })
    }
    return nil
}

extension TestPaths {
    /// The bundled backbone (`models/efficientnet-lite0`).
    public static var model: URL { URL(fileURLWithPath: repoRoot + "/models/efficientnet-lite0") }
}

/// FoodCore's SplitMix64 with float helpers, so golden tests are reproducible.
public struct TestRandom {
    private var rng: SplitMix64
    public init(seed: UInt64) { rng = SplitMix64(seed: seed) }
    public mutating func next() -> UInt64 { rng.next() }
    /// Uniform in [-1, 1).
    public mutating func float() -> Float { Float(next() >> 40) / Float(1 << 24) * 2 - 1 }
    public mutating func floats(_ n: Int) -> [Float] { (0..<n).map { _ in float() } }
}

public func maxAbsDiff(_ a: [Float], _ b: [Float]) -> Float {
    precondition(a.count == b.count)
    return zip(a, b).reduce(0) { max($0, abs($1.0 - $1.1)) }
}
