public import FoodCore
public import Foundation

/// The diary's rules on values, whatever keeps the rows: MealStore (SQLite) applies them inside its transactions, and
/// a server store on another database applies the same ones, so a meal edited through either comes out the same.
public enum DiaryRules {
    /// A meal typed by hand (no photo), its title and tags derived from its foods.
    public static func newMeal(time: Date, type: MealType, foods: [MealFood], title: String?, photos: [MealPhoto] = [],
                               now: Date) throws -> MealRecord {
        try Validate.foods(foods)
        let rec = MealRecord(type: type, time: Time.date(Time.ms(time)), title: title ?? "", foods: foods, photos: photos,
                             createdAt: Time.date(Time.ms(now)))
        return Rows.derive(rec, from: nil)
    }

    /// `before` with `edits` applied in order; title, tags and totals follow the foods.
    public static func apply(_ edits: [MealEdit], to before: MealRecord, now: Date) throws -> MealRecord {
        var rec = before
        let short = String(before.id.prefix(8))
        for e in edits {
            switch e {
            case let .type(t): rec.type = t
            case let .time(d): rec.time = Time.date(Time.ms(d))
            case let .title(t): rec.title = t.trimmingCharacters(in: .whitespacesAndNewlines)
            case let .analysis(a): rec.analysis = a
            case let .grams(i, g):
                guard rec.foods.indices.contains(i) else { throw MealStoreError.noSuchFood(meal: short, number: i + 1, count: rec.foods.count) }
                guard g.isFinite, g >= 0 else { throw MealStoreError.invalidValue(field: "grams", value: "\(g)", expected: "a number ≥ 0") }
                rec.foods[i].setGrams(g)
            case let .deleteFood(i):
                guard rec.foods.indices.contains(i) else { throw MealStoreError.noSuchFood(meal: short, number: i + 1, count: rec.foods.count) }
                rec.foods.remove(at: i)
            case let .addFood(f):
                try Validate.foods([f])
                rec.foods.append(f)
            case let .replaceFood(i, f):
                guard rec.foods.indices.contains(i) else { throw MealStoreError.noSuchFood(meal: short, number: i + 1, count: rec.foods.count) }
                try Validate.foods([f])
                rec.foods[i] = replacing(rec.foods[i], with: f)
            }
        }
        rec.updatedAt = Time.date(Time.ms(now))
        // The analysis text described the foods as recognised; once they are changed by hand it says so, so a
        // reader never takes the old text for the meal's contents (replacing an earlier such line).
        let analysisEdited = edits.contains { if case .analysis = $0 { true } else { false } }
        if rec.foods != before.foods, !analysisEdited, let text = rec.analysis {
            let original = text.components(separatedBy: editedMarker).first ?? text
            let now = rec.foods.map { "\($0.name.isEmpty ? $0.label : $0.name) \(Int($0.grams.rounded())) g" }.joined(separator: ", ")
            rec.analysis = original + editedMarker + "foods now \(now.isEmpty ? "none" : now) (\(Int(rec.totals.kcal.rounded())) kcal)."
        }
        return Rows.derive(rec, from: before)
    }

    /// A correction: `new`'s names and nutrition where `old` was seen (its box and photo), with `old`'s grams unless
    /// `new` brings the user's own (`gramsSource == .user`). `MealEdit.replaceFood`, and what the CLI and the server
    /// hand a `Correction` to teach, are this one value.
    public static func replacing(_ old: MealFood, with new: MealFood) -> MealFood {
        var food = new
        food.box = old.box
        food.photoHash = old.photoHash
        if new.gramsSource != .user { food.setGrams(old.grams, source: old.gramsSource) }
        return food
    }

    /// Starts the line `apply` appends to a meal's analysis text when its foods were changed by hand.
    static let editedMarker = "\n\nEdited by hand: "

    public static func water(milliliters: Double, at time: Date) throws -> WaterLog {
        guard milliliters.isFinite, milliliters > 0, milliliters <= 10_000 else {
            throw MealStoreError.invalidValue(field: "water", value: "\(milliliters) ml", expected: "1 to 10000 ml")
        }
        return WaterLog(time: Time.date(Time.ms(time)), milliliters: milliliters)
    }

    public static func weight(kilograms: Double, at time: Date) throws -> WeightLog {
        guard kilograms.isFinite, kilograms >= 2, kilograms <= 500 else {
            throw MealStoreError.invalidValue(field: "weight", value: "\(kilograms) kg", expected: "2 to 500 kg")
        }
        return WeightLog(time: Time.date(Time.ms(time)), kilograms: kilograms)
    }

    /// Every set goal must be above 0 and at most its limit (`goalOutOfRange`).
    public static func check(_ g: Goals) throws {
        if let (_, name, v, most) = goalOutOfRange(g) {
            throw MealStoreError.invalidValue(field: "goal \(name)", value: "\(v)", expected: "above 0 and at most \(Int(most))")
        }
    }

    /// The first set goal that is not above 0 and at most its limit (more is a typo), with its JSON name and its name
    /// in messages: the one rule the CLI, `import`, the server's goals route and sync check against.
    public static func goalOutOfRange(_ g: Goals) -> (json: String, name: String, value: Double, most: Double)? {
        let limits: [(String, String, Double?, Double)] = [
            ("daily_kcal", "kcal", g.dailyKcal, 20_000), ("protein_g", "protein", g.proteinG, 2000), ("carbs_g", "carbs", g.carbsG, 2000),
            ("fat_g", "fat", g.fatG, 2000), ("water_ml", "water", g.waterMl, 20_000), ("target_weight_kg", "target weight", g.targetWeightKg, 500)]
        for (json, name, value, most) in limits {
            if let value, !(value.isFinite && value > 0 && value <= most) { return (json, name, value, most) }
        }
        return nil
    }

    /// The achievements the whole diary has earned (README "Achievements"), each dated by the meal or log that earned
    /// it: `meals` are every meal's time and protein, `water` every water log; days are local days in `timeZone`.
    public static func achievements(meals: [(time: Date, proteinG: Double)], water: [WaterLog], goals: Goals,
                                    timeZone: TimeZone) -> [Achievement] {
        var days: [LocalDay: DayFacts] = [:]
        var mealTimes: [Int64] = []
        for m in meals.sorted(by: { $0.time < $1.time }) {
            let t = Time.ms(m.time)
            mealTimes.append(t)
            let day = LocalDay(m.time, timeZone: timeZone)
            days[day, default: DayFacts()].firstMeal = min(days[day]?.firstMeal ?? t, t)
            days[day, default: DayFacts()].protein += m.proteinG
        }
        for w in water.sorted(by: { ($0.time, $0.id) < ($1.time, $1.id) }) {
            let t = Time.ms(w.time)
            let day = LocalDay(w.time, timeZone: timeZone)
            let total = (days[day]?.waterLogs.last?.total ?? 0) + w.milliliters
            days[day, default: DayFacts()].waterLogs.append((t, total))
        }
        return AchievementRules.evaluate(mealTimes: mealTimes, days: days, goals: goals)
    }
}
