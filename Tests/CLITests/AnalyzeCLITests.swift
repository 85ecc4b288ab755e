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

func foodmoment(_ args: [String], environment extra: [String: String] = [:]) throws -> ProcessResult {
    var env = ProcessInfo.processInfo.environment.merging(extra) { $1 }
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
        // A zero-byte file named like a photo is a failed photo; a text file is listed as skipped.
        let empty = try #require(byFile[batch.dir + "/empty.jpg"])
        #expect(empty["status"] as? String == "failed" && empty["error"] != nil)
        let notes = try #require(byFile[batch.dir + "/notes.txt"])
        #expect(notes["status"] as? String == "skipped" && !((notes["skip_reason"] as? String) ?? "").isEmpty)
        #expect(doc.count == batch.good.count + batch.bad.count + 2)
        for path in batch.good { #expect(["ok", "unknown"].contains(byFile[path]?["status"] as? String ?? "")) }
        for path in batch.bad { #expect(byFile[path]?["status"] as? String == "failed") }
        // Only our own notes and the closing summary on stderr: nothing from libjpeg/libpng.
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.allSatisfy { $0.hasPrefix("note: ") || $0.hasPrefix("summary: ") }, "unexpected stderr: \(r.stderr)")
        #expect(lines.last?.hasPrefix("summary: \(doc.count) files, \(batch.good.count) ok, \(batch.bad.count + 1) failed, 1 skipped") == true,
                "\(r.stderr)")
    }

    /// Every file is in every format: text, JSON, NDJSON and CSV list the same files with the same status.
    @Test func everyFileIsInEveryFormat() throws {
        let batch = try makeMixedBatch()
        defer { try? FileManager.default.removeItem(atPath: batch.dir) }
        let expected = Set(batch.good + batch.bad + [batch.dir + "/empty.jpg", batch.dir + "/notes.txt"])
        let csvPath = batch.dir + "/../\(UUID().uuidString).csv"
        defer { try? FileManager.default.removeItem(atPath: csvPath) }
        let nd = try foodmoment("analyze", batch.dir, "--ndjson", "--decode-only", "--csv", csvPath)
        #expect(nd.status == 1)
        let entries = nd.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(Set(entries.compactMap { $0["file"] as? String }) == expected)
        #expect(entries.count == expected.count)
        let csvRows = try String(contentsOfFile: csvPath, encoding: .utf8).split(separator: "\n").dropFirst()
        #expect(Set(csvRows.map { String($0.split(separator: ",")[0]) }) == expected)
        #expect(csvRows.contains { $0.hasPrefix(batch.dir + "/notes.txt,,skipped,") })
        #expect(csvRows.contains { $0.hasPrefix(batch.dir + "/empty.jpg,") && $0.contains(",failed,") })
        let text = try foodmoment("analyze", batch.dir, "--decode-only")
        #expect(text.status == 1)
        for path in expected { #expect(text.stdout.contains(path), "text output lacks \(path)") }
        #expect(text.stdout.contains("notes.txt") && text.stdout.contains("skipped: "))
    }

    /// Nutrition numbers print as the tables give them (27.99, not 27.989999771118164).
    @Test func numbersPrintAsPeopleWriteThem() throws {
        let r = try foodmoment("analyze", TestPaths.repoRoot + "/samples/banana.jpg", "--json", "--no-journal")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("per_100g"))
        let noisy = try Regex(#"[0-9]\.[0-9]{9,}"#)
        #expect(r.stdout.firstMatch(of: noisy) == nil, "float noise in \(r.stdout)")
    }

    /// A missing file named on the command line fails on its own; the others are still analysed.
    @Test func aMissingFileFailsAloneAndTheOthersAreAnalysed() throws {
        let dir = TestPaths.makeTempDirectory("missing")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let good = dir + "/good.jpg"
        try Data(TestPaths.read(TestPaths.fixture("ImageCodecsTests", "baseline.jpg"))).write(to: URL(fileURLWithPath: good))
        let r = try foodmoment("analyze", good, dir + "/missing.jpg", "--json", "--decode-only")
        #expect(r.status == 1, "\(r.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        #expect(doc.count == 2)
        #expect(doc.first { $0["file"] as? String == good }?["status"] as? String == "decoded")
        let missing = try #require(doc.first { $0["file"] as? String == dir + "/missing.jpg" })
        #expect(missing["status"] as? String == "failed")
        let message = (missing["error"] as? [String: String])?["message"] ?? ""
        #expect(message.contains("missing.jpg"), "\(missing)")
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
        #expect(try foodmoment("analyze", "/no/such/path").status == 1)
        #expect(try foodmoment("analyze", "--max-pixels", "zero", ".").status == 2)
        #expect(try foodmoment("no-such-command").status == 2)
    }

    /// What a new user mistypes gets a message that says what to type instead.
    @Test func mistypedCommandsAndValuesSayWhatToType() throws {
        let analyse = try foodmoment("analyse", "samples/")
        #expect(analyse.status == 2 && analyse.stderr.contains("did you mean 'analyze'?"), "\(analyse.stderr)")
        let dev = try foodmoment("dev", "evl")
        #expect(dev.status == 2 && dev.stderr.contains("did you mean 'eval'?"), "\(dev.stderr)")
        let limit = try foodmoment("search", "rice", "--limit", "-3")
        #expect(limit.status == 2 && limit.stderr.contains("--limit must be between 1 and 200 (got -3)"), "\(limit.stderr)")
        let threads = try foodmoment("analyze", "samples/", "--threads", "-1")
        #expect(threads.status == 2 && threads.stderr.contains("--threads must be at least 1"), "\(threads.stderr)")
        let barcode = try foodmoment("barcode", "4006381333931", "--db", "/tmp")
        #expect(barcode.status == 2 && barcode.stderr.contains("--nutrition-db"), "\(barcode.stderr)")
    }

    @Test func helpAndVersion() throws {
        let help = try foodmoment("analyze", "--help")
        #expect(help.status == 0 && help.stdout.contains("Examples:"))
        let version = try foodmoment("--version")
        #expect(version.status == 0 && !version.stdout.isEmpty)
    }
}

@Suite("HEIC and WebP photos through the real binary")
struct HeifWebPCLITests {
    /// The iPhone's format and the web's: analysed like a JPEG (samples/banana.jpg re-encoded by heif-enc and cwebp).
    @Test func aFolderOfHEICAndWebPPhotosIsAnalysed() throws {
        let dir = TestPaths.makeTempDirectory("heif-cli")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["banana.heic", "banana.webp"] {
            // Upper-case names, as phones and cameras write them.
            try Data(TestPaths.read(TestPaths.fixture("ImageCodecsTests", name))).write(to: URL(fileURLWithPath: dir + "/" + name.uppercased()))
        }
        try Data("ftypheic but not really".utf8).write(to: URL(fileURLWithPath: dir + "/IMG_0002.HEIC"))
        let r = try foodmoment("analyze", dir, "--json", "--no-journal")
        #expect(r.status == 1, "the damaged HEIC fails: \(r.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        #expect(doc.count == 3)
        for (file, format) in [("BANANA.HEIC", "heic"), ("BANANA.WEBP", "webp")] {
            let entry = try #require(doc.first { ($0["file"] as? String)?.hasSuffix(file) == true })
            #expect(entry["status"] as? String == "ok", "\(entry)")
            #expect((entry["decode"] as? [String: Any])?["format"] as? String == format)
            let foods = try #require(entry["foods"] as? [[String: Any]])
            #expect(foods.first?["label"] as? String == "banana", "\(file): \(foods)")
        }
        let bad = try #require(doc.first { ($0["file"] as? String)?.hasSuffix("IMG_0002.HEIC") == true })
        #expect(bad["status"] as? String == "failed", "named like a photo: a failed photo, not a skipped file")
    }

    /// libheif is loaded on first use; where it cannot be, a HEIC photo fails alone with the reason and what to install,
    /// and the JPEG beside it is analysed as usual.
    @Test func withoutLibheifAHEICFailsAloneAndSaysWhy() throws {
        let dir = TestPaths.makeTempDirectory("heif-missing")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["banana.heic", "banana.jpg"] {
            let source = name.hasSuffix(".jpg") ? TestPaths.repoRoot + "/samples/" + name : TestPaths.fixture("ImageCodecsTests", name)
            try Data(TestPaths.read(source)).write(to: URL(fileURLWithPath: dir + "/" + name))
        }
        let missing = dir + "/no-such-libheif.so.1"
        let r = try foodmoment(["analyze", dir, "--json", "--no-journal"], environment: ["FOODMOMENT_LIBHEIF": missing])
        #expect(r.status == 1, "one photo failed: \(r.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        #expect(doc.count == 2)
        let heic = try #require(doc.first { ($0["file"] as? String)?.hasSuffix("banana.heic") == true })
        #expect(heic["status"] as? String == "failed")
        let error = try #require(heic["error"] as? [String: Any])
        #expect(error["kind"] as? String == "decoder_unavailable", "\(error)")
        let message = try #require(error["message"] as? String)
        #expect(message.contains(missing) && message.contains("libheif1"), "names the library and what to install: \(message)")
        let jpeg = try #require(doc.first { ($0["file"] as? String)?.hasSuffix("banana.jpg") == true })
        #expect(jpeg["status"] as? String == "ok")
        #expect((jpeg["foods"] as? [[String: Any]])?.first?["label"] as? String == "banana")
    }
}
