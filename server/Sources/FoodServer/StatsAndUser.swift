import FoodCore
import Foundation
import Hummingbird
import LLMRefiner
import MealStore

/// `GET /stats/daily?date=`, `/stats/weekly?week=`, `/stats/monthly?month=`, `/stats/insights?date=`: the CLI's
/// `stats` report for the caller's local day, week (Monday first) or month.
struct StatsRoutes: Sendable {
    let store: any ServerStore
    /// Writes the insights' summary when the server has LLM settings; the rule-based sentences come first regardless.
    let llm: LLMClient?

    func report(_ range: StatsRange, day: LocalDay?, _ request: Request, _ context: APIContext) async throws -> StatsReport {
        let zone = try MealRoutes.zone(request, context)
        let now = Date()
        let today = LocalDay(now, timeZone: zone)
        return try await store.diary(for: try MealRoutes.user(context))
            .statsReport(range: range, day: day ?? today, today: today, timeZone: zone, now: now)
    }

    static func day(_ request: Request, _ name: String, example: String) throws -> LocalDay? {
        guard let text = request.uri.queryParameters.get(name) else { return nil }
        guard let day = LocalDay(text) else { throw APIError.badRequest("invalid_\(name)", "\(name) must look like \(example), not \(text)") }
        return day
    }

    @Sendable func daily(_ request: Request, context: APIContext) async throws -> Response {
        let day = try Self.day(request, "date", example: "2026-11-26 (the user's local day)")
        return try MealRoutes.json(try await report(.day, day: day, request, context))
    }

    /// `week=2026-W48` (ISO week) or any day of the week (`2026-11-26`); default this week.
    @Sendable func weekly(_ request: Request, context: APIContext) async throws -> Response {
        var day: LocalDay?
        if let text = request.uri.queryParameters.get("week") {
            day = LocalDay(text) ?? ISOWeek.monday(of: text)
            guard day != nil else {
                throw APIError.badRequest("invalid_week", "week must be an ISO week like 2026-W48 or a day of the week like 2026-11-26, not \(text)")
            }
        }
        return try MealRoutes.json(try await report(.week, day: day, request, context))
    }

    /// `month=2026-11`; default this month.
    @Sendable func monthly(_ request: Request, context: APIContext) async throws -> Response {
        var day: LocalDay?
        if let text = request.uri.queryParameters.get("month") {
            day = LocalDay(text + "-01")
            guard text.count == 7, day != nil else { throw APIError.badRequest("invalid_month", "month must look like 2026-11, not \(text)") }
        }
        return try MealRoutes.json(try await report(.month, day: day, request, context))
    }

    struct Insights: Encodable {
        struct Insight: Encodable { var kind: String; var text: String }
        /// A few sentences the LLM wrote from the insights above, kept only if every number in it is one of theirs.
        struct Written: Encodable {
            var status: String
            var text: String?
            var provider: String?
            var model: String?
            var reason: String?
        }
        var weekStart: LocalDay
        var weekEnd: LocalDay
        var source = "rules"
        var insights: [Insight]
        var written: Written?
        enum CodingKeys: String, CodingKey { case source, insights, written, weekStart = "week_start", weekEnd = "week_end" }
    }

    static let writerPrompt = """
        You write the weekly summary in a food diary app. Write two or three short, friendly sentences in plain English \
        from the facts the user message lists. Use only those facts. Never state a number that is not in the facts, \
        never estimate or convert, and give no medical advice. Answer with the sentences only.
        """

    /// Every number written with digits in `text` (thousands separators dropped).
    static func numbers(in text: String) -> [Double] {
        let cleaned = text.replacingOccurrences(of: ",", with: "")
        var out: [Double] = []
        var current = ""
        for ch in cleaned + " " {
            if ch.isASCII, ch.isNumber || (ch == "." && !current.isEmpty && !current.contains(".")) {
                current.append(ch)
            } else {
                if let v = Double(current.hasSuffix(".") ? String(current.dropLast()) : current) { out.append(v) }
                current = ""
            }
        }
        return out
    }

    /// The LLM's summary of the rule-based sentences, or why there is none. A number the facts do not contain
    /// (the week's dates aside) rejects the text: it would be invented.
    static func written(_ insights: Insights, llm: LLMClient) async -> Insights.Written {
        let facts = insights.insights.map { "- " + $0.text }.joined(separator: "\n")
        let user = "The week of \(insights.weekStart) to \(insights.weekEnd). Facts:\n" + facts
        let provider = llm.provider.kind.rawValue, model = llm.provider.model
        switch await llm.write(system: writerPrompt, user: user) {
        case .failure(let failure):
            return .init(status: "unavailable", provider: provider, model: model, reason: failure.error.description)
        case .success(let raw):
            let text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty, text.count <= 1200 else {
                return .init(status: "rejected", provider: provider, model: model, reason: "the text was empty or longer than 1200 characters")
            }
            let allowed = Set(numbers(in: user))
            if let stray = numbers(in: text).first(where: { !allowed.contains($0) }) {
                return .init(status: "rejected", provider: provider, model: model,
                             reason: "it gave \(stray.formatted()), which is not one of the week's figures")
            }
            return .init(status: "written", text: text, provider: provider, model: model)
        }
    }

    /// Plain sentences about the week containing `date=` (default today), each built from numbers of the weekly report
    /// and the user's goals — nothing is estimated or made up. Reference ranges are the US Institute of Medicine's
    /// acceptable macronutrient ranges (protein 10–35 %, carbohydrate 45–65 %, fat 20–35 % of energy).
    @Sendable func insights(_ request: Request, context: APIContext) async throws -> Response {
        let day = try Self.day(request, "date", example: "2026-11-26 (a day of the week to look at)")
        let r = try await report(.week, day: day, request, context)
        let goals = try await store.diary(for: try MealRoutes.user(context)).goals()
        var insights = Self.insights(r, goals: goals)
        if let llm { insights.written = await Self.written(insights, llm: llm) }
        return try MealRoutes.json(insights)
    }

    static func insights(_ r: StatsReport, goals: Goals) -> Insights {
        var out: [Insights.Insight] = []
        let c = r.current
        // %.0f and not Int(): a number no Int holds must not stop the server.
        func n(_ v: Double) -> String { String(format: "%.0f", v) }
        if c.daysWithData == 0 {
            out.append(.init(kind: "logging", text: "No meals logged this week yet: log one to see how the week goes."))
            return Insights(weekStart: c.start, weekEnd: c.end, insights: out)
        }
        out.append(.init(kind: "logging", text: "Meals logged on \(c.daysWithData) of \(c.days) day\(c.days == 1 ? "" : "s") (\(c.meals) meal\(c.meals == 1 ? "" : "s"))."))
        let avg = c.averagePerLoggedDay
        if let goal = goals.dailyKcal {
            let pct = avg.kcal / goal * 100
            out.append(.init(kind: "energy", text: "On logged days you averaged \(n(avg.kcal)) kcal, \(n(pct)) % of your \(n(goal)) kcal goal."))
            if let g = r.goalAttainment {
                out.append(.init(kind: "goal", text: "\(g.daysWithinGoal) of \(g.daysWithData) logged days were within ±10 % of the goal."))
            }
        } else {
            out.append(.init(kind: "energy", text: "On logged days you averaged \(n(avg.kcal)) kcal (set a daily goal to compare)."))
        }
        if let change = r.changePct.kcal {
            out.append(.init(kind: "change", text: "That is \(change >= 0 ? "up" : "down") \(n(abs(change))) % on the previous week's average per logged day."))
        }
        if let split = r.macroSplit {
            let ranges: [(String, Double, ClosedRange<Double>)] = [
                ("protein", split.proteinPct, 10...35), ("carbohydrate", split.carbsPct, 45...65), ("fat", split.fatPct, 20...35),
            ]
            for (name, pct, range) in ranges where !range.contains(pct) {
                out.append(.init(kind: "macros", text: "\(name.prefix(1).uppercased() + name.dropFirst()) gave \(n(pct)) % of energy, "
                                 + "\(pct < range.lowerBound ? "below" : "above") the usual \(n(range.lowerBound))–\(n(range.upperBound)) % range."))
            }
            if ranges.allSatisfy({ $0.2.contains($0.1) }) {
                out.append(.init(kind: "macros", text: "Protein \(n(split.proteinPct)) %, carbohydrate \(n(split.carbsPct)) %, fat \(n(split.fatPct)) % of energy: all within the usual ranges."))
            }
        }
        if let goal = goals.proteinG, avg.proteinG < goal {
            out.append(.init(kind: "protein", text: "Protein averaged \(n(avg.proteinG)) g per logged day, \(n(goal - avg.proteinG)) g under your \(n(goal)) g goal."))
        }
        if let goal = goals.waterMl {
            let logged = r.days.filter(\.logged)
            let water = logged.isEmpty ? 0 : logged.reduce(0) { $0 + $1.waterMl } / Double(logged.count)
            out.append(.init(kind: "water", text: "Water averaged \(n(water)) ml per logged day against a \(n(goal)) ml goal."))
        }
        if r.currentStreak >= 2 {
            out.append(.init(kind: "streak", text: "\(r.currentStreak) days in a row with a meal logged (longest: \(r.longestStreak))."))
        }
        return Insights(weekStart: c.start, weekEnd: c.end, insights: out)
    }
}

/// `/user/…`: profile, goals, weight, streaks, achievements (account deletion is `AuthRoutes.deleteAccount`).
struct UserRoutes: Sendable {
    let store: any ServerStore

    struct ProfileBody: Encodable {
        var userId: String, name: String, signIn: String, createdAt: Date
        var displayName: String?, timeZone: String?, heightCm: Double?
        enum CodingKeys: String, CodingKey {
            case name, userId = "user_id", signIn = "sign_in", createdAt = "created_at", displayName = "display_name"
            case timeZone = "time_zone", heightCm = "height_cm"
        }
    }

    @Sendable func profile(_ request: Request, context: APIContext) async throws -> Response {
        let user = try MealRoutes.user(context)
        guard let p = try await store.profile(user) else { throw APIError.unauthorized }
        return try MealRoutes.json(ProfileBody(userId: user.rawValue, name: p.name, signIn: p.apple ? "apple" : "token", createdAt: p.createdAt,
                                               displayName: p.profile.displayName, timeZone: p.profile.timeZone, heightCm: p.profile.heightCm))
    }

    /// Fields given replace the stored ones; fields left out stay.
    @Sendable func updateProfile(_ request: Request, context: APIContext) async throws -> Response {
        let user = try MealRoutes.user(context)
        let change = try await MealRoutes.body(AccountStore.Profile.self, of: request, limit: 16 << 10,
                                               example: #"{"display_name": "Alice", "time_zone": "Europe/Paris", "height_cm": 168}"#)
        guard var current = try await store.profile(user)?.profile else { throw APIError.unauthorized }
        if let name = change.displayName {
            guard name.count <= 100 else { throw APIError.badRequest("invalid_profile", "display_name is at most 100 characters") }
            current.displayName = name
        }
        if let tz = change.timeZone {
            _ = try MealRoutes.timeZone(tz)
            current.timeZone = tz
        }
        if let h = change.heightCm {
            guard h.isFinite, (30...300).contains(h) else { throw APIError.badRequest("invalid_profile", "height_cm must be 30–300, not \(h)") }
            current.heightCm = h
        }
        try await store.setProfile(user, current, now: Date())
        return try await profile(request, context: context)
    }

    @Sendable func goals(_ request: Request, context: APIContext) async throws -> Response {
        try MealRoutes.json(try await store.diary(for: try MealRoutes.user(context)).goals())
    }

    /// Replaces the goals (a field left out or null is "not set").
    @Sendable func updateGoals(_ request: Request, context: APIContext) async throws -> Response {
        let goals = try await MealRoutes.body(Goals.self, of: request, limit: 16 << 10,
                                              example: #"{"daily_kcal": 2000, "protein_g": 90, "water_ml": 2000, "target_weight_kg": 65}"#)
        if let (name, _, value, most) = DiaryRules.goalOutOfRange(goals) {
            throw APIError.badRequest("invalid_goals", "\(name) must be above 0 and at most \(Int(most)), not \(value)")
        }
        let diary = try await store.diary(for: try MealRoutes.user(context))
        do { try await diary.setGoals(goals) } catch let error as MealStoreError {
            guard case .invalidValue = error else { throw error }
            throw APIError.badRequest("invalid_goals", error.description)
        }
        return try MealRoutes.json(try await diary.goals())
    }

    struct NewWeight: Decodable {
        var kilograms: Double
        var time: Date?
        /// Log a change that looks like a typo anyway.
        var force: Bool?
    }

    @Sendable func addWeight(_ request: Request, context: APIContext) async throws -> Response {
        let new = try await MealRoutes.body(NewWeight.self, of: request, limit: 16 << 10,
                                            example: #"{"kilograms": 64.2, "time": "2026-11-26T07:30:00Z"}"#)
        let diary = try await store.diary(for: try MealRoutes.user(context))
        let at = new.time ?? Date()
        if new.force != true, new.kilograms.isFinite, (2...500).contains(new.kilograms),
           let why = EntryPlausibility.weightChange(new.kilograms, at: at, previous: try await diary.weightBefore(at)) {
            throw APIError(.unprocessableContent, code: "implausible_weight", "\(why); send \"force\": true if that is right")
        }
        do { return try MealRoutes.json(try await diary.addWeight(kilograms: new.kilograms, at: at), status: .created) } catch let error as MealStoreError {
            guard case .invalidValue = error else { throw error }
            throw APIError.badRequest("invalid_weight", error.description)
        }
    }

    /// `GET /user/weight?from=&to=` (local days, inclusive; default the last 90 days).
    @Sendable func weights(_ request: Request, context: APIContext) async throws -> Response {
        let zone = try MealRoutes.zone(request, context)
        let today = LocalDay(Date(), timeZone: zone)
        let from = try StatsRoutes.day(request, "from", example: "2026-09-01") ?? today.adding(days: -89)
        let to = try StatsRoutes.day(request, "to", example: "2026-11-26") ?? today
        guard from <= to, to.dayNumber - from.dayNumber <= 3660 else {
            throw APIError.badRequest("invalid_range", "from must not be after to, and the range at most ten years")
        }
        let logs = try await store.diary(for: try MealRoutes.user(context))
            .weightLogs(from: from.start(in: zone), to: to.adding(days: 1).start(in: zone))
        return try MealRoutes.json(["weight": logs])
    }

    struct Streaks: Encodable {
        var current: Int, longest: Int, today: LocalDay, loggedToday: Bool
        enum CodingKeys: String, CodingKey { case current, longest, today, loggedToday = "logged_today" }
    }

    @Sendable func streaks(_ request: Request, context: APIContext) async throws -> Response {
        let zone = try MealRoutes.zone(request, context)
        let today = LocalDay(Date(), timeZone: zone)
        let logged = try await store.diary(for: try MealRoutes.user(context)).loggedDays(timeZone: zone)
        let s = Stats.streaks(loggedDays: logged, today: today)
        return try MealRoutes.json(Streaks(current: s.current, longest: s.longest, today: today, loggedToday: logged.contains(today)))
    }

    @Sendable func achievements(_ request: Request, context: APIContext) async throws -> Response {
        let diary = try await store.diary(for: try MealRoutes.user(context))
        try await diary.updateAchievements()
        return try MealRoutes.json(["achievements": try await diary.achievements()])
    }
}

public enum ISOWeek {
    /// Monday of ISO week `YYYY-Www` (week 1 holds the year's first Thursday); nil for a week the year does not have.
    public static func monday(of text: String) -> LocalDay? {
        let parts = text.uppercased().split(separator: "-")
        guard parts.count == 2, parts[0].count == 4, let year = Int(parts[0]), parts[1].hasPrefix("W"), parts[1].count == 3,
              let week = Int(parts[1].dropFirst()), (1...53).contains(week) else { return nil }
        let jan4 = LocalDay(year: year, month: 1, day: 4)
        let monday = jan4.adding(days: -jan4.weekdayFromMonday + (week - 1) * 7)
        // 28 December is always in a year's last ISO week.
        let dec28 = LocalDay(year: year, month: 12, day: 28)
        guard week < 53 || dec28.adding(days: -dec28.weekdayFromMonday) == monday else { return nil }
        return monday
    }
}
