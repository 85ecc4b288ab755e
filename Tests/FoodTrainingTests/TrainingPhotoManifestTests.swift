import FoodMomentTestSupport
import Foundation
import Testing

/// tools/data/manifest.csv, the fetched training photos (tools/data/training-photos): nothing in it may be a photo the
/// evaluations hold out — a Food-101 official test id or a ChineseFoodNet `test/` photo — and every row must name a
/// label the product has, a SHA-256 and its source.
@Suite struct TrainingPhotoManifestTests {
    static let dataDir = TestPaths.repoRoot + "/tools/data"
    static let header = ["source", "repository", "commit", "path", "sha256", "label", "split"]

    struct Row { var fields: [String: String] }

    static func rows(_ text: String) throws -> [Row] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        let head = lines.removeFirst().split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        #expect(head == header)
        return lines.map { line in
            // No field holds a comma (paths are Food-101 ids and ChineseFoodNet folder names).
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return Row(fields: Dictionary(uniqueKeysWithValues: zip(head, f + Array(repeating: "", count: max(0, head.count - f.count)))))
        }
    }

    /// What is wrong with each row: held-out photos, unknown labels, malformed hashes, duplicates.
    static func violations(_ rows: [Row], food101TestIds: Set<String>, labels: Set<String>) -> [String] {
        var out: [String] = []
        var seen = Set<String>()
        for r in rows {
            let f = r.fields
            let path = f["path"] ?? "", source = f["source"] ?? ""
            let where_ = "\(f["repository"] ?? "?"):\(path)"
            if !seen.insert((f["repository"] ?? "") + "|" + path).inserted { out.append("duplicate \(where_)") }
            let sha = f["sha256"] ?? ""
            if sha.count != 64 || !sha.allSatisfy(\.isHexDigit) { out.append("bad sha256 \(where_)") }
            if (f["commit"] ?? "").count != 40 { out.append("commit is not a full id \(where_)") }
            if !labels.contains(f["label"] ?? "") { out.append("unknown label \(f["label"] ?? "") \(where_)") }
            if !["train", "val"].contains(f["split"] ?? "") { out.append("split \(f["split"] ?? "") \(where_)") }
            switch source {
            case "chinesefoodnet":
                if !(path.hasPrefix("dataset_20cls/train/") || path.hasPrefix("dataset_20cls/val/")) {
                    out.append("ChineseFoodNet photo outside train/ and val/ \(where_)")
                }
            case "food101_thumbs", "food101_b_more":
                let parts = path.split(separator: "/")
                guard parts.count >= 2 else { out.append("no Food-101 id in \(where_)"); continue }
                let id = "\(parts[parts.count - 2])/\((String(parts[parts.count - 1]) as NSString).deletingPathExtension)"
                if food101TestIds.contains(id) { out.append("Food-101 test id \(id) \(where_)") }
            default:
                out.append("unknown source \(source) \(where_)")
            }
        }
        return out
    }

    static func food101TestIds() throws -> Set<String> {
        let text = try String(contentsOfFile: dataDir + "/food101-test-ids.txt", encoding: .utf8)
        return Set(text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init))
    }

    static func labels() throws -> Set<String> {
        let data = try Data(contentsOf: URL(fileURLWithPath: TestPaths.repoRoot + "/nutrition-db/labels.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let list = try #require(json["labels"] as? [[String: Any]])
        return Set(list.compactMap { $0["label"] as? String })
    }

    @Test func noManifestPhotoIsHeldOut() throws {
        let ids = try Self.food101TestIds()
        #expect(ids.count == 25_250, "the official Food-101 test split has 25,250 ids")
        let rows = try Self.rows(try String(contentsOfFile: Self.dataDir + "/manifest.csv", encoding: .utf8))
        #expect(rows.count > 70_000)
        let bad = Self.violations(rows, food101TestIds: ids, labels: try Self.labels())
        #expect(bad.isEmpty, "\(bad.count) bad rows, first: \(bad.prefix(5))")
        // The sources the product's vocabulary was trained from are all there.
        #expect(Set(rows.compactMap { $0.fields["source"] }) == ["food101_thumbs", "chinesefoodnet", "food101_b_more"])
    }

    @Test func theCheckCatchesHeldOutPhotos() throws {
        let commit = String(repeating: "a", count: 40), sha = String(repeating: "0", count: 64)
        let text = """
        source,repository,commit,path,sha256,label,split
        food101_thumbs,r/a,\(commit),data/train/waffles/1001.jpg,\(sha),waffles,train
        food101_thumbs,r/a,\(commit),data/train/waffles/2002.jpg,\(sha),waffles,train
        chinesefoodnet,r/b,\(commit),dataset_20cls/test/00_x/00_1.jpg,\(sha),mapo_tofu,train
        chinesefoodnet,r/b,\(commit),dataset_20cls/val/00_x/00_2.jpg,\(sha),no_such_label,val
        chinesefoodnet,r/b,\(commit),dataset_20cls/val/00_x/00_2.jpg,\(sha),mapo_tofu,val

        """
        let bad = Self.violations(try Self.rows(text), food101TestIds: ["waffles/2002"], labels: ["waffles", "mapo_tofu"])
        #expect(bad.count == 4, "\(bad)")
        #expect(bad.contains { $0.hasPrefix("Food-101 test id waffles/2002") })
        #expect(bad.contains { $0.hasPrefix("ChineseFoodNet photo outside") })
        #expect(bad.contains { $0.hasPrefix("unknown label no_such_label") })
        #expect(bad.contains { $0.hasPrefix("duplicate") })
    }
}
