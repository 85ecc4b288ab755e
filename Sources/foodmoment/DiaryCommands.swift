import ArgumentParser
import FoodCore
import Foundation
import MealStore

/// `foodmoment diary [--date D]`: the day's timeline and progress against the goals.
/// `foodmoment diary …`: the day's timeline (the default), and the diary as a whole — export, import, the HTML report.
/// (`foodmoment export|import|report` still work: `Main` rewrites them to these.)
struct DiaryGroupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diary",
        abstract: "The day's timeline (the default); export, import and the HTML report of the whole diary.",
        discussion: """
        Examples:
          foodmoment diary                           today's meals, water and weight
          foodmoment diary --date yesterday --json
          foodmoment diary export > diary.json       the whole diary, re-importable
          foodmoment diary import diary.json
          foodmoment diary report --range week --html week.html
        """,
        subcommands: [DiaryCommand.self, ExportCommand.self, ImportCommand.self, ReportCommand.self],
        defaultSubcommand: DiaryCommand.self
    )

    /// Commands that moved under `diary` in 0.5.0, by their old top-level name.
    static let moved: Set<String> = ["export", "import", "report"]

    /// `export …` → `diary export …` (and the same for import and report), so scripts written before keep working.
    static func rewriting(_ arguments: [String]) -> [String] {
        guard let first = arguments.first, moved.contains(first) else { return arguments }
        return ["diary"] + arguments
    }
}

struct DiaryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "The day's meals, water and weight as a timeline, with progress against your goals.",
        discussion: """
        Examples:
          foodmoment diary
          foodmoment diary --date yesterday
          foodmoment diary show --date 2026-11-22 --json
        """
    )
    @OptionGroup var store: StoreOptions
    @Option(help: ArgumentHelp("The local day (YYYY-MM-DD, today, yesterday).", valueName: "day")) var date = "today"
    @Flag(help: "Print the day as JSON.") var json = false

    func validate() throws { _ = try LocalDates.day(date) }

    struct DayDocument: Encodable {
        var date: LocalDay
        var totals: Macros
        var goals: Goals
        var meals: [MealRecord]
        var water: [WaterLog]
        var waterMl: Double
        var weight: [WeightLog]

        enum CodingKeys: String, CodingKey { case date, totals, goals, meals, water, weight, waterMl = "water_ml" }
    }

    func run() async throws {
        let s = try store.open()
        let zone = LocalDates.zone
        let day = try LocalDates.day(date)
        let (start, end) = (day.start(in: zone), day.adding(days: 1).start(in: zone))
        let (meals, water, weight, goals) = try storeCall {
            (try s.meals(from: start, to: end), try s.waterLogs(from: start, to: end), try s.weightLogs(from: start, to: end),
             try s.goals())
        }
        let totals = meals.reduce(Macros.zero) { $0 + $1.totals }.rounded
        let waterMl = water.reduce(0) { $0 + $1.milliliters }
        if json {
            try printDiaryJSON(DayDocument(date: day, totals: totals, goals: goals, meals: meals, water: water, waterMl: waterMl,
                                           weight: weight))
            return
        }
        var out = LocalDates.long(day) + "\n\n"
        enum Entry { case meal(MealRecord), water(WaterLog), weight(WeightLog) }
        var entries: [(Date, Int, Entry)] = meals.map { ($0.time, 0, .meal($0)) }
        entries += water.map { ($0.time, 1, .water($0)) }
        entries += weight.map { ($0.time, 2, .weight($0)) }
        entries.sort { ($0.0, $0.1) < ($1.0, $1.1) }
        if entries.isEmpty { out += "  nothing logged (foodmoment analyze PHOTOS --log, foodmoment water add 250)\n" }
        for (time, _, e) in entries {
            let hhmm = LocalDates.hhmm(time)
            switch e {
            case let .meal(m):
                let t = m.totals
                let title = m.title.count > 34 ? m.title.prefix(33) + "…" : m.title
                out += "  \(hhmm)  " + Output.pad(Bars.typeName(m.type), 10) + Output.pad(title, 34) + " "
                    + Output.padLeft(Bars.int(t.kcal), 6) + " kcal   P \(Bars.int(t.proteinG))  C \(Bars.int(t.carbsG))  F \(Bars.int(t.fatG))\n"
                var foods = m.foods.prefix(4).map { "\($0.emoji) \($0.name) \(Bars.int($0.grams)) g" }.joined(separator: " · ")
                if m.foods.count > 4 { foods += " · +\(m.foods.count - 4) more" }
                out += "         " + Output.pad(String(m.id.prefix(8)), 10) + foods
                    + (m.tags.isEmpty ? "" : "  [" + m.tags.joined(separator: ", ") + "]") + "\n"
            case let .water(w):
                out += "  \(hhmm)  " + Output.pad("Water", 10) + "\(Bars.int(w.milliliters)) ml\n"
            case let .weight(w):
                out += "  \(hhmm)  " + Output.pad("Weight", 10) + String(format: "%.1f kg", w.kilograms) + "\n"
            }
        }
        out += "\n  Day total  \(Bars.int(totals.kcal)) kcal · protein \(Bars.g(totals.proteinG)) g · carbs \(Bars.g(totals.carbsG)) g"
            + " · fat \(Bars.g(totals.fatG)) g · fiber \(Bars.g(totals.fiberG)) g\n"
        let rows: [(String, Double, Double?, String)] = [
            ("kcal", totals.kcal, goals.dailyKcal, ""), ("protein", totals.proteinG, goals.proteinG, " g"),
            ("carbs", totals.carbsG, goals.carbsG, " g"), ("fat", totals.fatG, goals.fatG, " g"),
            ("water", waterMl, goals.waterMl, " ml"),
        ]
        if rows.contains(where: { $0.2 != nil }) {
            out += "\n  Goals\n"
            for (name, value, goal, unit) in rows {
                guard let goal else { continue }
                let pct = Int((value / goal * 100).rounded())
                out += "    " + Output.pad(name, 9) + Bars.bar(value, of: goal) + "  "
                    + Output.padLeft(Bars.int(value), 6) + " / " + Output.pad(Bars.int(goal) + unit, 9) + Output.padLeft("\(pct) %", 6)
                    + (value > goal * 1.1 && name != "water" && name != "protein" ? "  over" : "") + "\n"
            }
        } else {
            out += "\n  No goals set (foodmoment goals set --kcal 2000 --protein 120)\n"
        }
        print(out, terminator: "")
    }
}

/// `foodmoment stats --range day|week|month|year [--date D]`.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Totals, averages, change vs the previous period, macro split, goal attainment, streaks and a check-in grid.",
        discussion: """
        Weeks start on Monday; days are local (TZ, else the machine's zone). Averages are per day with data and per elapsed day; the change compares the average per day with data against the previous period — while the period is still running, against the same span of the previous one (Wednesday 14:00 of this week against Monday to Wednesday 14:00 of last week). A day is within the kcal goal when it is within ±10 % of it (the HTML report uses the same rule).

        Examples:
          foodmoment stats                          this week
          foodmoment stats --range month
          foodmoment stats --range year --date 2026-06-01 --json
        """
    )
    @OptionGroup var store: StoreOptions
    @Option(help: ArgumentHelp("day, week, month or year.", valueName: "range")) var range: String = "week"
    @Option(help: ArgumentHelp("A day inside the period (YYYY-MM-DD, today, yesterday).", valueName: "day")) var date = "today"
    @Flag(help: "Print the report as JSON.") var json = false

    func validate() throws {
        guard StatsRange(rawValue: range) != nil else { throw ValidationError("bad --range \(range): use day, week, month or year") }
        _ = try LocalDates.day(date)
    }

    func run() async throws {
        let s = try store.open()
        let zone = LocalDates.zone
        let r = StatsRange(rawValue: range)!
        let day = try LocalDates.day(date)
        let (report, goals) = try storeCall {
            (try s.statsReport(range: r, day: day, today: LocalDates.today, timeZone: zone, now: Date()), try s.goals())
        }
        if json { try printDiaryJSON(report); return }
        print(StatsText.render(report, goals: goals, today: LocalDates.today), terminator: "")
    }
}

/// The stats report for people: a table, a split bar, and a check-in grid drawn with block characters.
enum StatsText {
    static func render(_ r: StatsReport, goals: Goals, today: LocalDay) -> String {
        let c = r.current
        var out: String
        switch r.range {
        case .day: out = LocalDates.long(c.start)
        case .week: out = "Week \(LocalDates.long(c.start)) – \(LocalDates.long(c.end))"
        case .month:
            let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                          "November", "December"]
            out = "\(months[c.start.month - 1]) \(c.start.year)"
        case .year: out = "Year \(c.start.year)"
        }
        out += "\n\n"
        out += "                 total   per logged day   per day   vs previous \(r.range.rawValue)\n"
        if let until = r.previousComparedUntil {
            out += "  (this \(r.range.rawValue) so far against the previous one until \(LocalDay(until, timeZone: LocalDates.zone)) \(LocalDates.hhmm(until)))\n"
        }
        let rows: [(String, KeyPath<Macros, Double>, Double?, Bool)] = [
            ("kcal", \.kcal, r.changePct.kcal, true), ("protein g", \.proteinG, r.changePct.proteinG, false),
            ("carbs g", \.carbsG, r.changePct.carbsG, false), ("fat g", \.fatG, r.changePct.fatG, false),
            ("fiber g", \.fiberG, nil, false),
        ]
        for (name, kp, change, whole) in rows {
            func f(_ v: Double) -> String { whole || v >= 1000 ? Bars.int(v) : String(format: "%.1f", v) }
            let ch = change.map { ($0 >= 0 ? "+" : "") + String(format: "%.1f %%", $0) } ?? (name == "fiber g" ? "" : "–")
            out += "  " + Output.pad(name, 11) + Output.padLeft(f(c.totals[keyPath: kp]), 9)
                + Output.padLeft(f(c.averagePerLoggedDay[keyPath: kp]), 17) + Output.padLeft(f(c.averagePerDay[keyPath: kp]), 10)
                + Output.padLeft(ch, 14) + "\n"
        }
        // Sugars and sodium: sums of the foods whose table reports them (no row when none does).
        for (name, kp, whole) in [("sugars g", \Macros.sugarsG, false), ("sodium mg", \Macros.sodiumMg, true)] {
            guard let total = c.totals[keyPath: kp] else { continue }
            func f(_ v: Double?) -> String { v.map { whole || $0 >= 1000 ? Bars.int($0) : String(format: "%.1f", $0) } ?? "–" }
            out += "  " + Output.pad(name, 11) + Output.padLeft(f(total), 9)
                + Output.padLeft(f(c.averagePerLoggedDay[keyPath: kp]), 17) + Output.padLeft(f(c.averagePerDay[keyPath: kp]), 10) + "\n"
        }
        out += "  \(c.meals) meal\(c.meals == 1 ? "" : "s") · \(c.daysWithData) of \(c.days) day\(c.days == 1 ? "" : "s") with data\n\n"
        if let split = r.macroSplit {
            let width = 40
            let p = Int((split.proteinPct / 100 * Double(width)).rounded()), cb = Int((split.carbsPct / 100 * Double(width)).rounded())
            let fat = max(0, width - p - cb)
            out += "  Energy   " + String(repeating: "█", count: p) + String(repeating: "▓", count: cb)
                + String(repeating: "░", count: fat) + "\n"
            out += "           █ protein \(Bars.g(split.proteinPct)) %   ▓ carbs \(Bars.g(split.carbsPct)) %   ░ fat \(Bars.g(split.fatPct)) %\n\n"
        }
        if let g = r.goalAttainment {
            out += "  Goal     \(Bars.int(g.goalKcal)) kcal: \(g.daysWithinGoal) of \(g.daysWithData) logged days within ±10 % (\(Bars.g(g.percent)) %)\n"
        } else {
            out += "  Goal     none set (foodmoment goals set --kcal 2000)\n"
        }
        out += "  Streak   current \(r.currentStreak) day\(r.currentStreak == 1 ? "" : "s") · longest \(r.longestStreak) day\(r.longestStreak == 1 ? "" : "s")"
            + (r.currentStreak >= 3 ? "  🔥" : "") + "\n\n"
        out += grid(r.days, range: r.range, goalKcal: goals.dailyKcal, today: today)
        return out
    }

    /// One cell per day: `·` nothing logged, shades by kcal (against the goal when one is set, else the
    /// period's busiest day); blank for days still to come.
    static func cell(_ d: DaySummary, goalKcal: Double?, maxKcal: Double, today: LocalDay) -> Character {
        if d.day > today { return " " }
        guard d.logged else { return "·" }
        if let goal = goalKcal, goal > 0 {
            let x = d.totals.kcal / goal
            return x < 0.5 ? "░" : x < 0.9 ? "▒" : x <= 1.1 ? "█" : "▓"
        }
        let x = maxKcal > 0 ? d.totals.kcal / maxKcal : 1
        return x <= 0.25 ? "░" : x <= 0.5 ? "▒" : x <= 0.75 ? "▓" : "█"
    }

    static func grid(_ days: [DaySummary], range: StatsRange, goalKcal: Double?, today: LocalDay) -> String {
        guard let first = days.first else { return "" }
        let maxKcal = days.map(\.totals.kcal).max() ?? 0
        let legend = goalKcal != nil
            ? "  · none  ░ under 50 %  ▒ 50–90 %  █ on goal ±10 %  ▓ over 110 % of the kcal goal\n"
            : "  · none  ░ ▒ ▓ █ more kcal (quarters of the busiest day)\n"
        var out = "  Check-ins\n"
        switch range {
        case .day:
            let d = days[0]
            out += "    " + String(cell(d, goalKcal: goalKcal, maxKcal: maxKcal, today: today)) + "  \(d.day)  "
                + (d.logged ? "\(d.meals) meal\(d.meals == 1 ? "" : "s")" : "nothing logged") + "\n"
        case .week, .month:
            out += "    Mo  Tu  We  Th  Fr  Sa  Su\n"
            var line = "    " + String(repeating: "    ", count: first.day.weekdayFromMonday)
            var numbers = "    " + String(repeating: "    ", count: first.day.weekdayFromMonday)
            for d in days {
                let c = cell(d, goalKcal: goalKcal, maxKcal: maxKcal, today: today)
                line += String(repeating: String(c), count: 2) + "  "
                numbers += Output.padLeft(String(d.day.day), 2) + "  "
                if d.day.weekdayFromMonday == 6 || d.day == days.last!.day {
                    out += trim(line) + "\n" + trim(numbers) + "\n"
                    line = "    "; numbers = "    "
                }
            }
        case .year:
            // GitHub style: rows Monday…Sunday, one column per week, month initials above.
            let startMonday = first.day.adding(days: -first.day.weekdayFromMonday)
            let weeks = (days.last!.day.dayNumber - startMonday.dayNumber) / 7 + 1
            var header = Array(repeating: Character(" "), count: weeks + 1)
            for d in days where d.day.day == 1 {
                let col = (d.day.dayNumber - startMonday.dayNumber) / 7
                let initial = ["J", "F", "M", "A", "M", "J", "J", "A", "S", "O", "N", "D"][d.day.month - 1]
                if col < header.count { header[col] = Character(initial) }
            }
            out += "       " + String(header) + "\n"
            let byNumber = Dictionary(uniqueKeysWithValues: days.map { ($0.day.dayNumber, $0) })
            for (row, name) in ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"].enumerated() {
                var line = "    \(name) "
                for w in 0..<weeks {
                    let n = startMonday.dayNumber + w * 7 + row
                    line.append(byNumber[n].map { cell($0, goalKcal: goalKcal, maxKcal: maxKcal, today: today) } ?? " ")
                }
                out += trim(line) + "\n"
            }
        }
        return out + legend
    }

    static func trim(_ s: String) -> String {
        var s = s
        while s.last == " " { s.removeLast() }
        return s
    }
}

/// `foodmoment water add 250` / `water list`.
struct WaterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "water",
        abstract: "Log water (ml), list the water logs, or correct one.",
        discussion: "Examples:\n  foodmoment water add 250\n  foodmoment water add 500 --time 07:30\n  foodmoment water list --date yesterday\n  foodmoment water edit 3F2A9C --ml 330\n  foodmoment water delete 3F2A9C",
        subcommands: [Add.self, List.self, Edit.self, Delete.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Log a drink of water in millilitres.")
        @OptionGroup var store: StoreOptions
        @Argument(help: ArgumentHelp("Millilitres.", valueName: "ml")) var milliliters: Double
        @Option(help: ArgumentHelp("When: HH:MM today, 'YYYY-MM-DD HH:MM' or ISO 8601 (default now).", valueName: "time"))
        var time: String?
        @Flag(help: "Print the log entry as JSON.") var json = false
        @Flag(help: "Store an amount that looks like a typo (over 2500 ml in one entry).") var force = false

        func validate() throws {
            guard milliliters.isFinite, milliliters > 0, milliliters <= 10_000 else { throw ValidationError("water must be 1 to 10000 ml") }
            if !force, let why = EntryPlausibility.water(milliliters) { throw ValidationError("\(why); add --force if that is right") }
        }

        func run() async throws {
            let s = try store.open()
            let at = try time.map { try LocalDates.time($0, on: LocalDates.today) }
            let log = try storeCall { try s.addWater(milliliters: milliliters, at: at) }
            for a in try storeCall({ try s.updateAchievements() }) { Output.note("🏆 unlocked: \(a.title)") }
            if json { try printDiaryJSON(log); return }
            let day = LocalDay(log.time, timeZone: LocalDates.zone)
            let zone = LocalDates.zone
            let (total, goal) = try storeCall {
                (try s.waterLogs(from: day.start(in: zone), to: day.adding(days: 1).start(in: zone)).reduce(0) { $0 + $1.milliliters },
                 try s.goals().waterMl ?? 2000)
            }
            print("logged \(Bars.int(milliliters)) ml at \(LocalDates.hhmm(log.time)) · \(day): \(Bars.int(total)) / \(Bars.int(goal)) ml "
                  + Bars.bar(total, of: goal, width: 10))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List the water logs of a day.")
        @OptionGroup var store: StoreOptions
        @Option(help: ArgumentHelp("The local day (YYYY-MM-DD, today, yesterday).", valueName: "day")) var date = "today"
        @Flag(help: "Print the logs as JSON.") var json = false

        func validate() throws { _ = try LocalDates.day(date) }

        func run() async throws {
            let s = try store.open()
            let zone = LocalDates.zone
            let day = try LocalDates.day(date)
            let logs = try storeCall { try s.waterLogs(from: day.start(in: zone), to: day.adding(days: 1).start(in: zone)) }
            if json { try printDiaryJSON(logs); return }
            for l in logs { print("\(l.id.prefix(8))  \(LocalDates.hhmm(l.time))  \(Output.padLeft(Bars.int(l.milliliters), 6)) ml") }
            print("total            \(Output.padLeft(Bars.int(logs.reduce(0) { $0 + $1.milliliters }), 6)) ml  (\(day))")
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "edit", abstract: "Correct a water log's amount or time (ID from `water list`).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The log's id or its first 6+ characters.") var id: String
        @Option(help: ArgumentHelp("The right amount.", valueName: "ml")) var ml: Double?
        @Option(help: ArgumentHelp("The right time: HH:MM (on the log's day), 'YYYY-MM-DD HH:MM' or ISO 8601.", valueName: "time"))
        var time: String?
        @Flag(help: "Store an amount that looks like a typo (over 2500 ml).") var force = false
        @Flag(help: "Print the log as JSON.") var json = false

        func validate() throws {
            if ml == nil && time == nil { throw ValidationError("nothing to change: give --ml or --time") }
            if let ml {
                guard ml.isFinite, ml > 0, ml <= 10_000 else { throw ValidationError("water must be 1 to 10000 ml") }
                if !force, let why = EntryPlausibility.water(ml) { throw ValidationError("\(why); add --force if that is right") }
            }
        }

        func run() async throws {
            let s = try store.open()
            let before = try storeCall { try s.waterLog(id: id) }
            let at = try time.map { try LocalDates.time($0, on: LocalDay(before?.time ?? Date(), timeZone: LocalDates.zone)) }
            guard let log = try storeCall({ try s.editWater(id: id, milliliters: ml, time: at) }) else {
                Output.error("no water log \(id) (see `foodmoment water list`)")
                throw Exit.failed
            }
            if json { try printDiaryJSON(log); return }
            print("water \(log.id.prefix(8)): \(Bars.int(log.milliliters)) ml at \(LocalDates.hhmm(log.time)) on \(LocalDay(log.time, timeZone: LocalDates.zone))")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a water log (ID from `water list`).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The log's id or its first 6+ characters.") var id: String

        func run() async throws {
            let s = try store.open()
            guard let log = try storeCall({ try s.deleteWater(id: id) }) else {
                Output.error("no water log \(id) (see `foodmoment water list`)")
                throw Exit.failed
            }
            print("deleted water \(log.id.prefix(8)): \(Bars.int(log.milliliters)) ml at \(LocalDates.hhmm(log.time)) on \(LocalDay(log.time, timeZone: LocalDates.zone))")
        }
    }
}

/// `foodmoment weight add 68.2` / `weight list`.
struct WeightCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "weight",
        abstract: "Log your weight (kg), list the weight logs with the trend, or correct one.",
        discussion: "Examples:\n  foodmoment weight add 68.2\n  foodmoment weight list --json\n  foodmoment weight edit 3F2A9C --kg 68.4\n  foodmoment weight delete 3F2A9C",
        subcommands: [Add.self, List.self, Edit.self, Delete.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Log a weight in kilograms.")
        @OptionGroup var store: StoreOptions
        @Argument(help: ArgumentHelp("Kilograms.", valueName: "kg")) var kilograms: Double
        @Option(help: ArgumentHelp("When: HH:MM today, 'YYYY-MM-DD HH:MM' or ISO 8601 (default now).", valueName: "time"))
        var time: String?
        @Flag(help: "Print the log entry as JSON.") var json = false
        @Flag(help: "Store a weight that looks like a typo (more than 5 kg + 0.5 kg a day away from the previous log).") var force = false

        func validate() throws {
            guard kilograms.isFinite, kilograms >= 2, kilograms <= 500 else { throw ValidationError("weight must be 2 to 500 kg") }
        }

        func run() async throws {
            let s = try store.open()
            let at = try time.map { try LocalDates.time($0, on: LocalDates.today) }
            if !force, let why = EntryPlausibility.weightChange(kilograms, at: at ?? Date(),
                                                                 previous: try storeCall({ try s.weightBefore(at ?? Date()) })) {
                Output.error("\(why); add --force if that is right")
                throw Exit.usage
            }
            let log = try storeCall { try s.addWeight(kilograms: kilograms, at: at) }
            if json { try printDiaryJSON(log); return }
            let target = try storeCall { try s.goals().targetWeightKg }
            print(String(format: "logged %.1f kg at %@ on %@", kilograms, LocalDates.hhmm(log.time),
                         LocalDay(log.time, timeZone: LocalDates.zone).description)
                  + (target.map { String(format: " · %.1f kg to target %.1f kg", abs(kilograms - $0), $0) } ?? ""))
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List every weight log, oldest first, with the change.")
        @OptionGroup var store: StoreOptions
        @Flag(help: "Print the logs as JSON.") var json = false

        func run() async throws {
            let s = try store.open()
            let logs = try storeCall { try s.weightLogs(from: .distantPast, to: .distantFuture) }
            if json { try printDiaryJSON(logs); return }
            guard let first = logs.first else { Output.note("no weight logged (foodmoment weight add 68.2)"); return }
            var previous = first.kilograms
            for l in logs {
                let d = l.kilograms - previous
                let arrow = d > 0.05 ? "↑" : d < -0.05 ? "↓" : "→"
                print("\(l.id.prefix(8))  \(LocalDay(l.time, timeZone: LocalDates.zone))  \(LocalDates.hhmm(l.time))  "
                      + String(format: "%6.1f kg  %@ %+.1f", l.kilograms, arrow, d))
                previous = l.kilograms
            }
            print(String(format: "change since %@: %+.1f kg", LocalDay(first.time, timeZone: LocalDates.zone).description,
                         logs.last!.kilograms - first.kilograms))
        }
    }

    struct Edit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "edit", abstract: "Correct a weight log's value or time (ID from `weight list`).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The log's id or its first 6+ characters.") var id: String
        @Option(help: ArgumentHelp("The right weight.", valueName: "kg")) var kg: Double?
        @Option(help: ArgumentHelp("The right time: HH:MM (on the log's day), 'YYYY-MM-DD HH:MM' or ISO 8601.", valueName: "time"))
        var time: String?
        @Flag(help: "Print the log as JSON.") var json = false

        func validate() throws {
            if kg == nil && time == nil { throw ValidationError("nothing to change: give --kg or --time") }
            if let kg, !(kg.isFinite && kg >= 2 && kg <= 500) { throw ValidationError("weight must be 2 to 500 kg") }
        }

        func run() async throws {
            let s = try store.open()
            let before = try storeCall { try s.weightLog(id: id) }
            let at = try time.map { try LocalDates.time($0, on: LocalDay(before?.time ?? Date(), timeZone: LocalDates.zone)) }
            guard let log = try storeCall({ try s.editWeight(id: id, kilograms: kg, time: at) }) else {
                Output.error("no weight log \(id) (see `foodmoment weight list`)")
                throw Exit.failed
            }
            if json { try printDiaryJSON(log); return }
            print(String(format: "weight %@: %.1f kg at %@ on %@", String(log.id.prefix(8)), log.kilograms, LocalDates.hhmm(log.time),
                         LocalDay(log.time, timeZone: LocalDates.zone).description))
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a weight log (ID from `weight list`).")
        @OptionGroup var store: StoreOptions
        @Argument(help: "The log's id or its first 6+ characters.") var id: String

        func run() async throws {
            let s = try store.open()
            guard let log = try storeCall({ try s.deleteWeight(id: id) }) else {
                Output.error("no weight log \(id) (see `foodmoment weight list`)")
                throw Exit.failed
            }
            print(String(format: "deleted weight %@: %.1f kg at %@ on %@", String(log.id.prefix(8)), log.kilograms,
                         LocalDates.hhmm(log.time), LocalDay(log.time, timeZone: LocalDates.zone).description))
        }
    }
}

/// `foodmoment goals set …` / `goals show`.
struct GoalsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "goals",
        abstract: "Set or show your daily goals (kcal, protein, carbs, fat, water) and target weight.",
        discussion: "Examples:\n  foodmoment goals set --kcal 2000 --protein 120 --carbs 250 --fat 70 --water 2000\n  foodmoment goals set --target-weight 65\n  foodmoment goals set --meal-windows \"breakfast=06:00-10:00,dinner=18:00-23:00\"\n  foodmoment goals show --json",
        subcommands: [Set.self, Show.self]
    )

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Change the goals you give; the others stay (0 clears one).")
        @OptionGroup var store: StoreOptions
        @Option(help: ArgumentHelp("Daily energy goal.", valueName: "kcal")) var kcal: Double?
        @Option(help: ArgumentHelp("Daily protein in grams.", valueName: "g")) var protein: Double?
        @Option(help: ArgumentHelp("Daily carbohydrate in grams.", valueName: "g")) var carbs: Double?
        @Option(help: ArgumentHelp("Daily fat in grams.", valueName: "g")) var fat: Double?
        @Option(help: ArgumentHelp("Daily water in millilitres.", valueName: "ml")) var water: Double?
        @Option(name: .customLong("target-weight"), help: ArgumentHelp("Target weight in kg.", valueName: "kg")) var targetWeight: Double?
        @Option(name: .customLong("meal-windows"), help: ArgumentHelp(
            "When meals happen, e.g. \"breakfast=06:00-10:00,lunch=11:30-14:30,dinner=18:00-22:30\" (others keep their defaults; \"default\" resets).",
            valueName: "spec"))
        var mealWindows: String?
        @Flag(help: "Print the goals as JSON.") var json = false

        func validate() throws {
            let all = [kcal, protein, carbs, fat, water, targetWeight]
            guard all.contains(where: { $0 != nil }) || mealWindows != nil else {
                throw ValidationError("give at least one goal, e.g. --kcal 2000")
            }
            for v in all.compactMap({ $0 }) where !(v.isFinite && v >= 0) { throw ValidationError("goals must be numbers ≥ 0") }
            if let mealWindows, mealWindows != "default" {
                do { _ = try MealWindows(parsing: mealWindows) } catch { throw ValidationError(error.description) }
            }
        }

        func run() async throws {
            let s = try store.open()
            var g = try storeCall { try s.goals() }
            func apply(_ v: Double?, _ kp: WritableKeyPath<Goals, Double?>) { if let v { g[keyPath: kp] = v > 0 ? v : nil } }
            apply(kcal, \.dailyKcal); apply(protein, \.proteinG); apply(carbs, \.carbsG); apply(fat, \.fatG)
            apply(water, \.waterMl); apply(targetWeight, \.targetWeightKg)
            try storeCall { try s.setGoals(g) }
            if let mealWindows {
                let w = mealWindows == "default" ? nil : try MealWindows(parsing: mealWindows)
                try storeCall { try s.setMealWindows(w) }
            }
            if json { try printDiaryJSON(g) } else { print(GoalsCommand.text(g, windows: try storeCall { try s.mealWindows() }), terminator: "") }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show the goals and the achievements unlocked so far.")
        @OptionGroup var store: StoreOptions
        @Flag(help: "Print the goals as JSON.") var json = false

        func run() async throws {
            let s = try store.open()
            let g = try storeCall { try s.goals() }
            if json { try printDiaryJSON(g); return }
            print(GoalsCommand.text(g, windows: try storeCall { try s.mealWindows() }), terminator: "")
        }
    }

    static func text(_ g: Goals, windows: MealWindows) -> String {
        func v(_ x: Double?, _ unit: String) -> String { x.map { Bars.int($0) + unit } ?? "not set" }
        var out = "Daily goals\n"
        out += "  kcal           \(v(g.dailyKcal, ""))\n"
        out += "  protein        \(v(g.proteinG, " g"))\n"
        out += "  carbs          \(v(g.carbsG, " g"))\n"
        out += "  fat            \(v(g.fatG, " g"))\n"
        out += "  water          \(v(g.waterMl, " ml"))\n"
        out += "  target weight  \(g.targetWeightKg.map { String(format: "%.1f kg", $0) } ?? "not set")\n"
        out += "Meal windows (other times are snacks)\n"
        out += "  breakfast \(MealWindows.format(windows.breakfast))  lunch \(MealWindows.format(windows.lunch))"
            + "  dinner \(MealWindows.format(windows.dinner))\n"
        return out
    }
}

/// `foodmoment achievements`.
struct AchievementsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "achievements",
        abstract: "Achievements unlocked by your diary (first meal, 3/7/30-day streaks, protein and water goals, …).",
        discussion: "Example:\n  foodmoment achievements --json"
    )
    @OptionGroup var store: StoreOptions
    @Flag(help: "Print the achievements as JSON.") var json = false

    func run() async throws {
        let s = try store.open()
        // A read-only diary shows what was unlocked when it was last written.
        if !s.isReadOnly { _ = try storeCall { try s.updateAchievements() } }
        let all = try storeCall { try s.achievements() }
        if json { try printDiaryJSON(all); return }
        if all.isEmpty { print("none yet: log a meal to unlock the first one"); return }
        for a in all { print("🏆 \(Output.pad(a.title, 24)) \(LocalDay(a.unlockedAt, timeZone: LocalDates.zone))") }
    }
}

/// `foodmoment export --format json|csv [--out F]`.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export the whole diary as JSON (re-importable) or CSV (one row per food).",
        discussion: """
        The JSON schema (schema_version 1) and the CSV columns are documented in the README, section "Diary and meal records". Exporting an unchanged diary twice gives the same bytes.

        Examples:
          foodmoment diary export --format json --out diary.json
          foodmoment diary export --format csv > foods.csv
        """
    )
    @OptionGroup var store: StoreOptions
    @Option(help: ArgumentHelp("json or csv.", valueName: "format")) var format = "json"
    @Option(help: ArgumentHelp("Write to this file instead of stdout.", valueName: "file")) var out: String?

    func validate() throws {
        guard ["json", "csv"].contains(format) else { throw ValidationError("bad --format \(format): use json or csv") }
    }

    func run() async throws {
        let s = try store.open()
        let data: Data
        let count: Int
        if format == "json" {
            let doc = try storeCall { try s.exportDocument() }
            data = try doc.jsonData()
            count = doc.meals.count
        } else {
            data = Data(try storeCall { try s.exportCSV(timeZone: LocalDates.zone) }.utf8)
            count = try storeCall { try s.mealCount() }
        }
        if let out {
            do { try data.write(to: URL(fileURLWithPath: out), options: .atomic) } catch {
                Output.error("cannot write \(out): \(error.localizedDescription)")
                throw Exit.failed
            }
            Output.note("exported \(count) meal\(count == 1 ? "" : "s") to \(out)")
        } else {
            FileHandle.standardOutput.write(data)
        }
    }
}

/// `foodmoment import FILE`.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a JSON export (meals, water, weight, goals, achievements); importing twice adds nothing.",
        discussion: "Example:\n  foodmoment diary import diary.json --db /tmp/other.sqlite"
    )
    @OptionGroup var store: StoreOptions
    @Argument(help: ArgumentHelp("A file written by `foodmoment diary export --format json`.", valueName: "file")) var file: String
    @Flag(help: "Print the import report as JSON.") var json = false

    func run() async throws {
        let bytes: Data
        do { bytes = try Data(contentsOf: URL(fileURLWithPath: file)) } catch {
            Output.error("cannot read \(file): \(error.localizedDescription)")
            throw Exit.failed
        }
        let doc: DiaryExport
        do { doc = try DiaryExport.decode(bytes) } catch {
            Output.error("\(file): \(error.description)")
            throw Exit.failed
        }
        let s = try store.open()
        let report = try storeCall { try s.importDocument(doc) }
        for a in try storeCall({ try s.updateAchievements() }) { Output.note("🏆 unlocked: \(a.title)") }
        if json { try printDiaryJSON(report); return }
        print("imported \(file): \(report.mealsAdded) meals added, \(report.mealsUpdated) updated, \(report.mealsUnchanged) unchanged, "
              + "\(report.mealsSkipped.count) skipped; \(report.waterAdded) water, \(report.weightAdded) weight logs; "
              + "\(report.achievementsAdded) achievements" + (report.goalsSet ? "; goals set" : "")
              + (report.mealWindowsSet ? "; meal windows set" : ""))
        for s in report.mealsSkipped { Output.note("skipped \(s)") }
        if !report.mealsSkipped.isEmpty { throw Exit.failed }
    }
}
