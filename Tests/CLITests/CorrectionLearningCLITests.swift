import FoodMomentTestSupport
import Foundation
import Testing

/// Issue 37's learning from corrections, as a user meets it: a meal logged from a photo the model gets wrong, corrected
/// with `meal edit --replace`, and the next photo of the same food (another shot of the same garlic bulbs).
@Suite("learning from corrections (the real binary)")
struct CorrectionLearningCLITests {
    static let first = TestPaths.fixture("CLITests", "garlic-1.jpg")
    static let second = TestPaths.fixture("CLITests", "garlic-2.jpg")

    /// The first food of one photo's analysis: label, confidence, source.
    func firstFood(_ dir: String, _ photo: String) throws -> (label: String, confidence: Double, source: String, grams: Double) {
        let r = try diaryCLI(dir, "analyze", photo, "--json", "--no-journal")
        #expect(r.status == 0, "\(r.stderr)")
        let result = try #require((try jsonObject(r) as? [[String: Any]])?.first)
        let food = try #require((result["foods"] as? [[String: Any]])?.first, "no food in \(result)")
        return (food["label"] as? String ?? "", food["confidence"] as? Double ?? -1, food["source"] as? String ?? "",
                food["grams"] as? Double ?? -1)
    }

    /// A command that has no `--db` (`learn`).
    func plainCLI(_ dir: String, _ args: String...) throws -> ProcessResult {
        var env = ProcessInfo.processInfo.environment
        env["FOODMOMENT_HOME"] = dir + "/home"; env["TZ"] = "UTC"; env["NO_COLOR"] = "1"
        return try runProcess(foodmomentBinary, args, environment: env)
    }

    func logAndCorrect(_ dir: String, extra: [String] = []) throws -> (meal: String, edit: ProcessResult) {
        let logged = try diaryCLI(dir, "analyze", Self.first, "--log", "--time", "2026-12-01 12:30")
        #expect(logged.status == 0, "\(logged.stderr)")
        let meals = try #require(try jsonObject(try diaryCLI(dir, "meal", "list", "--json")) as? [[String: Any]])
        let meal = try #require(meals.first?["id"] as? String)
        let args = ["meal", "edit", String(meal.prefix(8)), "--replace", "1=garlic"] + extra + ["--db", dir + "/meals.sqlite"]
        var env = ProcessInfo.processInfo.environment
        env["FOODMOMENT_HOME"] = dir + "/home"; env["TZ"] = "UTC"; env["NO_COLOR"] = "1"
        return (meal, try runProcess(foodmomentBinary, args, environment: env))
    }

    @Test func aCorrectionNamesTheNextPhotoOfTheSameFood() throws {
        let dir = TestPaths.makeTempDirectory("corrections")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let wrong = try firstFood(dir, Self.first)
        #expect(wrong.label == "dumplings", "the fixture is a photo the model gets wrong")
        let before = try firstFood(dir, Self.second)
        #expect(before.source == "model" && before.confidence < 0.5, "\(before)")

        let (_, edit) = try logAndCorrect(dir)
        #expect(edit.status == 0, "\(edit.stderr)")
        #expect(edit.stdout.contains("Garlic") && edit.stderr.contains("taught garlic from this meal's photo"), "\(edit.stdout)\(edit.stderr)")
        let after = try firstFood(dir, Self.second)
        #expect(after.label == "garlic" && after.source == "learned" && after.confidence >= 0.8, "\(after)")
        #expect(after.grams == wrong.grams, "a taught dish weighs what the corrected meal said (\(after.grams) g)")
        let list = try plainCLI(dir, "learn", "--list")
        #expect(list.stdout.contains("garlic  2 examples") && list.stdout.contains("corrections: on"), "\(list.stdout)")

        #expect(try plainCLI(dir, "learn", "--forget", "garlic").status == 0)
        #expect(try firstFood(dir, Self.second).source == "model", "forgetting undoes the correction")
    }

    @Test func noPhotoNoLearnOrOffOnlyEditTheMeal() throws {
        let dir = TestPaths.makeTempDirectory("corrections-off")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // --no-learn: the meal changes, nothing is taught.
        let (_, quiet) = try logAndCorrect(dir, extra: ["--no-learn"])
        #expect(quiet.status == 0 && quiet.stdout.contains("Garlic") && !quiet.stderr.contains("taught"), "\(quiet.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/home/learned-foods.json"))
        // learn --off: the same, and it says why.
        let other = dir + "/off"
        #expect(try plainCLI(other, "learn", "--off").stdout.contains("off"))
        let (_, off) = try logAndCorrect(other)
        #expect(off.status == 0 && off.stderr.contains("not taught: learning from corrections is off"), "\(off.stderr)")
        #expect(!FileManager.default.fileExists(atPath: other + "/home/learned-foods.json"))
        #expect(try plainCLI(other, "learn", "--on").stdout.contains("is on"))
        // A meal typed by hand has no photo: the edit is all there is.
        #expect(try diaryCLI(dir, "meal", "add", "--time", "2026-12-02 08:00", "--food", "banana=118").status == 0)
        let meals = try #require(try jsonObject(try diaryCLI(dir, "meal", "list", "--json", "--date", "2026-12-02")) as? [[String: Any]])
        let id = try #require(meals.first?["id"] as? String)
        let typed = try diaryCLI(dir, "meal", "edit", String(id.prefix(8)), "--replace", "1=apple")
        #expect(typed.status == 0 && typed.stdout.contains("Apple") && typed.stderr.contains("not taught: the meal has no photo"),
                "\(typed.stdout)\(typed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/home/learned-foods.json"))
    }

    @Test func aDamagedStoreIsNamedAndTheDiaryIsUntouched() throws {
        let dir = TestPaths.makeTempDirectory("corrections-damaged")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/home", withIntermediateDirectories: true)
        let store = dir + "/home/learned-foods.json"
        try Data(#"{"dimension": 1280, "prot"#.utf8).write(to: URL(fileURLWithPath: store))
        let (meal, edit) = try logAndCorrect(dir)
        #expect(edit.status == 1 && edit.stderr.contains(store) && edit.stderr.contains("the meal was not changed"), "\(edit.stderr)")
        let shown = try #require(try jsonObject(try diaryCLI(dir, "meal", "show", meal, "--json")) as? [String: Any])
        #expect((shown["foods"] as? [[String: Any]])?.first?["label"] as? String == "dumplings", "the diary is untouched")
        #expect(TestPaths.read(store) == Array(#"{"dimension": 1280, "prot"#.utf8), "the damaged file is left for the user")
        // Analysis goes on without the taught foods and says so.
        let analyzed = try diaryCLI(dir, "analyze", Self.second, "--no-journal")
        #expect(analyzed.status == 0 && analyzed.stderr.contains(store) && analyzed.stderr.contains("analysing without them"), "\(analyzed.stderr)")
        let learn = try plainCLI(dir, "learn", "--list")
        #expect(learn.status == 1 && learn.stderr.contains(store), "\(learn.stderr)")
    }
}
