import FoodMomentTestSupport
import FoodVision
import Foundation
import Testing

/// The batch outputs of the real binary: NDJSON, CSV, shards + merge-results, --log + report.
@Suite("foodmoment analyze batches (the real binary)")
struct BatchCLITests {
    let samples = TestPaths.repoRoot + "/samples"

    /// `foodmoment analyze samples/banana.jpg` with its data folder in `home` and, when given, FOODMOMENT_PRECISION.
    func analyzeBanana(home: String, _ extra: [String] = [], precisionVariable: String? = nil) throws -> ProcessResult {
        var env = ProcessInfo.processInfo.environment
        env["FOODMOMENT_HOME"] = home
        env["FOODMOMENT_PRECISION"] = precisionVariable
        return try runProcess(foodmomentBinary, ["analyze", samples + "/banana.jpg"] + extra, environment: env)
    }

    /// A result made in one arithmetic is not served to a run in another: the precision is part of the journal's key
    /// (where the CPU has no BF16, `bf16` runs FP32 and the journal rightly serves it).
    @Test func aRunInAnotherPrecisionAnalysesAgain() throws {
        let home = TestPaths.makeTempDirectory("precision-home")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let first = try analyzeBanana(home: home, precisionVariable: "fp32")
        let same = try analyzeBanana(home: home, precisionVariable: "fp32")
        let other = try analyzeBanana(home: home, precisionVariable: "bf16")
        #expect(first.status == 0 && same.status == 0 && other.status == 0, "\(first.stderr)\(other.stderr)")
        #expect(!first.stdout.contains("from the journal") && same.stdout.contains("0 analysed, 1 from the journal"))
        #expect(other.stdout.contains("from the journal") == !InferencePrecision.bf16Supported, "\(other.stdout)")
    }

    /// `--precision` does what FOODMOMENT_PRECISION does, and wins over it: the flag's arithmetic is the one the
    /// journal's key records, and the numbers differ where the CPU has BF16.
    @Test func thePrecisionFlagChoosesTheArithmetic() throws {
        let home = TestPaths.makeTempDirectory("precision-flag-home")
        defer { try? FileManager.default.removeItem(atPath: home) }
        func analyze(_ extra: [String], environment precision: String? = nil) throws -> ProcessResult {
            try analyzeBanana(home: home, ["--json"] + extra, precisionVariable: precision)
        }
        func topProbability(_ r: ProcessResult) -> Double? {
            let photos = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]
            return ((photos?.first?["top"] as? [[String: Any]])?.first?["probability"] as? NSNumber)?.doubleValue
        }
        let fp32 = try analyze(["--precision", "fp32", "--no-journal"])
        let bf16 = try analyze(["--precision", "bf16", "--no-journal"], environment: "fp32")
        let envFP32 = try analyze(["--no-journal"], environment: "fp32")
        #expect(fp32.status == 0 && bf16.status == 0 && envFP32.status == 0, "\(fp32.stderr)\(bf16.stderr)")
        let hasBF16 = InferencePrecision.bf16Supported
        let p32 = try #require(topProbability(fp32)), p16 = try #require(topProbability(bf16))
        #expect(topProbability(envFP32) == p32)
        #expect((p32 != p16) == hasBF16, "fp32 \(p32), bf16 \(p16)")
        // Each result and the summary line say which arithmetic the answers came from.
        func precision(_ r: ProcessResult) -> String? {
            let photos = try? JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]
            return photos?.first?["precision"] as? String
        }
        let bf16Name = hasBF16 ? "bf16" : "fp32"
        #expect(precision(fp32) == "fp32" && precision(envFP32) == "fp32" && precision(bf16) == bf16Name)
        #expect(fp32.stderr.contains("on 1 thread in FP32") && bf16.stderr.contains("in \(bf16Name.uppercased())"), "\(fp32.stderr)")
        // The journal: a result made in FP32 is not served to a BF16 run.
        let first = try analyze(["--precision", "fp32"]), again = try analyze(["--precision", "bf16"])
        #expect(first.status == 0 && again.status == 0)
        #expect(topProbability(again) == (hasBF16 ? p16 : p32) && precision(again) == bf16Name)
        // Neither flag nor variable: INT8 where the CPU has VNNI and BF16 (the measured combination), the same numbers
        // as `--precision int8`.
        let plain = try analyze(["--no-journal"]), int8 = try analyze(["--precision", "int8", "--no-journal"])
        let preferred = InferencePrecision.preferred
        #expect(preferred == (InferencePrecision.int8Supported && hasBF16 ? .int8 : hasBF16 ? .bf16 : .fp32))
        #expect(precision(plain) == preferred.rawValue && plain.stderr.contains("in \(preferred.rawValue.uppercased())"), "\(plain.stderr)")
        if preferred == .int8 { #expect(topProbability(plain) == topProbability(int8) && precision(int8) == "int8") }
        let unknown = try analyze(["--precision", "fp16"])
        #expect(unknown.status == 2 && unknown.stderr.contains("fp16"), "\(unknown.stderr)")
    }

    func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test func ndjsonAndCSVDescribeEveryPhoto() throws {
        let dir = TestPaths.makeTempDirectory("batch-cli")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try foodmoment("analyze", samples, "--ndjson", "--csv", dir + "/out.csv", "--no-journal")
        #expect(r.status == 0, "\(r.stderr)")
        // Six photos and samples/README.md, listed as skipped.
        let results = lines(r.stdout)
        #expect(results.count == 7 && r.stdout.split(separator: "\n").count == 7)
        let photos = results.filter { $0["status"] as? String != "skipped" }
        #expect(photos.count == 6 && photos.allSatisfy { ($0["photo_hash"] as? String)?.count == 64 })
        #expect(results.contains { ($0["file"] as? String)?.hasSuffix("README.md") == true && $0["status"] as? String == "skipped" })
        let csv = String(decoding: TestPaths.read(dir + "/out.csv"), as: UTF8.self).split(separator: "\n")
        #expect(csv.first?.hasPrefix("file,photo_hash,status,error,label") == true)
        let foods = results.reduce(0) { $0 + (($1["foods"] as? [Any])?.count ?? 0) }
        #expect(csv.count == 1 + foods + 1)
    }

    @Test func shardsPartitionTheFilesAndMergeBackToTheWhole() throws {
        let dir = TestPaths.makeTempDirectory("shards")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let whole = try foodmoment("analyze", samples, "--ndjson", "--no-journal")
        let wholeFiles = Set(lines(whole.stdout).compactMap { $0["file"] as? String })
        var parts: [String] = []
        var seen: [String] = []
        for k in 0..<3 {
            let r = try foodmoment("analyze", samples, "--ndjson", "--no-journal", "--shard", "\(k)/3")
            #expect(r.status == 0)
            let path = dir + "/part-\(k).ndjson"
            try Data(r.stdout.utf8).write(to: URL(fileURLWithPath: path))
            parts.append(path)
            seen += lines(r.stdout).compactMap { $0["file"] as? String }
        }
        #expect(seen.count == wholeFiles.count && Set(seen) == wholeFiles)
        let merged = try foodmoment(["merge-results"] + parts)
        #expect(merged.status == 0)
        #expect(Set(lines(merged.stdout).compactMap { $0["file"] as? String }) == wholeFiles)
        let bad = try foodmoment("analyze", samples, "--shard", "3/3")
        #expect(bad.status == 2 && bad.stderr.contains("--shard"))

        // `--shard auto` as the array jobs of deploy/ run it: three Kubernetes indexes, then a Slurm array 1-9:4.
        let k8s: [[String: String]] = (0..<3).map { ["JOB_COMPLETION_INDEX": "\($0)", "FOODMOMENT_SHARD_COUNT": "3"] }
        let slurm: [[String: String]] = [1, 5, 9].map { ["SLURM_ARRAY_TASK_ID": "\($0)", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_STEP": "4",
                                                         "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_JOB_ID": "77"] }
        for (name, environments) in [("k8s", k8s), ("slurm", slurm)] {
            var autoParts: [String] = []
            for (i, env) in environments.enumerated() {
                let r = try foodmoment(["analyze", samples, "--ndjson", "--no-journal", "--shard", "auto"], environment: env)
                #expect(r.status == 0 && r.stderr.contains("shard \(i)/3 from the"), "\(name) \(i): \(r.stderr)")
                let path = dir + "/\(name)-\(i).ndjson"
                try Data(r.stdout.utf8).write(to: URL(fileURLWithPath: path))
                autoParts.append(path)
                // The same shard as --shard i/3: the scheduler only chooses which one.
                let byHand = try String(contentsOfFile: parts[i], encoding: .utf8)
                #expect(Set(lines(r.stdout).compactMap { $0["file"] as? String }) == Set(lines(byHand).compactMap { $0["file"] as? String }))
            }
            let joined = try foodmoment(["merge-results"] + autoParts)
            #expect(joined.status == 0 && Set(lines(joined.stdout).compactMap { $0["file"] as? String }) == wholeFiles, "\(name)")
            // The merge equals one run: per file, the same status, foods and grams.
            func answers(_ text: String) -> [String: String] {
                Dictionary(lines(text).compactMap { o -> (String, String)? in
                    guard let file = o["file"] as? String else { return nil }
                    let foods = (o["foods"] as? [[String: Any]] ?? []).map { "\($0["label"] ?? "")@\($0["grams"] ?? "")" }
                    return (file, "\(o["status"] ?? "") \(foods.joined(separator: ","))")
                }, uniquingKeysWith: { a, _ in a })
            }
            #expect(answers(joined.stdout) == answers(whole.stdout), "\(name)")
        }
        let noScheduler = try foodmoment(["analyze", samples, "--shard", "auto"], environment: ["JOB_COMPLETION_INDEX": "", "SLURM_ARRAY_TASK_ID": ""])
        #expect(noScheduler.status == 2 && noScheduler.stderr.contains("Kubernetes Indexed Job") && noScheduler.stderr.contains("Slurm"))
    }

    /// The array jobs shipped in deploy/ run `--shard auto` the way the test above does, with a count that matches.
    @Test func deployFilesRunShardAuto() throws {
        let job = try String(contentsOfFile: TestPaths.repoRoot + "/deploy/kubernetes/batch-job.yaml", encoding: .utf8)
        func value(after key: String) -> String? {
            guard let line = job.split(separator: "\n").first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix(key) }) else { return nil }
            return line.split(separator: ":", maxSplits: 1).last?.split(separator: "#").first?.trimmingCharacters(in: .whitespaces)
                .trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        #expect(value(after: "completionMode:") == "Indexed" && job.contains("--shard auto") && job.contains("FOODMOMENT_SHARD_COUNT"))
        let lines = job.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let countValue = lines.firstIndex(of: "- name: FOODMOMENT_SHARD_COUNT").map { lines[$0 + 1] }
        #expect(countValue == "value: \"\(value(after: "completions:") ?? "?")\"", "FOODMOMENT_SHARD_COUNT must equal completions")
        let slurm = try String(contentsOfFile: TestPaths.repoRoot + "/deploy/slurm-array.sh", encoding: .utf8)
        #expect(slurm.contains("#SBATCH --array=") && slurm.contains("--shard auto"))
        #expect(try runProcess("/bin/bash", ["-n", TestPaths.repoRoot + "/deploy/slurm-array.sh"]).status == 0)
    }

    @Test func loggedPhotosBecomeAReport() throws {
        let dir = TestPaths.makeTempDirectory("report")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = dir + "/meals.sqlite"
        let first = try foodmoment("analyze", samples, "--log", "--db", db, "--annotate", dir + "/annotated")
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("📔"))
        let pictures = try FileManager.default.contentsOfDirectory(atPath: dir + "/annotated").filter { $0.hasSuffix(".jpg") }
        #expect(pictures.count == 6)
        let again = try foodmoment("analyze", samples, "--log", "--db", db)
        #expect(again.stdout.contains("0 analysed, 6 from the journal") && again.stdout.contains("6 already logged"))
        let report = try foodmoment("report", samples, "--db", db, "--html", dir + "/r.html")
        #expect(report.status == 0, "\(report.stderr)")
        let html = String(decoding: TestPaths.read(dir + "/r.html"), as: UTF8.self)
        #expect(html.contains("<svg") && html.contains("data:image/jpeg;base64,"))
        #expect(!html.contains("http://") && !html.contains("https://"))
    }
}
