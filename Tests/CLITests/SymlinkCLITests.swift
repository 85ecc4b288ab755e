import FoodMomentTestSupport
import Foundation
import Testing

/// Symbolic links cannot trap or redirect a run: a folder walk through a symlink cycle ends and analyses each photo
/// once, and `--csv` refuses to write through a link planted at the path the user named.
/// The time limit only guards against a hang (each run of the binary also has `runProcess`'s own limit): the binary
/// may be a sanitizer build, on a 2-core machine shared with CPU-bound tests.
@Suite("Symbolic links (real binary)", .timeLimit(.minutes(10)))
struct SymlinkCLITests {
    @Test func folderWalkThroughASymlinkCycleEnds() throws {
        let dir = TestPaths.makeTempDirectory("symlink-cycle")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fm = FileManager.default
        try fm.createDirectory(atPath: dir + "/a/b", withIntermediateDirectories: true)
        try fm.copyItem(atPath: TestPaths.repoRoot + "/samples/banana.jpg", toPath: dir + "/a/banana.jpg")
        try fm.copyItem(atPath: TestPaths.repoRoot + "/samples/apple.jpg", toPath: dir + "/a/b/apple.jpg")
        // a/b/up -> .. (a), a/b/self -> . , a/loop -> the folder itself by absolute path, and a two-link cycle.
        try fm.createSymbolicLink(atPath: dir + "/a/b/up", withDestinationPath: "..")
        try fm.createSymbolicLink(atPath: dir + "/a/b/self", withDestinationPath: ".")
        try fm.createSymbolicLink(atPath: dir + "/a/loop", withDestinationPath: dir + "/a")
        try fm.createSymbolicLink(atPath: dir + "/a/x", withDestinationPath: dir + "/a/y")
        try fm.createSymbolicLink(atPath: dir + "/a/y", withDestinationPath: dir + "/a/x")

        let r = try runProcess(foodmomentBinary, ["analyze", dir + "/a", "--decode-only", "--ndjson", "--no-journal"],
                               environment: ["FOODMOMENT_HOME": emptyHome, "PATH": "/usr/bin:/bin"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let files = lines.filter { $0["status"] as? String != "skipped" }.compactMap { $0["file"] as? String }
        #expect(files.count == 2, "each photo once, got \(files)")
        // The two-link cycle cannot be opened: listed as skipped (broken links), not silently dropped.
        let skipped = lines.filter { $0["status"] as? String == "skipped" }.compactMap { $0["file"] as? String }
        #expect(Set(skipped.map { ($0 as NSString).lastPathComponent }) == ["x", "y"], "\(skipped)")
        #expect(files.contains { $0.hasSuffix("banana.jpg") } && files.contains { $0.hasSuffix("apple.jpg") }, "\(files)")
    }

    @Test func csvRefusesToWriteThroughASymlink() throws {
        let dir = TestPaths.makeTempDirectory("symlink-csv")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let victim = dir + "/victim.txt"
        try Data("precious\n".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createSymbolicLink(atPath: dir + "/out.csv", withDestinationPath: victim)

        let r = try runProcess(foodmomentBinary, ["analyze", TestPaths.repoRoot + "/samples/banana.jpg", "--decode-only", "--csv", dir + "/out.csv", "--no-journal"],
                               environment: ["FOODMOMENT_HOME": emptyHome, "PATH": "/usr/bin:/bin"])
        #expect(r.status != 0, "writing through a link must fail")
        #expect(r.stderr.contains("symbolic link"), "\(r.stderr)")
        #expect(String(decoding: TestPaths.read(victim), as: UTF8.self) == "precious\n", "the link's target is untouched")

        // The same path as a plain file works (the refusal is about the link, not the folder).
        try FileManager.default.removeItem(atPath: dir + "/out.csv")
        let ok = try runProcess(foodmomentBinary, ["analyze", TestPaths.repoRoot + "/samples/banana.jpg", "--decode-only", "--csv", dir + "/out.csv", "--no-journal"],
                                environment: ["FOODMOMENT_HOME": emptyHome, "PATH": "/usr/bin:/bin"])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir + "/out.csv"))
    }
}

/// A named pipe among the photos (or named on the command line) cannot hang a batch: opening one for reading waits for
/// a writer that never comes. In a folder it is skipped with its reason; named as a photo, it fails with its reason.
@Suite("Named pipes (real binary)", .timeLimit(.minutes(10)))
struct NamedPipeCLITests {
    @Test func aNamedPipeIsSkippedOrFailsButNeverWaitedOn() throws {
        let dir = TestPaths.makeTempDirectory("named-pipe")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.copyItem(atPath: TestPaths.repoRoot + "/samples/banana.jpg", toPath: dir + "/banana.jpg")
        #expect(mkfifo(dir + "/pipe.jpg", 0o644) == 0)
        #expect(mkfifo(dir + "/pipe", 0o644) == 0)   // not named like a photo: the walk used to open it to sniff it
        let r = try runProcess(foodmomentBinary, ["analyze", dir, "--decode-only", "--ndjson", "--no-journal"],
                               environment: ["FOODMOMENT_HOME": emptyHome, "PATH": "/usr/bin:/bin"], timeout: .seconds(120))
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let byName = Dictionary(uniqueKeysWithValues: lines.compactMap { line in
            (line["file"] as? String).map { (($0 as NSString).lastPathComponent, line) }
        })
        #expect(byName["banana.jpg"]?["status"] as? String == "decoded", "\(r.stdout)")
        for name in ["pipe.jpg", "pipe"] {
            #expect(byName[name]?["status"] as? String == "skipped", "\(name): \(r.stdout)")
            let reason = byName[name]?["skip_reason"] as? String
            #expect(reason?.contains("named pipe") == true, "\(name): \(r.stdout)")
        }

        let named = try runProcess(foodmomentBinary, ["analyze", dir + "/pipe.jpg", dir + "/banana.jpg", "--decode-only", "--no-journal"],
                                   environment: ["FOODMOMENT_HOME": emptyHome, "PATH": "/usr/bin:/bin"], timeout: .seconds(120))
        #expect(named.status == 1, "the pipe fails, the photo is decoded: \(named.stdout) \(named.stderr)")
        #expect((named.stdout + named.stderr).contains("named pipe"), "\(named.stdout) \(named.stderr)")
    }
}

/// A file name may hold a newline or a terminal escape sequence: the text output writes them out (one photo, one line,
/// nothing sent to the terminal as a command), while JSON keeps the name exactly.
@Suite("Control characters in file names (real binary)", .timeLimit(.minutes(10)))
struct ControlCharacterNameCLITests {
    @Test func theTextOutputWritesControlCharactersOut() throws {
        let dir = TestPaths.makeTempDirectory("control-names")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let name = "lunch\nsecond line\u{1B}[2J.jpg"
        try FileManager.default.copyItem(atPath: TestPaths.repoRoot + "/samples/banana.jpg", toPath: dir + "/" + name)
        let text = try runProcess(foodmomentBinary, ["analyze", dir, "--decode-only", "--no-journal"],
                                  environment: ["FOODMOMENT_HOME": emptyHome, "PATH": "/usr/bin:/bin"])
        #expect(text.status == 0, "\(text.stderr)")
        #expect(!text.stdout.contains("\u{1B}"), "no escape byte reaches the terminal: \(text.stdout)")
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.count == 2 && lines.last?.hasPrefix("1 files, 1 ok") == true, "one line for the photo, then the summary: \(lines)")
        #expect(lines.first?.contains("lunch\\nsecond line\\u{1B}[2J.jpg") == true, "\(text.stdout)")

        let json = try runProcess(foodmomentBinary, ["analyze", dir, "--decode-only", "--json", "--no-journal"],
                                  environment: ["FOODMOMENT_HOME": emptyHome, "PATH": "/usr/bin:/bin"])
        let results = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(results?.first?["file"] as? String == dir + "/" + name, "JSON keeps the exact name")
    }
}
