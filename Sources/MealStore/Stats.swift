public import FoodCore
public import Foundation
import GRDB

/// The period a report covers. Weeks start on Monday; all in the local time zone.
public enum StatsRange: String, Sendable, Codable, CaseIterable {
    case day, week, month, year
}

/// One local day of the diary.
public struct DaySummary: Sendable, Codable, Equatable {
    public var day: LocalDay
    public var meals: Int
    public var totals: Macros
    public var waterMl: Double
    public var logged: Bool { meals > 0 }

    public init(day: LocalDay, meals: Int = 0, totals: Macros = .zero, waterMl: Double = 0) {
        self.day = day; self.meals = meals; self.totals = totals; self.waterMl = waterMl
    }

    enum CodingKeys: String, CodingKey { case day, meals, totals, waterMl = "water_ml" }
}

/// Share of energy from each macronutrient, in percent (protein and carbs 4 kcal/g, fat 9 kcal/g).
public struct MacroSplit: Sendable, Codable, Equatable {
    public var proteinPct: Double
    public var carbsPct: Double
    public var fatPct: Double

    public init(proteinPct: Double, carbsPct: Double, fatPct: Double) {
        self.proteinPct = proteinPct; self.carbsPct = carbsPct; self.fatPct = fatPct
    }

    enum CodingKeys: String, CodingKey { case proteinPct = "protein_pct", carbsPct = "carbs_pct", fatPct = "fat_pct" }
}

/// Totals and averages of one period.
public struct PeriodTotals: Sendable, Codable, Equatable {
    public var start: LocalDay
    /// Last day, inclusive.
    public var end: LocalDay
    /// Days of the period up to and including today (future days do not count).
    public var days: Int
    public var daysWithData: Int
    public var meals: Int
    public var totals: Macros
    /// Totals / days with data (zero when there are none).
    public var averagePerLoggedDay: Macros
    /// Totals / elapsed days.
    public var averagePerDay: Macros

    enum CodingKeys: String, CodingKey {
        case start, end, days, meals, totals
        case daysWithData = "days_with_data", averagePerLoggedDay = "average_per_logged_day", averagePerDay = "average_per_day"
    }
}

/// Days within ±10 % of the kcal goal, among the days with data.
public struct GoalAttainment: Sendable, Codable, Equatable {
    public var goalKcal: Double
    public var daysWithinGoal: Int
    public var daysWithData: Int
    public var percent: Double

    public init(goalKcal: Double, daysWithinGoal: Int, daysWithData: Int, percent: Double) {
        self.goalKcal = goalKcal; self.daysWithinGoal = daysWithinGoal; self.daysWithData = daysWithData; self.percent = percent
    }

    enum CodingKeys: String, CodingKey {
        case goalKcal = "goal_kcal", daysWithinGoal = "days_within_goal", daysWithData = "days_with_data", percent
    }
}

/// Everything `foodmoment stats` shows.
public struct StatsReport: Sendable, Codable, Equatable {
    public var range: StatsRange
    public var current: PeriodTotals
    public var previous: PeriodTotals
    /// Change of the average per logged day against the previous period, in percent (nil when the previous
    /// period has no data).
    public var changePct: ChangePct
    public var macroSplit: MacroSplit?
    public var goalAttainment: GoalAttainment?
    /// Consecutive logged days ending today (or yesterday, when today has nothing yet).
    public var currentStreak: Int
    /// The longest run of consecutive logged days up to the period's end.
    public var longestStreak: Int
    /// When the current period is still running, the previous one is counted only up to this instant: as far into it
    /// as now is into the current one (a half-finished day or week against the same span before it). Nil when the
    /// current period is over.
    public var previousComparedUntil: Date?
    /// Every day of the period, in order (future days included, with no data).
    public var days: [DaySummary]

    public struct ChangePct: Sendable, Codable, Equatable {
        public var kcal: Double?
        public var proteinG: Double?
        public var carbsG: Double?
        public var fatG: Double?
        public init(kcal: Double?, proteinG: Double?, carbsG: Double?, fatG: Double?) {
            self.kcal = kcal; self.proteinG = proteinG; self.carbsG = carbsG; self.fatG = fatG
        }
        enum CodingKeys: String, CodingKey { case kcal, proteinG = "protein_g", carbsG = "carbs_g", fatG = "fat_g" }
    }

    enum CodingKeys: String, CodingKey {
        case range, current, previous, days
        case changePct = "change_pct", macroSplit = "macro_split", goalAttainment = "goal_attainment"
        case currentStreak = "current_streak", longestStreak = "longest_streak"
        case previousComparedUntil = "previous_compared_until"
    }
}

/// Pure functions over meals and logs; the CLI reads the store and calls these.
public enum Stats {
    /// First and last day (inclusive) of the period of `range` that contains `day`.
    public static func period(_ range: StatsRange, containing day: LocalDay) -> (start: LocalDay, end: LocalDay) {
        switch range {
        case .day:
            return (day, day)
        case .week:
            let start = day.adding(days: -day.weekdayFromMonday)
            return (start, start.adding(days: 6))
        case .month:
            let start = LocalDay(year: day.year, month: day.month, day: 1)
            let next = day.month == 12 ? LocalDay(year: day.year + 1, month: 1, day: 1) : LocalDay(year: day.year, month: day.month + 1, day: 1)
            return (start, next.adding(days: -1))
        case .year:
            return (LocalDay(year: day.year, month: 1, day: 1), LocalDay(year: day.year, month: 12, day: 31))
        }
    }

    /// The period just before the one that contains `day`.
    public static func previousPeriod(_ range: StatsRange, containing day: LocalDay) -> (start: LocalDay, end: LocalDay) {
        period(range, containing: period(range, containing: day).start.adding(days: -1))
    }

    /// One summary per day from `start` to `end` (inclusive), from meals and water logs read in `timeZone`.
    public static func days(from start: LocalDay, to end: LocalDay, meals: [MealRecord], water: [WaterLog],
                            timeZone: TimeZone) -> [DaySummary] {
        guard start <= end else { return [] }
        var out = (start.dayNumber...end.dayNumber).map { DaySummary(day: LocalDay(dayNumber: $0)) }
        for m in meals {
            let i = LocalDay(m.time, timeZone: timeZone).dayNumber - start.dayNumber
            guard out.indices.contains(i) else { continue }
            out[i].meals += 1
            out[i].totals = out[i].totals + m.totals
        }
        for w in water {
            let i = LocalDay(w.time, timeZone: timeZone).dayNumber - start.dayNumber
            if out.indices.contains(i) { out[i].waterMl += w.milliliters }
        }
        return out
    }

    /// Totals and averages of `days` (days after `today` do not count as elapsed).
    public static func totals(_ days: [DaySummary], today: LocalDay) -> PeriodTotals {
        let elapsed = days.filter { $0.day <= today }
        let logged = days.filter(\.logged)
        let sum = days.reduce(Macros.zero) { $0 + $1.totals }
        return PeriodTotals(
            start: days.first?.day ?? today, end: days.last?.day ?? today, days: elapsed.count,
            daysWithData: logged.count, meals: days.reduce(0) { $0 + $1.meals }, totals: sum.rounded,
            averagePerLoggedDay: logged.isEmpty ? .zero : sum.scaled(by: 1 / Double(logged.count)).rounded,
            averagePerDay: elapsed.isEmpty ? .zero : sum.scaled(by: 1 / Double(elapsed.count)).rounded)
    }

    /// Energy shares of protein, carbs and fat (nil when they add up to no energy).
    public static func macroSplit(_ m: Macros) -> MacroSplit? {
        let p = m.proteinG * 4, c = m.carbsG * 4, f = m.fatG * 9
        let sum = p + c + f
        guard sum > 0 else { return nil }
        func pct(_ v: Double) -> Double { (v / sum * 1000).rounded() / 10 }
        return MacroSplit(proteinPct: pct(p), carbsPct: pct(c), fatPct: pct(f))
    }

    /// `(now - before) / before × 100`, rounded to 0.1 (nil when `before` is zero).
    public static func changePct(_ now: Double, _ before: Double) -> Double? {
        guard before != 0 else { return nil }
        return ((now - before) / before * 1000).rounded() / 10
    }

    /// Days with data whose kcal are within the goal (`Goals.kcalWithinGoal`: ±10 %).
    public static func goalAttainment(_ days: [DaySummary], goalKcal: Double) -> GoalAttainment {
        let logged = days.filter(\.logged)
        let goals = Goals(dailyKcal: goalKcal)
        let within = logged.filter { goals.kcalWithinGoal($0.totals.kcal) == true }.count
        return GoalAttainment(goalKcal: goalKcal, daysWithinGoal: within, daysWithData: logged.count,
                              percent: logged.isEmpty ? 0 : (Double(within) / Double(logged.count) * 1000).rounded() / 10)
    }

    /// The current streak (consecutive logged days ending at `today`, or at yesterday when today has nothing
    /// logged yet) and the longest streak among days up to `today`.
    public static func streaks(loggedDays: Set<LocalDay>, today: LocalDay) -> (current: Int, longest: Int) {
        let numbers = Set(loggedDays.map(\.dayNumber).filter { $0 <= today.dayNumber })
        var longest = 0
        for n in numbers where !numbers.contains(n - 1) {
            var run = 1
            while numbers.contains(n + run) { run += 1 }
            longest = max(longest, run)
        }
        var end = today.dayNumber
        if !numbers.contains(end) { end -= 1 }
        var current = 0
        while numbers.contains(end - current) { current += 1 }
        return (current, longest)
    }

    /// The whole report for the period of `range` that contains `day`. `meals` and `water` must cover the
    /// current and the previous period; `loggedDays` is every day with a meal (for the streaks). With `now` inside the
    /// current period, the previous period counts only the same span (`previousComparedUntil`).
    public static func report(range: StatsRange, day: LocalDay, today: LocalDay, meals: [MealRecord], water: [WaterLog],
                              loggedDays: Set<LocalDay>, goals: Goals, timeZone: TimeZone, now: Date? = nil) -> StatsReport {
        let (s, e) = period(range, containing: day)
        let (ps, pe) = previousPeriod(range, containing: day)
        let cur = days(from: s, to: e, meals: meals, water: water, timeZone: timeZone)
        var cutoff: Date?
        if let now, now >= s.start(in: timeZone), now < e.adding(days: 1).start(in: timeZone) {
            cutoff = min(ps.start(in: timeZone).addingTimeInterval(now.timeIntervalSince(s.start(in: timeZone))),
                         pe.adding(days: 1).start(in: timeZone))
        }
        let prevEnd = cutoff.map { min(pe, LocalDay($0.addingTimeInterval(-0.001), timeZone: timeZone)) } ?? pe
        let prev = days(from: ps, to: max(ps, prevEnd), meals: cutoff.map { c in meals.filter { $0.time < c } } ?? meals,
                        water: cutoff.map { c in water.filter { $0.time < c } } ?? water, timeZone: timeZone)
        let ct = totals(cur, today: today), pt = totals(prev, today: today)
        // Changes from the unrounded averages, so a rounded average does not shift the percentage.
        func average(_ d: [DaySummary]) -> Macros {
            let logged = d.filter(\.logged)
            return logged.isEmpty ? .zero : logged.reduce(Macros.zero) { $0 + $1.totals }.scaled(by: 1 / Double(logged.count))
        }
        let a = average(cur), b = average(prev), hasPrevious = pt.daysWithData > 0
        let change = StatsReport.ChangePct(
            kcal: hasPrevious ? changePct(a.kcal, b.kcal) : nil,
            proteinG: hasPrevious ? changePct(a.proteinG, b.proteinG) : nil,
            carbsG: hasPrevious ? changePct(a.carbsG, b.carbsG) : nil,
            fatG: hasPrevious ? changePct(a.fatG, b.fatG) : nil)
        let streakDay = min(today, e)
        let st = streaks(loggedDays: loggedDays, today: streakDay)
        return StatsReport(range: range, current: ct, previous: pt, changePct: change, macroSplit: macroSplit(ct.totals),
                           goalAttainment: goals.dailyKcal.map { goalAttainment(cur, goalKcal: $0) },
                           currentStreak: st.current, longestStreak: st.longest, previousComparedUntil: cutoff, days: cur)
    }
}

extension MealStore {
    /// The report for the period of `range` that contains `day` in `timeZone`, read from this diary (the CLI's `stats`
    /// and the server's `/stats` both answer with it).
    public func statsReport(range: StatsRange, day: LocalDay, today: LocalDay, timeZone: TimeZone, now: Date) throws -> StatsReport {
        let (ps, _) = Stats.previousPeriod(range, containing: day)
        let (_, e) = Stats.period(range, containing: day)
        let from = ps.start(in: timeZone), to = e.adding(days: 1).start(in: timeZone)
        let meals = try meals(from: from, to: to), water = try waterLogs(from: from, to: to)
        let logged = try loggedDays(timeZone: timeZone), goals = try goals()
        return Stats.report(range: range, day: day, today: today, meals: meals, water: water, loggedDays: logged,
                            goals: goals, timeZone: timeZone, now: now)
    }

    /// Every local day (in `timeZone`) that has at least one meal.
    public func loggedDays(timeZone: TimeZone? = nil) throws -> Set<LocalDay> {
        let tz = timeZone ?? self.timeZone
        return try read("list logged days") { db in
            Set(try Int64.fetchAll(db, sql: "SELECT time_ms FROM meals").map { LocalDay(Time.date($0), timeZone: tz) })
        }
    }
}
