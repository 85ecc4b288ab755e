import FoodCore
import Foundation
import MealStore
import Testing

@Suite("stats: periods, totals, averages, change, split, goal, streaks (hand-computed)")
struct StatsTests {
    func day(_ s: String) -> LocalDay { LocalDay(s)! }

    @Test func periodsStartOnMondayAndFollowTheCalendar() {
        #expect(Stats.period(.week, containing: day("2026-11-22")) == (day("2026-11-16"), day("2026-11-22")))  // a Sunday
        #expect(Stats.period(.week, containing: day("2026-11-16")) == (day("2026-11-16"), day("2026-11-22")))  // a Monday
        #expect(Stats.previousPeriod(.week, containing: day("2026-11-18")) == (day("2026-11-09"), day("2026-11-15")))
        #expect(Stats.period(.month, containing: day("2028-02-10")) == (day("2028-02-01"), day("2028-02-29")))
        #expect(Stats.previousPeriod(.month, containing: day("2026-01-15")) == (day("2025-12-01"), day("2025-12-31")))
        #expect(Stats.period(.year, containing: day("2026-11-22")) == (day("2026-01-01"), day("2026-12-31")))
        #expect(Stats.period(.day, containing: day("2026-11-22")) == (day("2026-11-22"), day("2026-11-22")))
        #expect(day("2026-11-22").weekdayFromMonday == 6)
        #expect(LocalDay("2026-02-30") == nil && LocalDay("22-11-2026") == nil)
    }

    /// One meal of one 100 g food, so its nutrients are exactly the per-100 g numbers given.
    func meal(_ d: String, _ time: String, kcal: Double, p: Double, c: Double, f: Double) -> MealRecord {
        MealRecord(type: .lunch, time: at(d, time), title: "m", foods: [food("X", kcal: kcal, protein: p, carbs: c, fat: f)],
                   createdAt: fixedNow)
    }

    @Test func weekReportMatchesHandComputedValues() throws {
        let meals = [
            // Previous week: 2 days, 2200 kcal, P 110, C 220, F 90.
            meal("2026-11-10", "12:00", kcal: 1000, p: 50, c: 100, f: 40),
            meal("2026-11-11", "12:00", kcal: 1200, p: 60, c: 120, f: 50),
            // This week: Mon 1500 (two meals), Wed 400, Thu 2000.
            meal("2026-11-16", "12:00", kcal: 600, p: 30, c: 60, f: 20),
            meal("2026-11-16", "19:00", kcal: 900, p: 40, c: 100, f: 30),
            meal("2026-11-18", "08:00", kcal: 400, p: 20, c: 50, f: 10),
            meal("2026-11-19", "23:30", kcal: 2000, p: 100, c: 200, f: 80),  // late evening stays on Thursday locally
        ]
        let water = [WaterLog(time: at("2026-11-18", "09:00"), milliliters: 750)]
        let logged = Set(meals.map { LocalDay($0.time, timeZone: berlin) })
        let r = Stats.report(range: .week, day: day("2026-11-18"), today: day("2026-11-22"), meals: meals, water: water,
                             loggedDays: logged, goals: Goals(dailyKcal: 2000), timeZone: berlin)
        #expect(r.current.start == day("2026-11-16") && r.current.end == day("2026-11-22"))
        #expect(r.current.days == 7 && r.current.daysWithData == 3 && r.current.meals == 4)
        #expect(r.current.totals == Macros(kcal: 3900, proteinG: 190, carbsG: 410, fatG: 140))
        // Per logged day: 3900 / 3 = 1300; 190 / 3 = 63.3; 410 / 3 = 136.7; 140 / 3 = 46.7.
        #expect(r.current.averagePerLoggedDay == Macros(kcal: 1300, proteinG: 63.3, carbsG: 136.7, fatG: 46.7))
        // Per day: 3900 / 7 = 557.1 → 557; 190 / 7 = 27.1; 410 / 7 = 58.6; 140 / 7 = 20.
        #expect(r.current.averagePerDay == Macros(kcal: 557, proteinG: 27.1, carbsG: 58.6, fatG: 20))
        #expect(r.previous.daysWithData == 2)
        #expect(r.previous.averagePerLoggedDay == Macros(kcal: 1100, proteinG: 55, carbsG: 110, fatG: 45))
        // (1300 − 1100) / 1100 = 18.18 %; (63.33 − 55) / 55 = 15.15 %; (136.67 − 110) / 110 = 24.24 %; (46.67 − 45) / 45 = 3.70 %.
        #expect(r.changePct == .init(kcal: 18.2, proteinG: 15.2, carbsG: 24.2, fatG: 3.7))
        // Energy: P 760, C 1640, F 1260 of 3660 kcal.
        #expect(r.macroSplit == MacroSplit(proteinPct: 20.8, carbsPct: 44.8, fatPct: 34.4))
        // Within 1800…2200 kcal: only Thursday.
        #expect(r.goalAttainment == GoalAttainment(goalKcal: 2000, daysWithinGoal: 1, daysWithData: 3, percent: 33.3))
        // Nothing on Sat 21 / Sun 22: no current streak; longest 2 (10–11 and 18–19).
        #expect(r.currentStreak == 0 && r.longestStreak == 2)
        #expect(r.days.map(\.logged) == [true, false, true, true, false, false, false])
        #expect(r.days[2].waterMl == 750 && r.days[0].totals.kcal == 1500)
    }

    @Test func averagesCountOnlyElapsedDaysAndChangeNeedsAPreviousPeriod() {
        let meals = [meal("2026-11-16", "12:00", kcal: 700, p: 0, c: 0, f: 0), meal("2026-11-17", "12:00", kcal: 500, p: 0, c: 0, f: 0)]
        let r = Stats.report(range: .week, day: day("2026-11-18"), today: day("2026-11-18"), meals: meals, water: [],
                             loggedDays: Set(meals.map { LocalDay($0.time, timeZone: berlin) }), goals: Goals(), timeZone: berlin)
        #expect(r.current.days == 3)  // Mon–Wed so far
        #expect(r.current.averagePerDay.kcal == 400)
        #expect(r.changePct.kcal == nil && r.goalAttainment == nil && r.macroSplit == nil)
        // Today (Wed) has nothing yet: the streak still counts Mon–Tue.
        #expect(r.currentStreak == 2)
    }

    /// A period still running is compared with the same span of the previous one: Monday 18:00 of this week against
    /// last week until Monday 18:00 (its Friday meal does not count yet).
    @Test func aRunningPeriodIsComparedWithTheSameSpanBefore() {
        let meals = [
            meal("2026-11-09", "12:00", kcal: 500, p: 0, c: 0, f: 0),
            meal("2026-11-09", "20:00", kcal: 300, p: 0, c: 0, f: 0),  // after 18:00: not in the compared span
            meal("2026-11-13", "12:00", kcal: 900, p: 0, c: 0, f: 0),
            meal("2026-11-16", "12:00", kcal: 600, p: 0, c: 0, f: 0),
        ]
        let logged = Set(meals.map { LocalDay($0.time, timeZone: berlin) })
        let now = at("2026-11-16", "18:00")
        let r = Stats.report(range: .week, day: day("2026-11-16"), today: day("2026-11-16"), meals: meals, water: [],
                             loggedDays: logged, goals: Goals(), timeZone: berlin, now: now)
        #expect(r.previousComparedUntil == at("2026-11-09", "18:00"))
        #expect(r.previous.daysWithData == 1 && r.previous.totals.kcal == 500 && r.previous.end == day("2026-11-09"))
        #expect(r.changePct.kcal == 20)  // 600 against 500
        // A finished week is compared whole: (500 + 300 + 900) / 2 days = 850 per logged day.
        let whole = Stats.report(range: .week, day: day("2026-11-16"), today: day("2026-11-23"), meals: meals, water: [],
                                 loggedDays: logged, goals: Goals(), timeZone: berlin, now: at("2026-11-23", "10:00"))
        #expect(whole.previousComparedUntil == nil && whole.previous.averagePerLoggedDay.kcal == 850)
        // Today so far against yesterday until the same time.
        let dayReport = Stats.report(range: .day, day: day("2026-11-10"), today: day("2026-11-10"),
                                     meals: meals + [meal("2026-11-10", "09:00", kcal: 400, p: 0, c: 0, f: 0)], water: [],
                                     loggedDays: logged, goals: Goals(), timeZone: berlin, now: at("2026-11-10", "13:00"))
        #expect(dayReport.previous.totals.kcal == 500 && dayReport.changePct.kcal == -20)
    }

    @Test func streaks() {
        let base = day("2026-11-01")
        let set = Set([0, 1, 2, 4, 5, 7].map { base.adding(days: $0) })
        #expect(Stats.streaks(loggedDays: set, today: base.adding(days: 8)) == (1, 3))   // 7 logged, 8 not yet
        #expect(Stats.streaks(loggedDays: set, today: base.adding(days: 9)) == (0, 3))   // 8 missed
        #expect(Stats.streaks(loggedDays: set, today: base.adding(days: 5)) == (2, 3))
        #expect(Stats.streaks(loggedDays: set, today: base.adding(days: 1)) == (2, 2))   // later days do not count
        #expect(Stats.streaks(loggedDays: [], today: base) == (0, 0))
    }

    @Test func changeAndSplitEdgeCases() {
        #expect(Stats.changePct(50, 0) == nil)
        #expect(Stats.changePct(75, 100) == -25)
        #expect(Stats.macroSplit(Macros(kcal: 100, proteinG: 10, carbsG: 10, fatG: 0)) == MacroSplit(proteinPct: 50, carbsPct: 50, fatPct: 0))
    }
}
