import FoodMomentTestSupport
import Foundation
import Testing

/// Runs the binary with an empty FOODMOMENT_HOME, TZ=UTC, and the meal store `--db` in `dir`.
func diaryCLI(_ dir: String, _ args: String...) throws -> ProcessResult {
    var env = ProcessInfo.processInfo.environment
    env["FOODMOMENT_HOME"] = dir + "/home"
    env["TZ"] = "UTC"
    env["NO_COLOR"] = "1"
    return try runProcess(foodmomentBinary, args + ["--db", dir + "/meals.sqlite"], environment: env)
}

func jsonObject(_ r: ProcessResult) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(r.stdout.utf8))
}

@Suite("foodmoment diary commands (the real binary)")
struct DiaryCLITests {
    /// A store with 30 synthetic photos from 2026-11-18 11:06 UTC, 20 minutes apart (the debug writer).
    func filled() throws -> String {
        let dir = TestPaths.makeTempDirectory("diary")
        var env = ProcessInfo.processInfo.environment
        env["FOODMOMENT_HOME"] = dir + "/home"
        let w = try runProcess(foodmomentBinary, ["dev", "debug-store-writer", "--db", dir + "/meals.sqlite", "--count", "30", "--foods", "2"],
                               environment: env)
        #expect(w.status == 0, "\(w.stderr)")
        return dir
    }

    @Test func mealListShowEditDelete() throws {
        let dir = try filled()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let list = try diaryCLI(dir, "meal", "list", "--json")
        #expect(list.status == 0, "\(list.stderr)")
        let meals = try #require(try jsonObject(list) as? [[String: Any]])
        #expect(meals.count >= 2)
        let id = try #require(meals[0]["id"] as? String)
        let text = try diaryCLI(dir, "meal", "list", "--date", "2026-11-18")
        #expect(text.stdout.hasPrefix("ID        DATE"))
        #expect(text.stdout.contains(String(id.prefix(8))))

        let show = try diaryCLI(dir, "meal", "show", String(id.prefix(8)).lowercased())
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("   #  food") && show.stdout.contains("total"))

        // Food #1 to 100 g: its kcal become its per-100 g kcal and the totals follow.
        let edit = try diaryCLI(dir, "meal", "edit", String(id.prefix(8)), "--grams", "1=100", "--delete-food", "2", "--title", "Test lunch",
                                "--json")
        #expect(edit.status == 0, "\(edit.stderr)")
        let edited = try #require(try jsonObject(edit) as? [String: Any])
        let foods = try #require(edited["foods"] as? [[String: Any]])
        let first = try #require(foods.first)
        let per100 = try #require(first["per_100g"] as? [String: Double])
        #expect(first["kcal"] as? Double == per100["kcal"])
        #expect(first["grams"] as? Double == 100)
        let totals = try #require(edited["totals"] as? [String: Double])
        let sum = foods.compactMap { $0["kcal"] as? Double }.reduce(0, +)
        #expect(totals["kcal"] == sum.rounded())
        #expect(edited["title"] as? String == "Test lunch")

        let add = try diaryCLI(dir, "meal", "edit", id, "--add", "banana=118")
        #expect(add.status == 0, "\(add.stderr)")
        #expect(add.stdout.contains("Banana") && add.stdout.contains("118 g"))

        #expect(try diaryCLI(dir, "meal", "edit", id, "--delete-food", "99").status == 1)
        let typed = try diaryCLI(dir, "meal", "add", "--time", "2026-11-19 07:45", "--food", "banana", "--food", "egg=100", "--json")
        #expect(typed.status == 0, "\(typed.stderr)")
        let meal = try #require(try jsonObject(typed) as? [String: Any])
        #expect(meal["type"] as? String == "breakfast" && meal["time"] as? String == "2026-11-19T07:45:00.000Z")
        #expect((meal["foods"] as? [[String: Any]])?.map { $0["grams"] as? Double } == [118, 100])
        #expect(try diaryCLI(dir, "meal", "add", "--food", "zzqqxxnotafood").status == 1)
        #expect(try diaryCLI(dir, "meal", "edit", id, "--type", "brunch").status == 2)
        let missing = try diaryCLI(dir, "meal", "show", "FFFFFFFF")
        #expect(missing.status == 1 && missing.stderr.contains("no meal with id FFFFFFFF"))

        let del = try diaryCLI(dir, "meal", "delete", id)
        #expect(del.status == 0 && del.stdout.hasPrefix("deleted meal \(id.prefix(8))"))
        let after = try #require(try jsonObject(try diaryCLI(dir, "meal", "list", "--json")) as? [[String: Any]])
        #expect(after.count == meals.count - 1 + 1)  // one deleted, one typed by hand
    }

    @Test func goalsWaterWeightDiaryAndStats() throws {
        let dir = try filled()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let goals = try diaryCLI(dir, "goals", "set", "--kcal", "2000", "--protein", "120", "--water", "2000")
        #expect(goals.status == 0 && goals.stdout.contains("kcal           2,000"))
        #expect(try diaryCLI(dir, "goals", "set", "--fat", "70", "--json").stdout.contains("\"daily_kcal\" : 2000"))
        let windows = try diaryCLI(dir, "goals", "set", "--meal-windows", "breakfast=06:00-09:30")
        #expect(windows.status == 0 && windows.stdout.contains("breakfast 06:00-09:30  lunch 10:30-15:00  dinner 17:00-22:00"))
        #expect(try diaryCLI(dir, "goals", "set", "--meal-windows", "brunch=10:00-11:00").status == 2)
        let water = try diaryCLI(dir, "water", "add", "250", "--time", "2026-11-18 09:00")
        #expect(water.status == 0 && water.stdout.contains("logged 250 ml at 09:00"))
        #expect(try diaryCLI(dir, "water", "add", "-5").status == 2)
        #expect(try diaryCLI(dir, "weight", "add", "68.2", "--time", "2026-11-18 07:00").status == 0)
        #expect(try diaryCLI(dir, "weight", "list").stdout.contains("2026-11-18  07:00    68.2 kg"))

        let diary = try diaryCLI(dir, "diary", "--date", "2026-11-18")
        #expect(diary.status == 0, "\(diary.stderr)")
        #expect(diary.stdout.hasPrefix("Wednesday 18 November 2026"))
        #expect(diary.stdout.contains("09:00  Water     250 ml"))
        #expect(diary.stdout.contains("  Goals") && diary.stdout.contains("█"))
        let day = try #require(try jsonObject(try diaryCLI(dir, "diary", "--date", "2026-11-18", "--json")) as? [String: Any])
        #expect(day["date"] as? String == "2026-11-18" && day["water_ml"] as? Double == 250)

        let stats = try diaryCLI(dir, "stats", "--range", "week", "--date", "2026-11-18")
        #expect(stats.status == 0, "\(stats.stderr)")
        #expect(stats.stdout.contains("Check-ins") && stats.stdout.contains("Mo  Tu  We  Th  Fr  Sa  Su"))
        let report = try #require(try jsonObject(try diaryCLI(dir, "stats", "--range", "month", "--date", "2026-11-18", "--json")) as? [String: Any])
        let current = try #require(report["current"] as? [String: Any])
        #expect(current["start"] as? String == "2026-11-01" && current["end"] as? String == "2026-11-30")
        #expect((report["days"] as? [Any])?.count == 30)
        #expect(try diaryCLI(dir, "stats", "--range", "decade").status == 2)
        #expect(try diaryCLI(dir, "diary", "--date", "2026-13-01").status == 2)
        let year = try diaryCLI(dir, "stats", "--range", "year", "--date", "2026-11-18")
        #expect(year.stdout.contains("    Mo ") && year.stdout.contains("    Su "))
    }

    @Test func exportImportRoundTripThroughTheBinary() throws {
        let dir = try filled()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try diaryCLI(dir, "water", "add", "300").status == 0)
        let a = try diaryCLI(dir, "export", "--format", "json")
        #expect(a.status == 0 && a.stdout.contains("\"schema_version\" : 1"))
        let file = dir + "/diary.json"
        let out = try diaryCLI(dir, "export", "--format", "json", "--out", file)
        #expect(out.status == 0 && out.stderr.contains("exported"))
        let other = TestPaths.makeTempDirectory("diary2")
        defer { try? FileManager.default.removeItem(atPath: other) }
        let imp = try diaryCLI(other, "import", file)
        #expect(imp.status == 0, "\(imp.stderr)")
        #expect(imp.stdout.contains("meals added"))
        let twice = try diaryCLI(other, "import", file, "--json")
        #expect(twice.stdout.contains("\"meals_added\" : 0"))
        #expect(try diaryCLI(other, "export", "--format", "json").stdoutBytes == a.stdoutBytes)
        let csv = try diaryCLI(dir, "export", "--format", "csv")
        #expect(csv.stdout.hasPrefix("meal_id,meal_type,meal_time,local_date,local_time,meal_title,meal_tags,meal_kcal,food_number,"))
        #expect(csv.stdout.split(separator: "\n").count == 1 + 30 * 2)
        let bad = dir + "/bad.json"
        try Data("{\"hello\": 1}".utf8).write(to: URL(fileURLWithPath: bad))
        let refused = try diaryCLI(other, "import", bad)
        #expect(refused.status == 1 && refused.stderr.contains("no schema_version"))
    }

    @Test func helpShowsExamples() throws {
        for cmd in ["meal", "diary", "stats", "water", "weight", "goals", "export", "import", "report"] {
            let r = try foodmoment(cmd, "--help")
            // export, import and report live under `diary` (their old names still run them).
            let shown = ["export", "import", "report"].contains(cmd) ? "foodmoment diary \(cmd)" : "foodmoment \(cmd)"
            #expect(r.status == 0 && r.stdout.contains(shown), "\(cmd): \(r.stdout.prefix(300))")
        }
    }
}
