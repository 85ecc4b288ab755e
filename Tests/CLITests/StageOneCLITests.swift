import FoodCore
import FoodMomentTestSupport
import Foundation
import ImageCodecs
import Testing

/// A generated striped photo (a "food" no model knows), written as PNG.
func writeStripes(_ path: String, seed: UInt64) throws {
    try Data(try ImageEncoder.png(GeneratedPhotos.stripes(seed: seed))).write(to: URL(fileURLWithPath: path))
}

@Suite("foodmoment stage 1 commands (the real binary)")
struct StageOneCLITests {
    @Test func analyzeSamplesFindsFoodsWithNutrition() throws {
        let r = try foodmoment("analyze", TestPaths.repoRoot + "/samples", "--json")
        #expect(r.status == 0, "\(r.stderr)")
        let all = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        let doc = all.filter { $0["status"] as? String != "skipped" }
        #expect(doc.count == 6 && all.count == 7, "six photos and samples/README.md (skipped)")
        let banana = try #require(doc.first { ($0["file"] as? String)?.hasSuffix("banana.jpg") == true })
        let foods = try #require(banana["foods"] as? [[String: Any]])
        let first = try #require(foods.first)
        #expect(first["label"] as? String == "banana")
        for key in ["name", "name_zh", "emoji", "color", "confidence", "box", "grams", "grams_source", "kcal", "food_id"] {
            #expect(first[key] != nil, "missing \(key)")
        }
        let box = try #require(first["box"] as? [String: Double])
        #expect(Set(box.keys) == ["x", "y", "w", "h"])
        #expect((first["kcal"] as? Double ?? 0) > 80)  // 118 g banana ≈ 105 kcal
        // Totals are the sum of the foods' kcal.
        for photo in doc {
            guard let foods = photo["foods"] as? [[String: Any]], let totals = photo["totals"] as? [String: Double] else { continue }
            let sum = foods.compactMap { $0["kcal"] as? Double }.reduce(0, +)
            #expect(abs((totals["kcal"] ?? -1) - sum) < 0.6)
        }
    }

    @Test func learnAddsAFoodThatALaterAnalyzeUses() throws {
        let home = TestPaths.makeTempDirectory("home")
        defer { try? FileManager.default.removeItem(atPath: home) }
        var paths: [String] = []
        for i in 0..<4 { let p = home + "/stripes\(i).png"; try writeStripes(p, seed: UInt64(10 + i)); paths.append(p) }
        var env = ProcessInfo.processInfo.environment
        env["FOODMOMENT_HOME"] = home
        let before = try runProcess(foodmomentBinary, ["analyze", paths[3], "--json"], environment: env)
        #expect(!before.stdout.contains("my_stripes"))
        let learn = try runProcess(foodmomentBinary, ["learn", "my_stripes"] + paths[0..<3], environment: env)
        #expect(learn.status == 0, "\(learn.stderr)")
        #expect(FileManager.default.fileExists(atPath: home + "/learned-foods.json"))
        let after = try runProcess(foodmomentBinary, ["analyze", paths[3], "--json"], environment: env)
        #expect(after.status == 0)
        #expect(after.stdout.contains("\"label\" : \"my_stripes\""))
        #expect(after.stdout.contains("\"source\" : \"learned\""))
        let list = try runProcess(foodmomentBinary, ["learn", "--list"], environment: env)
        #expect(list.stdout.contains("my_stripes  6 examples"))
    }

    @Test func trainWritesAHeadThatSeparatesTwoGeneratedFoods() throws {
        let dir = TestPaths.makeTempDirectory("train")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for label in ["stripes", "flat"] {
            try FileManager.default.createDirectory(atPath: dir + "/data/" + label, withIntermediateDirectories: true)
            for i in 0..<5 {
                let p = dir + "/data/\(label)/\(i).png"
                if label == "stripes" { try writeStripes(p, seed: UInt64(i)) } else {
                    let v = UInt8(150 + i * 10)
                    try Data(try ImageEncoder.png(RGBImage(width: 64, height: 64, fill: (v, 40, 40)))).write(to: URL(fileURLWithPath: p))
                }
            }
        }
        let r = try foodmoment("dev", "train", "--data", dir + "/data", "--out", dir + "/head", "--views", "2", "--epochs", "40")
        #expect(r.status == 0, "\(r.stderr)")
        let head = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir + "/head/head.json"))) as? [String: Any])
        #expect(head["classes"] as? [String] == ["flat", "stripes"])
        #expect(r.stdout.contains("held-out accuracy 1.000"))
        // eval with that head (models folder = the bundled backbone + the new head) gets every photo right.
        let models = dir + "/models"
        try FileManager.default.createDirectory(atPath: models, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: models + "/efficientnet-lite0", withDestinationPath: TestPaths.repoRoot + "/models/efficientnet-lite0")
        try FileManager.default.createSymbolicLink(atPath: models + "/food-head", withDestinationPath: dir + "/head")
        let e = try foodmoment("dev", "eval", "--data", dir + "/data", "--models", models, "--json")
        #expect(e.status == 0, "\(e.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(e.stdout.utf8)) as? [String: Any])
        #expect(report["photos"] as? Int == 10)
        #expect(report["top1"] as? Double == 1.0)
    }

    /// Two generated foods, a train and a dev folder: the comparison embeds both (a second run reads its cache),
    /// trains the linear head and scores dev; a folder without a manifest has no sources to hold out.
    @Test func compareBackbonesScoresDevAndTimesTheBackbone() throws {
        let dir = TestPaths.makeTempDirectory("compare")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for split in ["train", "dev"] {
            for label in ["stripes", "flat"] {
                try FileManager.default.createDirectory(atPath: "\(dir)/\(split)/\(label)", withIntermediateDirectories: true)
                for i in 0..<(split == "train" ? 6 : 2) {
                    let p = "\(dir)/\(split)/\(label)/\(i).png"
                    if label == "stripes" { try writeStripes(p, seed: UInt64(i + (split == "dev" ? 50 : 0))) } else {
                        let v = UInt8(140 + i * 10)
                        try Data(try ImageEncoder.png(RGBImage(width: 64, height: 64, fill: (v, 40, 40)))).write(to: URL(fileURLWithPath: p))
                    }
                }
            }
        }
        let args = ["dev", "compare-backbones", "--model", TestPaths.repoRoot + "/models/efficientnet-lite0", "--train", dir + "/train",
                    "--dev", dir + "/dev", "--timing-runs", "2", "--cache-dir", dir + "/cache", "--json"]
        for run in 0..<2 {
            let r = try foodmoment(args)
            #expect(r.status == 0, "\(r.stderr)")
            #expect(r.stderr.contains("embeds 16 photos") == (run == 0), "the second run reads the cache: \(r.stderr)")
            let rows = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
            #expect(rows.count == 1 && rows[0]["backbones"] as? [String] == ["efficientnet-lite0"])
            let dev = try #require(rows[0]["dev"] as? [String: Any])
            #expect(dev["photos"] as? Int == 4 && dev["top1"] as? Double == 1.0, "\(dev)")
            #expect((rows[0]["milliseconds"] as? Double ?? 0) > 0)
            #expect((rows[0]["cross_source"] as? [String: Any])?.isEmpty == true)
        }
        #expect(try foodmoment("dev", "compare-backbones", "--model", dir, "--train", dir + "/train", "--dev", dir + "/dev").status == 2)
        #expect(try foodmoment("dev", "compare-backbones", "--model", TestPaths.repoRoot + "/models/efficientnet-lite0",
                               "--train", dir + "/nowhere", "--dev", dir + "/dev").status == 2)
        // A damaged photo stops the comparison (every backbone must see the same photos): exit 1, named.
        try Data("not a photo".utf8).write(to: URL(fileURLWithPath: dir + "/dev/flat/broken.png"))
        let broken = try foodmoment(args.filter { $0 != "--json" })
        #expect(broken.status == 1 && broken.stderr.contains("broken.png"), "\(broken.stderr)")
    }

    @Test func evalDetectRefusesAMissingFile() throws {
        #expect(try foodmoment("dev", "eval-detect", "--data", "/no/such.jsonl").status == 2)
    }

    /// `dev eval-gate` on two sample photos: one CSV row each, one score per set of the gate asked for; a gate it
    /// cannot read is refused by `eval` and `eval-detect` alike, naming the form it wants.
    @Test func evalGateScoresEveryPhotoOnce() throws {
        let dir = TestPaths.makeTempDirectory("eval-gate")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (label, file) in [("banana", "banana.jpg"), ("apple", "apple.jpg")] {
            try FileManager.default.createDirectory(atPath: "\(dir)/images/\(label)", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: TestPaths.repoRoot + "/samples/" + file, toPath: "\(dir)/images/\(label)/\(file)")
        }
        let r = try foodmoment("dev", "eval-gate", "--images", dir + "/images", "--gate", "0.5,0.5", "--csv", dir + "/gate.csv", "--json")
        #expect(r.status == 0, "\(r.stderr)")
        let csv = String(decoding: TestPaths.read(dir + "/gate.csv"), as: UTF8.self).split(separator: "\n")
        #expect(csv.count == 3 && csv[0].hasPrefix("path,set,top_probability") && csv.dropFirst().allSatisfy { $0.contains("images (produce)") })
        let gates = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        let sets = try #require(gates.first?["sets"] as? [[String: Any]])
        #expect(gates.count == 1 && sets.count == 1 && sets[0]["photos"] as? Int == 2, "\(gates)")
        // The five apples are several foods: never skipped.
        #expect((sets[0]["skipped"] as? Int ?? 9) <= 1)
        for command in ["eval", "eval-detect"] {
            let bad = try foodmoment("dev", command, "--data", dir + "/images", "--gate", "0.8")
            #expect(bad.status == 2 && bad.stderr.contains("TOP,COIN"), "\(bad.stderr)")
        }
    }
}

/// The time limit only guards against a hang (each run of the binary also has `runProcess`'s own limit): the binary
/// may be a sanitizer build, on a 2-core machine shared with CPU-bound tests.
@Suite("foodmoment barcode --online (loopback Open Food Facts)", .timeLimit(.minutes(10)))
struct BarcodeOnlineCLITests {
    @Test func onlineLookupThroughLibcurl() throws {
        let server = try LoopbackHTTPServer { path in
            if path.contains("/3017620422003.json") {
                return .json(#"{"status":1,"product":{"product_name":"Nutella","brands":"Ferrero","nutriments":{"energy-kcal_100g":539,"proteins_100g":6.3,"fat_100g":30.9,"carbohydrates_100g":57.5}}}"#)
            }
            if path.contains("/4000000000037.json") { return .json("busy", status: 503) }
            return .json(#"{"status":0}"#, status: 404)
        }
        defer { server.stop() }
        var env = ProcessInfo.processInfo.environment
        env["FOODMOMENT_OFF_BASE_URL"] = server.baseURL
        let ok = try runProcess(foodmomentBinary, ["barcode", "3017620422003", "--online"], environment: env)
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("product: Nutella — Ferrero") && ok.stdout.contains("539.0 kcal"))
        let missing = try runProcess(foodmomentBinary, ["barcode", "4006381333931", "--online"], environment: env)
        #expect(missing.stdout.contains("not found on Open Food Facts"))
        let down = try runProcess(foodmomentBinary, ["barcode", "4000000000037", "--online", "--json"], environment: env)
        #expect(down.status == 1)
        #expect(down.stdout.contains("\"kind\" : \"server\""))
        #expect(server.requests.allSatisfy { $0.headers["user-agent"]?.hasPrefix("FoodMoment/") == true })
        // libcurl is loaded on first use: where it cannot be, the look-up fails with the reason and what to install,
        // and nothing reaches the server.
        let before = server.requests.count
        env["FOODMOMENT_LIBCURL"] = "/nonexistent/libcurl.so.4"
        let noCurl = try runProcess(foodmomentBinary, ["barcode", "3017620422003", "--online"], environment: env)
        #expect(noCurl.status == 1, "\(noCurl.stdout) \(noCurl.stderr)")
        #expect(noCurl.stderr.contains("cannot load /nonexistent/libcurl.so.4") && noCurl.stderr.contains("libcurl4"), "\(noCurl.stderr)")
        #expect(server.requests.count == before)
    }
}

@Suite("foodmoment dev bench --layers-size (the real binary)")
struct BenchLayersSizeCLITests {
    @Test func aBadSizeIsAUsageErrorThatSaysTheForm() throws {
        let r = try foodmoment("dev", "bench", "--layers", "--layers-size", "448by352", "--allow-debug", "--skip-onnxruntime")
        #expect(r.status == 2)
        #expect(r.stderr.contains("HEIGHTxWIDTH") && r.stderr.contains("448by352"), "\(r.stderr)")
    }

    /// The per-layer profile at a non-square size: the first layers run at its halves (the stem's output).
    @Test func theProfileRunsAtTheGivenSize() throws {
        let r = try foodmoment("dev", "bench", "--layers", "--per-layer", "--layers-size", "96x64", "--runs", "30", "--warmup", "1",
                               "--allow-debug", "--skip-onnxruntime", "--json")
        #expect(r.status == 0, "\(r.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let layers = try #require(doc["layers"] as? [[String: Any]])
        let names = layers.compactMap { $0["kind"] as? String }
        let atHalfSize = names.contains(where: { $0.contains("48x32x") })
        #expect(atHalfSize, "\(names)")
    }
}
