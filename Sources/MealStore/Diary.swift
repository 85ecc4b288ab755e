public import FoodCore
public import Foundation
import GRDB

/// One change to a meal by hand. Food numbers are 0-based here (the CLI shows them 1-based).
public enum MealEdit: Sendable, Equatable {
    case type(MealType)
    case time(Date)
    /// A new title; an empty one goes back to the automatic title.
    case title(String)
    case analysis(String?)
    /// Grams of food `index`; its nutrients are recomputed from its per-100 g values.
    case grams(index: Int, grams: Double)
    case deleteFood(index: Int)
    case addFood(MealFood)
    /// Food `index` is another food (a correction): the new food's names and nutrition, the old one's box and photo;
    /// grams stay unless the new food gives its own (`gramsSource == .user`).
    case replaceFood(index: Int, with: MealFood)
}

extension MealStore {
    /// Applies the edits in order in one transaction; title, tags and totals follow the foods.
    @discardableResult
    public func edit(mealID: String, _ edits: [MealEdit]) throws -> MealRecord {
        try write("edit meal \(mealID)") { db in
            guard let id = try Rows.resolve(mealID, db), let before = try Rows.meal(id: id, db) else {
                throw MealStoreError.noSuchMeal(mealID)
            }
            let out = try DiaryRules.apply(edits, to: before, now: Time.date(nowMs))
            try Rows.save(out, db)
            return out
        }
    }

    /// Logs a meal typed by hand (or a server's meal with the photo it kept): the type from `windows` unless given;
    /// title and tags derived. A photo already in another meal is refused (`photoInAnotherMeal`).
    @discardableResult
    public func addMeal(time: Date, type: MealType? = nil, foods: [MealFood], title: String? = nil, photos: [MealPhoto] = [],
                        windows: MealWindows = .standard) throws -> MealRecord {
        for p in photos {
            if let other = try meal(photoHash: p.hash) { throw MealStoreError.photoInAnotherMeal(hash: p.hash, meal: other.id) }
        }
        let out = try DiaryRules.newMeal(time: time, type: type ?? windows.type(at: time, timeZone: timeZone), foods: foods,
                                         title: title, photos: photos, now: Time.date(nowMs))
        try write("add meal") { db in try Rows.save(out, db) }
        return out
    }

    /// Deletes a meal, its foods and photos. Its photos are remembered as deleted, so a batch that meets them again
    /// does not log them again unless asked to (`record(…, replace: true)`). False when no meal matches.
    @discardableResult
    public func deleteMeal(id: String) throws -> Bool {
        let stamp = nowMs
        return try write("delete meal \(id)") { db in
            guard let full = try Rows.resolve(id, db) else { return false }
            try db.execute(sql: """
                INSERT INTO deleted_photos (hash, deleted_ms) SELECT hash, ? FROM photos WHERE meal_id = ?
                ON CONFLICT (hash) DO UPDATE SET deleted_ms = excluded.deleted_ms
                """, arguments: [stamp, full])
            try db.execute(sql: "DELETE FROM meals WHERE id = ?", arguments: [full])
            return db.changesCount > 0
        }
    }

    // MARK: - Water and weight

    @discardableResult
    public func addWater(milliliters: Double, at time: Date? = nil) throws -> WaterLog {
        let log = try DiaryRules.water(milliliters: milliliters, at: time ?? now())
        let stamp = nowMs
        try write("add water") { db in
            try db.execute(sql: "INSERT INTO water (id, time_ms, ml, updated_ms) VALUES (?, ?, ?, ?)",
                           arguments: [log.id, Time.ms(log.time), log.milliliters, stamp])
        }
        return log
    }

    /// The water log with this id (or unique prefix of 6+ characters), nil when none matches.
    public func waterLog(id: String) throws -> WaterLog? {
        try read("read water \(id)") { db in
            try Self.logRow(id, table: "water", column: "ml", db).map { WaterLog(id: $0.id, time: $0.time, milliliters: $0.value) }
        }
    }

    /// The row of a water or weight log (the two tables share their shape: id, time_ms and one value).
    static func logRow(_ id: String, table: String, column: String, _ db: Database) throws -> (id: String, time: Date, value: Double)? {
        guard let full = try Rows.resolve(id, table: table, db),
              let row = try Row.fetchOne(db, sql: "SELECT * FROM \(table) WHERE id = ?", arguments: [full]) else { return nil }
        return (full, Time.date(row["time_ms"]), row[column])
    }

    /// Deletes the water log with this id (or unique prefix of 6+ characters); the deleted log, nil when none matches.
    @discardableResult
    public func deleteWater(id: String) throws -> WaterLog? {
        try write("delete water \(id)") { db in
            guard let row = try Self.logRow(id, table: "water", column: "ml", db) else { return nil }
            try db.execute(sql: "DELETE FROM water WHERE id = ?", arguments: [row.id])
            return WaterLog(id: row.id, time: row.time, milliliters: row.value)
        }
    }

    /// Changes a water log's amount and/or time; the log as stored, nil when no log matches.
    public func editWater(id: String, milliliters: Double?, time: Date?) throws -> WaterLog? {
        if let milliliters, !(milliliters.isFinite && milliliters > 0 && milliliters <= 10_000) {
            throw MealStoreError.invalidValue(field: "water", value: "\(milliliters) ml", expected: "1 to 10000 ml")
        }
        return try write("edit water \(id)") { db in
            guard let row = try Self.logRow(id, table: "water", column: "ml", db) else { return nil }
            let log = WaterLog(id: row.id, time: time.map { Time.date(Time.ms($0)) } ?? row.time, milliliters: milliliters ?? row.value)
            try db.execute(sql: "UPDATE water SET time_ms = ?, ml = ?, updated_ms = ? WHERE id = ?",
                           arguments: [Time.ms(log.time), log.milliliters, nowMs, row.id])
            return log
        }
    }

    public func waterLogs(from: Date, to: Date) throws -> [WaterLog] {
        try read("list water") { db in
            try Rows.water(fromMs: Time.ms(from), toMs: Time.ms(to), db)
        }
    }

    @discardableResult
    public func addWeight(kilograms: Double, at time: Date? = nil) throws -> WeightLog {
        let log = try DiaryRules.weight(kilograms: kilograms, at: time ?? now())
        let stamp = nowMs
        try write("add weight") { db in
            try db.execute(sql: "INSERT INTO weight (id, time_ms, kg, updated_ms) VALUES (?, ?, ?, ?)",
                           arguments: [log.id, Time.ms(log.time), log.kilograms, stamp])
        }
        return log
    }

    /// The weight log with this id (or unique prefix of 6+ characters), nil when none matches.
    public func weightLog(id: String) throws -> WeightLog? {
        try read("read weight \(id)") { db in
            try Self.logRow(id, table: "weight", column: "kg", db).map { WeightLog(id: $0.id, time: $0.time, kilograms: $0.value) }
        }
    }

    /// Deletes the weight log with this id (or unique prefix of 6+ characters); the deleted log, nil when none matches.
    @discardableResult
    public func deleteWeight(id: String) throws -> WeightLog? {
        try write("delete weight \(id)") { db in
            guard let row = try Self.logRow(id, table: "weight", column: "kg", db) else { return nil }
            try db.execute(sql: "DELETE FROM weight WHERE id = ?", arguments: [row.id])
            return WeightLog(id: row.id, time: row.time, kilograms: row.value)
        }
    }

    /// Changes a weight log's value and/or time; the log as stored, nil when no log matches.
    public func editWeight(id: String, kilograms: Double?, time: Date?) throws -> WeightLog? {
        if let kilograms, !(kilograms.isFinite && kilograms >= 2 && kilograms <= 500) {
            throw MealStoreError.invalidValue(field: "weight", value: "\(kilograms) kg", expected: "2 to 500 kg")
        }
        return try write("edit weight \(id)") { db in
            guard let row = try Self.logRow(id, table: "weight", column: "kg", db) else { return nil }
            let log = WeightLog(id: row.id, time: time.map { Time.date(Time.ms($0)) } ?? row.time, kilograms: kilograms ?? row.value)
            try db.execute(sql: "UPDATE weight SET time_ms = ?, kg = ?, updated_ms = ? WHERE id = ?",
                           arguments: [Time.ms(log.time), log.kilograms, nowMs, row.id])
            return log
        }
    }

    /// The weight log closest before `time` (the one a new entry is compared with), nil when there is none.
    public func weightBefore(_ time: Date) throws -> WeightLog? {
        try read("read weight") { db in
            try Rows.weight(fromMs: Int64.min, toMs: Time.ms(time), db).last
        }
    }

    public func weightLogs(from: Date, to: Date) throws -> [WeightLog] {
        try read("list weight") { db in
            try Rows.weight(fromMs: Time.ms(from), toMs: Time.ms(to), db)
        }
    }

    // MARK: - Goals

    public func goals() throws -> Goals {
        try read("read goals") { db in try Self.goals(db) }
    }

    static func goals(_ db: Database) throws -> Goals { try goalsRow(db)?.goals ?? Goals() }

    /// The goals and when they last changed; nil when they were never set.
    static func goalsRow(_ db: Database) throws -> (goals: Goals, updatedMs: Int64)? {
        guard let r = try Row.fetchOne(db, sql: "SELECT * FROM goals WHERE id = 1") else { return nil }
        return (Goals(dailyKcal: r["daily_kcal"], proteinG: r["protein_g"], carbsG: r["carbs_g"], fatG: r["fat_g"],
                      waterMl: r["water_ml"], targetWeightKg: r["target_weight_kg"]), r["updated_ms"])
    }

    /// Replaces the goals (nil fields are "not set").
    public func setGoals(_ g: Goals) throws {
        try DiaryRules.check(g)
        let stamp = nowMs
        try write("set goals") { db in try Self.setGoals(g, updatedMs: stamp, db) }
    }

    /// `updatedMs` is when they changed: sync's conflict rule compares it (the later goals win).
    static func setGoals(_ g: Goals, updatedMs: Int64, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO goals (id, daily_kcal, protein_g, carbs_g, fat_g, water_ml, target_weight_kg, updated_ms)
            VALUES (1, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET daily_kcal = excluded.daily_kcal, protein_g = excluded.protein_g,
              carbs_g = excluded.carbs_g, fat_g = excluded.fat_g, water_ml = excluded.water_ml,
              target_weight_kg = excluded.target_weight_kg, updated_ms = excluded.updated_ms
            """, arguments: [g.dailyKcal, g.proteinG, g.carbsG, g.fatG, g.waterMl, g.targetWeightKg, updatedMs])
    }

    // MARK: - Meal windows

    /// The user's meal windows (the defaults until set).
    public func mealWindows() throws -> MealWindows {
        try read("read meal windows") { db in try Self.mealWindows(db) ?? .standard }
    }

    static func mealWindows(_ db: Database) throws -> MealWindows? {
        guard let text = try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = 'meal_windows'") else { return nil }
        return try? JSONDecoder().decode(MealWindows.self, from: Data(text.utf8))
    }

    /// Stores the meal windows that `analyze --log` and `meal add` use (nil goes back to the defaults).
    public func setMealWindows(_ w: MealWindows?) throws {
        try write("set meal windows") { db in try Self.setMealWindows(w, db) }
    }

    static func setMealWindows(_ w: MealWindows?, _ db: Database) throws {
        guard let w else { try db.execute(sql: "DELETE FROM settings WHERE key = 'meal_windows'"); return }
        let text = String(decoding: try JSONEncoder().encode(w), as: UTF8.self)
        try db.execute(sql: "INSERT INTO settings (key, value) VALUES ('meal_windows', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                       arguments: [text])
    }

    // MARK: - Achievements

    /// Achievements unlocked so far, oldest first.
    public func achievements() throws -> [Achievement] {
        try read("read achievements") { db in try Self.achievements(db) }
    }

    static func achievements(_ db: Database) throws -> [Achievement] {
        try Row.fetchAll(db, sql: "SELECT * FROM achievements ORDER BY unlocked_ms, id").map {
            Achievement(id: $0["id"], title: $0["title"], unlockedAt: Time.date($0["unlocked_ms"]))
        }
    }

    /// Evaluates the achievement rules on the whole diary and stores the newly unlocked ones (dated by the
    /// meal or day that earned them). Once unlocked, an achievement stays. Returns the new ones.
    @discardableResult
    public func updateAchievements() throws -> [Achievement] {
        try write("update achievements") { db in
            let have = Set(try String.fetchAll(db, sql: "SELECT id FROM achievements"))
            let meals = try Row.fetchAll(db, sql: """
                SELECT m.time_ms AS t, COALESCE(SUM(f.protein_g), 0) AS p FROM meals m
                LEFT JOIN foods f ON f.meal_id = m.id GROUP BY m.id
                """).map { (time: Time.date($0["t"]), proteinG: $0["p"] as Double) }
            let water = try Rows.water(fromMs: Int64.min, toMs: Int64.max, db)
            let earned = DiaryRules.achievements(meals: meals, water: water, goals: try Self.goals(db), timeZone: timeZone)
            var new: [Achievement] = []
            for a in earned where !have.contains(a.id) {
                try db.execute(sql: "INSERT INTO achievements (id, title, unlocked_ms) VALUES (?, ?, ?)",
                               arguments: [a.id, a.title, Time.ms(a.unlockedAt)])
                new.append(a)
            }
            return new
        }
    }
}

/// What the achievement rules need to know about one local day.
struct DayFacts {
    /// Time of the day's first meal (nil on a day with only water logs).
    var firstMeal: Int64?
    var protein: Double = 0
    /// (time, running total in ml) of each water log of the day, in time order.
    var waterLogs: [(time: Int64, total: Double)] = []
}

/// The achievement rules (documented in the README):
/// - `first-meal` "First meal logged"
/// - `meals-10`, `meals-100`: 10 and 100 meals logged
/// - `streak-3`, `streak-7`, `streak-30`: meals logged on 3, 7, 30 consecutive days
/// - `protein-goal`: a day whose foods reach the protein goal (when one is set)
/// - `hydrated`: a day whose water logs reach the water goal (2000 ml when none is set)
enum AchievementRules {
    static func evaluate(mealTimes: [Int64], days: [LocalDay: DayFacts], goals: Goals) -> [Achievement] {
        var out: [Achievement] = []
        let sortedTimes = mealTimes.sorted()
        for (n, id, title) in [(1, "first-meal", "First meal logged"), (10, "meals-10", "10 meals logged"),
                               (100, "meals-100", "100 meals logged")] where sortedTimes.count >= n {
            out.append(Achievement(id: id, title: title, unlockedAt: Time.date(sortedTimes[n - 1])))
        }
        let mealDays = days.filter { $0.value.firstMeal != nil }.keys.sorted()
        var run = 0
        var previous: LocalDay?
        for d in mealDays {
            run = previous?.adding(days: 1) == d ? run + 1 : 1
            previous = d
            if [3, 7, 30].contains(run) && !out.contains(where: { $0.id == "streak-\(run)" }) {
                out.append(Achievement(id: "streak-\(run)", title: "\(run)-day logging streak",
                                       unlockedAt: Time.date(days[d]!.firstMeal!)))
            }
        }
        if let goal = goals.proteinG, let d = mealDays.first(where: { days[$0]!.protein >= goal }) {
            out.append(Achievement(id: "protein-goal", title: "Protein goal met", unlockedAt: Time.date(days[d]!.firstMeal!)))
        }
        let waterGoal = goals.waterMl ?? 2000
        for d in days.keys.sorted() {
            if let hit = days[d]!.waterLogs.first(where: { $0.total >= waterGoal }) {
                out.append(Achievement(id: "hydrated", title: "Water goal reached", unlockedAt: Time.date(hit.time)))
                break
            }
        }
        return out
    }
}
