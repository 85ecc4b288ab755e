import FoodMomentTestSupport
import Foundation
import Testing

/// The built `foodmoment` binary, next to the test bundle.
let foodmomentBinary: String = {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("foodmoment").path
}()

/// Runs the binary with an empty data folder, so foods taught on this machine cannot change the answers.
func foodmoment(_ args: String...) throws -> ProcessResult {
    try foodmoment(args)
}

func foodmoment(_ args: [String]) throws -> ProcessResult {
    var env = ProcessInfo.processInfo.environment
    env["FOODMOMENT_HOME"] = emptyHome
    return try runProcess(foodmomentBinary, args, environment: env)
}

let emptyHome: String = TestPaths.makeTempDirectory("home")

/// A folder with good photos, every bad input of the corpus, a non-image and a nested folder.
func makeMixedBatch() throws -> (dir: String, good: [String], bad: [String]) {
    let dir = TestPaths.makeTempDirectory("batch")
    var good: [String] = [], bad: [String] = []
    for name in ["baseline.jpg", "orientation_6.jpg", "palette.png"] {
        let path = dir + "/good-" + name
        try Data(TestPaths.read(TestPaths.fixture("ImageCodecsTests", name))).write(to: URL(fileURLWithPath: path))
        good.append(path)
    }
    try FileManager.default.createDirectory(atPath: dir + "/nested", withIntermediateDirectories: true)
    let nested = dir + "/nested/good-rgba.png"
    try Data(TestPaths.read(TestPaths.fixture("ImageCodecsTests", "rgba.png"))).write(to: URL(fileURLWithPath: nested))
    good.append(nested)
    for (i, c) in BadInputs.all.enumerated() where !c.expectedKinds.contains("not_an_image") && !c.expectedKinds.contains("empty") {
        let path = dir + String(format: "/bad-%02d.jpg", i)
        try Data(c.bytes).write(to: URL(fileURLWithPath: path))
        bad.append(path)
    }
    try Data("shopping list".utf8).write(to: URL(fileURLWithPath: dir + "/notes.txt"))
    try Data().write(to: URL(fileURLWithPath: dir + "/empty.jpg"))
    return (dir, good, bad)
}

@Suite("foodmoment analyze (the real binary)")
struct AnalyzeCLITests {
    @Test func batchWithBadFilesStillProcessesGoodOnes() throws {
        let batch = try makeMixedBatch()
        defer { try? FileManager.default.removeItem(atPath: batch.dir) }
        let r = try foodmoment("analyze", batch.dir, "--json")
        #expect(r.status == 1, "some failed -> exit 1")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        let byFile = Dictionary(uniqueKeysWithValues: doc.map { ($0["file"] as! String, $0) })
        for path in batch.good {
            let entry = try #require(byFile[path], "missing \(path)")
            #expect(entry["error"] == nil)
            let decode = try #require(entry["decode"] as? [String: Any])
            #expect(decode["width"] as? Int == 48 && decode["height"] as? Int == 32)
        }
        for path in batch.bad {
            let entry = try #require(byFile[path], "missing \(path)")
            let error = try #require(entry["error"] as? [String: String])
            #expect(error["kind"] != nil && !(error["message"] ?? "").isEmpty)
        }
        #expect(doc.count == batch.good.count + batch.bad.count)
        // Only our own notes and the closing summary on stderr: nothing from libjpeg/libpng.
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.allSatisfy { $0.hasPrefix("note: ") || $0.hasPrefix("summary: ") }, "unexpected stderr: \(r.stderr)")
        #expect(lines.last?.hasPrefix("summary: \(doc.count) files, \(batch.good.count) ok, \(batch.bad.count) failed") == true)
        #expect(r.stderr.contains("notes.txt") && r.stderr.contains("empty.jpg"))
    }

    @Test func explicitlyNamedBadFileIsAnError() throws {
        let dir = TestPaths.makeTempDirectory()
        let path = dir + "/lunch.jpg"
        try Data("not a photo".utf8).write(to: URL(fileURLWithPath: path))
        let r = try foodmoment("analyze", path, "--json")
        #expect(r.status == 1)
        #expect(r.stdout.contains("\"kind\" : \"not_an_image\""))
        #expect(r.stderr.hasPrefix("summary: 1 files, 0 ok, 1 failed"))
        #expect(r.stderr.split(separator: "\n").count == 1)
    }

    @Test func allGoodExitsZeroWithTextOutput() throws {
        let r = try foodmoment("analyze", TestPaths.fixture("ImageCodecsTests", "orientation_6.jpg"))
        #expect(r.status == 0)
        #expect(r.stdout.contains("48x32") && r.stdout.contains("EXIF 6 (rotate 90° CW)"))
    }

    @Test func usageErrorsExitTwo() throws {
        #expect(try foodmoment("analyze").status == 2)
        #expect(try foodmoment("analyze", "/no/such/path").status == 2)
        #expect(try foodmoment("analyze", "--max-pixels", "zero", ".").status == 2)
        #expect(try foodmoment("no-such-command").status == 2)
    }

    @Test func helpAndVersion() throws {
        let help = try foodmoment("analyze", "--help")
        #expect(help.status == 0 && help.stdout.contains("Examples:"))
        let version = try foodmoment("--version")
        #expect(version.status == 0 && !version.stdout.isEmpty)
    }
}
