import FoodMomentTestSupport
import Foundation
import Testing

/// The kcal `analyze --log` prints are the kcal the diary keeps and exports: computed once, by the nutrition join
/// (issue 38). Three dev photos where scaling the rounded per-100 g values again gave 1 kcal more or less.
@Suite("one kcal from photo to diary (the real binary)")
struct OneKcalCLITests {
    @Test func printedStoredAndExportedKcalAgree() throws {
        let dir = TestPaths.makeTempDirectory("one-kcal")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var photos = ["apple.jpg", "orange.jpg", "thali-rice-curry-roti.jpg"].map { TestPaths.repoRoot + "/samples/" + $0 }
        let dev = TestPaths.sharedData + "/images/dev"
        for p in ["cabbage/val_Cabbage_005.jpg", "samosa/1316112.jpg", "orange/val_Orange_001.jpg"]
        where FileManager.default.fileExists(atPath: dev + "/" + p) { photos.append(dev + "/" + p) }
        var args = ["analyze"] + photos + ["--log", "--json", "--time", "2026-12-01 12:30", "--db", dir + "/meals.sqlite"]
        var env = ProcessInfo.processInfo.environment
        env["FOODMOMENT_HOME"] = dir + "/home"; env["TZ"] = "UTC"
        let analyzed = try runProcess(foodmomentBinary, args, environment: env)
        #expect(analyzed.status == 0, "\(analyzed.stderr)")
        let results = try #require(try JSONSerialization.jsonObject(with: Data(analyzed.stdout.utf8)) as? [[String: Any]])
        let printedFoods = results.flatMap { ($0["foods"] as? [[String: Any]]) ?? [] }
        let printed = printedFoods.compactMap { $0["kcal"] as? Double }.sorted()
        #expect(printed.count >= 10, "\(printed)")
        // Sugars and sodium come from the same join: printed per food, and the sums of the tables' values.
        let printedSodium = printedFoods.compactMap { $0["sodium_mg"] as? Double }.sorted()
        let printedSugars = printedFoods.compactMap { $0["sugars_g"] as? Double }.sorted()
        #expect(printedSodium.count == printed.count && printedSugars.count >= printed.count / 2, "\(printedFoods)")

        args = ["meal", "list", "--json", "--db", dir + "/meals.sqlite"]
        let meals = try #require(try JSONSerialization.jsonObject(with: Data(try runProcess(foodmomentBinary, args, environment: env).stdout.utf8)) as? [[String: Any]])
        let storedFoods = meals.flatMap { ($0["foods"] as? [[String: Any]]) ?? [] }
        let stored = storedFoods.compactMap { $0["kcal"] as? Double }.sorted()
        #expect(stored == printed, "stored \(stored) vs printed \(printed)")
        #expect(storedFoods.compactMap { $0["sodium_mg"] as? Double }.sorted() == printedSodium)
        #expect(storedFoods.compactMap { $0["sugars_g"] as? Double }.sorted() == printedSugars)

        let csv = try runProcess(foodmomentBinary, ["export", "--format", "csv", "--db", dir + "/meals.sqlite"], environment: env).stdout
        let rows = csv.split(separator: "\n").map { Self.fields(String($0)) }
        let column = try #require(rows.first?.firstIndex(of: "kcal"))
        let exported = rows.dropFirst().compactMap { $0.count > column ? Double($0[column]) : nil }.sorted()
        #expect(exported == printed, "exported \(exported) vs printed \(printed)")
        let sodium = try #require(rows.first?.firstIndex(of: "sodium_mg"))
        #expect(rows.dropFirst().compactMap { $0.count > sodium ? Double($0[sodium]) : nil }.sorted() == printedSodium)
    }

    /// One RFC 4180 line's fields (quoted fields may hold commas and doubled quotes; no line breaks in these).
    static func fields(_ line: String) -> [String] {
        var out: [String] = [], field = "", quoted = false, chars = Array(line), i = 0
        while i < chars.count {
            let c = chars[i]
            if quoted {
                if c == "\"" { if i + 1 < chars.count, chars[i + 1] == "\"" { field.append("\""); i += 1 } else { quoted = false } } else { field.append(c) }
            } else if c == "\"" { quoted = true } else if c == "," { out.append(field); field = "" } else { field.append(c) }
            i += 1
        }
        out.append(field)
        return out
    }
}
