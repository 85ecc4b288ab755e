import ArgumentParser
import FoodCore
import FoodMoment
import Foundation
import MealStore
import Nutrition

/// `foodmoment meal list|show|edit|delete`: the meal records of the diary, by hand.
struct MealCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meal",
        abstract: "List, show, edit or delete meal records of the diary.",
        discussion: """
        Examples:
          foodmoment meal list --date today
          foodmoment meal show 3F2A9C1B
          foodmoment meal edit 3F2A9C1B --grams 1=150 --delete-food 3 --add "banana=118" --type lunch
          foodmoment meal delete 3F2A9C1B
          foodmoment meal add --time "2026-11-22 12:30" --food "rice=180" --food "chicken curry=250"

        Meal ids may be shortened to a unique prefix of 6 or more characters.
        """,
        subcommands: [List.self, Show.self, Add.self, Edit.self, Delete.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List meals (all, one day, or a range of days), oldest first.",
            discussion: """
            Examples:
              foodmoment meal list
              foodmoment meal list --date yesterday
              foodmoment meal list --from 2026-11-01 --to 2026-11-30 --json
            """
        )
        @OptionGroup var store: StoreOptions
        @Option(help: ArgumentHelp("Only this local day (YYYY-MM-DD, today, yesterday).", valueName: "day")) var date: String?
        @Option(help: ArgumentHelp("First day (inclusive).", valueName: "day")) var from: String?
        @Option(help: ArgumentHelp("Last day (inclusive).", valueName: "day")) var to: String?
        @Flag(help: "Print the meal records as JSON.") var json = false

        func validate() throws {
            if date != nil, from != nil || to != nil { throw ValidationError("use --date or --from/--to, not both") }
            for d in [date, from, to].compactMap({ $0 }) { _ = try LocalDates.day(d) }
        }

        func run() async throws {
            let s = try store.open()
            let zone = LocalDates.zone
            var start: Date = .distantPast, end: Date = .distantFuture
            if let date { let d = try LocalDates.day(date); start = d.start(in: zone); end = d.adding(days: 1).start(in: zone) }
            if let from { start = try LocalDates.day(from).start(in: zone) }
            if let to { end = try LocalDates.day(to).adding(days: 1).start(in: zone) }
            let meals = try storeCall { try s.meals(from: start, to: end) }
            if json { try printDiaryJSON(meals); return }
            if meals.isEmpty { Output.note("no meals (analyze photos with `foodmoment analyze DIR --log`)"); return }
            print("ID        DATE        TIME   TYPE        KCAL   P/C/F g        TITLE")
            for m in meals {
                let t = m.totals
                let pcf = "\(Bars.g(t.proteinG.rounded()))/\(Bars.g(t.carbsG.rounded()))/\(Bars.g(t.fatG.rounded()))"
                let tags = m.tags.isEmpty ? "" : "  [" + m.tags.joined(separator: ", ") + "]"
                print("\(m.id.prefix(8))  \(LocalDay(m.time, timeZone: zone))  \(LocalDates.hhmm(m.time))  "
                      + Output.pad(m.type.rawValue, 9) + Output.padLeft(Bars.int(t.kcal), 7) + "   "
                      + Output.pad(pcf, 13) + "  " + m.title + tags)
            }
            let sum = meals.reduce(Macros.zero) { $0 + $1.totals }
            Output.note("\(meals.count) meal\(meals.count == 1 ? "" : "s"), \(Bars.int(sum.kcal)) kcal")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show",
            abstract: "Show one meal: its foods with grams and nutrients, totals, tags and photos.",
            discussion: "Example:\n  foodmoment meal show 3F2A9C1B --json"
        )
        @OptionGroup var store: StoreOptions
        @Argument(help: ArgumentHelp("Meal id or a unique prefix (≥ 6 characters).", valueName: "id")) var id: String
        @Flag(help: "Print the meal record as JSON.") var json = false

        func run() async throws {
            let s = try store.open()
            guard let m = try storeCall({ try s.meal(id: id) }) else {
                Output.error(MealStoreError.noSuchMeal(id).description)
                throw Exit.failed
            }
            if json { try printDiaryJSON(m) } else { print(MealText.detail(m), terminator: "") }
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "edit",
            abstract: "Change a meal's type, time, title or foods; totals, title and tags are recomputed.",
            discussion: """
            Food numbers are those `meal show` prints before the edit. Grams are applied first, then replacements, then deletions, then added foods. An added food is looked up in the nutrition database (name or recognition label); without `=GRAMS` it gets the label's default portion, else 100 g.

            `--replace N=NAME` corrects food N (it keeps its grams and its place in the photo). When the meal has a photo, the food's part of it is kept as an example of NAME in your taught foods (`foodmoment learn --list`), so the next photo of the same dish is named right; `--no-learn` (or `foodmoment learn --off`) edits without teaching.

            Examples:
              foodmoment meal edit 3F2A9C1B --grams 2=150
              foodmoment meal edit 3F2A9C1B --replace 1="mapo tofu"
              foodmoment meal edit 3F2A9C1B --delete-food 1 --add "fried rice=250" --add banana
              foodmoment meal edit 3F2A9C1B --type dinner --time 19:30 --title "Birthday dinner"
              foodmoment meal edit 3F2A9C1B --title ""          back to the automatic title
            """
        )
        @OptionGroup var store: StoreOptions
        @Argument(help: ArgumentHelp("Meal id or a unique prefix (≥ 6 characters).", valueName: "id")) var id: String
        @Option(help: ArgumentHelp("breakfast, lunch, dinner or snack.", valueName: "type")) var type: String?
        @Option(help: ArgumentHelp("HH:MM (on the meal's day), 'YYYY-MM-DD HH:MM' or ISO 8601.", valueName: "time")) var time: String?
        @Option(help: ArgumentHelp("A title of your own (\"\" = automatic).", valueName: "text")) var title: String?
        @Option(help: ArgumentHelp("Set the grams of food N (repeatable).", valueName: "N=GRAMS")) var grams: [String] = []
        @Option(name: .customLong("delete-food"), help: ArgumentHelp("Remove food N (repeatable).", valueName: "N"))
        var deleteFood: [Int] = []
        @Option(help: ArgumentHelp("Add a food by name, optionally with grams (repeatable).", valueName: "NAME[=GRAMS]"))
        var add: [String] = []
        @Option(help: ArgumentHelp("Food N is another food, by name (repeatable; =GRAMS changes its grams too).", valueName: "N=NAME[=GRAMS]"))
        var replace: [String] = []
        @Flag(name: .customLong("no-learn"), help: "Do not keep a replaced food's photo as an example of the new food.")
        var noLearn = false
        @Option(name: .customLong("nutrition-db"), help: ArgumentHelp("Nutrition database folder for --add and --replace.", valueName: "dir"))
        var nutritionDB: String?
        @Flag(help: "Print the edited meal record as JSON.") var json = false

        func validate() throws {
            if let type, MealType(rawValue: type.lowercased()) == nil {
                throw ValidationError("bad --type \(type): use breakfast, lunch, dinner or snack")
            }
            for g in grams { _ = try parseGrams(g) }
            if deleteFood.contains(where: { $0 < 1 }) { throw ValidationError("--delete-food numbers start at 1") }
            for r in replace { _ = try parseReplace(r) }
            if type == nil, time == nil, title == nil, grams.isEmpty, deleteFood.isEmpty, add.isEmpty, replace.isEmpty {
                throw ValidationError("nothing to change: give --type, --time, --title, --grams, --replace, --delete-food or --add")
            }
        }

        func parseReplace(_ s: String) throws -> (Int, String) {
            let p = s.split(separator: "=", maxSplits: 1).map(String.init)
            guard p.count == 2, let n = Int(p[0].trimmingCharacters(in: .whitespaces)), n >= 1,
                  !p[1].trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ValidationError("bad --replace \(s): use N=NAME or N=NAME=GRAMS, e.g. 1=\"mapo tofu\"")
            }
            return (n, p[1])
        }

        func parseGrams(_ s: String) throws -> (Int, Double) {
            let p = s.split(separator: "=")
            guard p.count == 2, let n = Int(p[0]), n >= 1, let g = Double(p[1]), g.isFinite, g >= 0 else {
                throw ValidationError("bad --grams \(s): use N=GRAMS, e.g. 2=150")
            }
            return (n, g)
        }

        func run() async throws {
            let s = try store.open()
            guard let before = try storeCall({ try s.meal(id: id) }) else {
                Output.error(MealStoreError.noSuchMeal(id).description)
                throw Exit.failed
            }
            var edits: [MealEdit] = []
            if let type { edits.append(.type(MealType(rawValue: type.lowercased())!)) }
            if let time { edits.append(.time(try LocalDates.time(time, on: LocalDay(before.time, timeZone: LocalDates.zone)))) }
            if let title { edits.append(.title(title)) }
            for g in grams { let (n, v) = try parseGrams(g); edits.append(.grams(index: n - 1, grams: v)) }
            var db: NutritionDatabase?
            if !add.isEmpty || !replace.isEmpty {
                let url = nutritionDB.map { URL(fileURLWithPath: $0) } ?? ProcessSettings.nutritionDirectory
                do { db = try ProcessSettings.loadNutrition(url) } catch {
                    Output.error("\(error.description) (needed to look up --add and --replace foods)")
                    throw Exit.failed
                }
            }
            var corrections: [Correction] = []
            for r in replace {
                let (n, spec) = try parseReplace(r)
                let food = try ManualFoodSpec.make(spec, db: db!)
                edits.append(.replaceFood(index: n - 1, with: food))
                // The food as the meal will hold it (the edit applies --grams before the replacement).
                if before.foods.indices.contains(n - 1) {
                    var old = before.foods[n - 1]
                    if let g = try grams.map(parseGrams).last(where: { $0.0 == n })?.1 { old.setGrams(g) }
                    corrections.append(Correction(meal: before, index: n - 1, food: DiaryRules.replacing(old, with: food)))
                }
            }
            for n in Set(deleteFood).sorted(by: >) { edits.append(.deleteFood(index: n - 1)) }
            for a in add { edits.append(.addFood(try ManualFoodSpec.make(a, db: db!))) }
            // A correction that will teach needs a readable store: checked before the diary changes, so a damaged
            // store leaves the meal as it was.
            let personal = PersonalFoods(directory: ProcessSettings.userDataDirectory)
            var teach: [Correction] = []
            if !noLearn {
                for c in corrections {
                    do {
                        switch try c.plan(personal) {
                        case nil: teach.append(c)
                        case .notTaught(let why)?: if c.meal.foods.indices.contains(c.index) { Output.note("not taught: \(why)") }
                        case .taught?: break
                        }
                    } catch {
                        Output.error("\(error.description); the meal was not changed (--no-learn edits it without teaching)")
                        throw Exit.failed
                    }
                }
            }
            let m = try storeCall { try s.edit(mealID: before.id, edits) }
            for a in try storeCall({ try s.updateAchievements() }) { Output.note("🏆 unlocked: \(a.title)") }
            if json { try printDiaryJSON(m) } else { print(MealText.detail(m), terminator: "") }
            if !teach.isEmpty {
                let analyzer = try MealAnalyzer.load(environment: ProcessSettings.environment)
                for c in teach {
                    do {
                        if case .taught(let label, let count) = try c.teach(personal, analyzer: analyzer) {
                            Output.note("taught \(label) from this meal's photo (\(count) examples; `foodmoment learn --forget \(label)` undoes it)")
                        }
                    } catch {
                        Output.note("not taught: \(error.description) (the meal was changed)")
                    }
                }
            }
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Log a meal by hand (no photo): foods by name with grams.",
            discussion: """
            Foods are looked up in the nutrition database (name or recognition label); without `=GRAMS` a food gets the label's default portion, else 100 g. The type follows the meal windows unless --type is given.

            Examples:
              foodmoment meal add --food "oatmeal=250" --food banana
              foodmoment meal add --time "2026-11-22 12:30" --food "fried rice=300" --type lunch --json
            """
        )
        @OptionGroup var store: StoreOptions
        @Option(help: ArgumentHelp("A food NAME[=GRAMS] (repeatable, at least one).", valueName: "NAME[=GRAMS]")) var food: [String] = []
        @Option(help: ArgumentHelp("HH:MM today, 'YYYY-MM-DD HH:MM' or ISO 8601 (default now).", valueName: "time")) var time: String?
        @Option(help: ArgumentHelp("breakfast, lunch, dinner or snack.", valueName: "type")) var type: String?
        @Option(help: ArgumentHelp("A title of your own.", valueName: "text")) var title: String?
        @Option(name: .customLong("nutrition-db"), help: ArgumentHelp("Nutrition database folder.", valueName: "dir"))
        var nutritionDB: String?
        @Flag(help: "Print the new meal record as JSON.") var json = false

        func validate() throws {
            if food.isEmpty { throw ValidationError("give at least one --food NAME[=GRAMS]") }
            if let type, MealType(rawValue: type.lowercased()) == nil {
                throw ValidationError("bad --type \(type): use breakfast, lunch, dinner or snack")
            }
            if let time { _ = try LocalDates.time(time, on: LocalDates.today) }
        }

        func run() async throws {
            let url = nutritionDB.map { URL(fileURLWithPath: $0) } ?? ProcessSettings.nutritionDirectory
            let db: NutritionDatabase
            do { db = try ProcessSettings.loadNutrition(url) } catch {
                Output.error("\(error.description) (needed to look up the foods)")
                throw Exit.failed
            }
            let foods = try food.map { try ManualFoodSpec.make($0, db: db) }
            let s = try store.open()
            let when = try time.map { try LocalDates.time($0, on: LocalDates.today) } ?? Date()
            let m = try storeCall {
                try s.addMeal(time: when, type: type.flatMap { MealType(rawValue: $0.lowercased()) }, foods: foods, title: title,
                              windows: try s.mealWindows())
            }
            for a in try storeCall({ try s.updateAchievements() }) { Output.note("🏆 unlocked: \(a.title)") }
            if json { try printDiaryJSON(m) } else { print(MealText.detail(m), terminator: "") }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Delete a meal with its foods (its photos may then be logged again).",
            discussion: "Example:\n  foodmoment meal delete 3F2A9C1B"
        )
        @OptionGroup var store: StoreOptions
        @Argument(help: ArgumentHelp("Meal id or a unique prefix (≥ 6 characters).", valueName: "id")) var id: String

        func run() async throws {
            let s = try store.open()
            guard let m = try storeCall({ try s.meal(id: id) }), try storeCall({ try s.deleteMeal(id: m.id) }) else {
                Output.error(MealStoreError.noSuchMeal(id).description)
                throw Exit.failed
            }
            print("deleted meal \(m.id.prefix(8)) (\(m.type.rawValue), \(m.title), \(Bars.int(m.totals.kcal)) kcal)")
            if !m.photos.isEmpty {
                print("its \(m.photos.count == 1 ? "photo is" : "\(m.photos.count) photos are") not logged again by `analyze --log` (--force logs \(m.photos.count == 1 ? "it" : "them") again)")
            }
        }
    }
}

/// A food typed by hand on the command line (`NAME` or `NAME=GRAMS`), through `FoodMoment.ManualFood`.
enum ManualFoodSpec {
    static func make(_ spec: String, db: NutritionDatabase) throws -> MealFood {
        let parts = spec.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        var grams: Double?
        if parts.count == 2 {
            guard let g = Double(parts[1]), g.isFinite, g >= 0 else { throw ValidationError("bad --add \(spec): grams must be a number ≥ 0") }
            grams = g
        }
        guard !parts[0].isEmpty else { throw ValidationError("bad --add \(spec): give a food name") }
        do {
            return try ManualFood.make(name: parts[0], grams: grams, db: db)
        } catch .notFound(let name) {
            Output.error("no food named \(name) in the nutrition database (try `foodmoment search \(name)`)")
            throw Exit.failed
        } catch {
            throw ValidationError("bad --add \(spec): \(error.description)")
        }
    }
}

/// The JSON the diary commands print (dates as ISO 8601 UTC with milliseconds, like the export).
func printDiaryJSON<T: Encodable>(_ value: T) throws {
    FileHandle.standardOutput.write(try DiaryExport.encoder().encode(value) + Data("\n".utf8))
}

/// How a meal reads in a terminal.
enum MealText {
    static func detail(_ m: MealRecord) -> String {
        let zone = LocalDates.zone
        let day = LocalDay(m.time, timeZone: zone)
        var out = "\(m.title)\n"
        out += "  id      \(m.id)\n"
        out += "  when    \(Bars.typeName(m.type)) · \(LocalDates.long(day)) \(LocalDates.hhmm(m.time))"
        out += m.photos.isEmpty ? " · typed by hand\n" : " · \(m.photos.count) photo\(m.photos.count == 1 ? "" : "s")\n"
        if !m.tags.isEmpty { out += "  tags    \(m.tags.joined(separator: ", "))\n" }
        out += "\n   #  food                          grams    kcal  protein   carbs     fat   fiber  sugars  sodium\n"
        func extra(_ n: Macros) -> String {
            Output.padLeft(n.sugarsG.map { String(format: "%.1f", $0) } ?? "—", 8)
                + Output.padLeft(n.sodiumMg.map { "\(Bars.int($0)) mg" } ?? "—", 9)
        }
        for (i, f) in m.foods.enumerated() {
            let n = f.nutrients
            out += Output.padLeft(String(i + 1), 4) + "  " + Output.pad(f.emoji + " " + (f.name.count > 24 ? f.name.prefix(23) + "…" : f.name), 27)
                + Output.padLeft(Bars.g(f.grams.rounded()) + " g", 8) + Output.padLeft(Bars.int(n.kcal), 8)
                + [n.proteinG, n.carbsG, n.fatG, n.fiberG].map { Output.padLeft(String(format: "%.1f", $0), 8) }.joined()
                + extra(n) + "\n"
        }
        let t = m.totals
        out += "      " + Output.pad("total", 35) + Output.padLeft(Bars.int(t.kcal), 8)
            + [t.proteinG, t.carbsG, t.fatG, t.fiberG].map { Output.padLeft(String(format: "%.1f", $0), 8) }.joined() + extra(t) + "\n"
        if let split = Stats.macroSplit(t) {
            out += "      energy from protein \(Bars.g(split.proteinPct)) %, carbs \(Bars.g(split.carbsPct)) %, fat \(Bars.g(split.fatPct)) %\n"
        }
        if !m.photos.isEmpty {
            out += "\n  photos\n"
            for p in m.photos {
                out += "    \(LocalDates.hhmm(p.takenAt))  \(p.path)  (\(p.timeSource), \(p.hash.prefix(12)))\n"
            }
        }
        if let a = m.analysis, !a.isEmpty { out += "\n  analysis\n    " + a.replacingOccurrences(of: "\n", with: "\n    ") + "\n" }
        return out
    }
}
