import FoodMomentTestSupport
import Foundation
import Testing

/// The batch outputs of the real binary: NDJSON, CSV, shards + merge-results, --log + report.
@Suite("foodmoment analyze batches (the real binary)")
struct BatchCLITests {
    let samples = TestPaths.repoRoot + "/samples"

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
