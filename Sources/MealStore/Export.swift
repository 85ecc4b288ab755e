public import FoodCore
public import Foundation
import GRDB

/// The JSON export (schema documented in the README). Meals are sorted by time then id; dates are ISO 8601
/// UTC with milliseconds; keys are sorted, so exporting the same diary twice gives the same bytes.
public struct DiaryExport: Sendable, Codable, Equatable {
    public static let currentSchemaVersion = 1

    public var schemaVersion: Int
    public var generator: String
    public var meals: [MealRecord]
    public var water: [WaterLog]
    public var weight: [WeightLog]
    public var goals: Goals
    public var achievements: [Achievement]
    /// The meal windows, when the user set their own.
    public var mealWindows: MealWindows?

    public init(meals: [MealRecord], water: [WaterLog], weight: [WeightLog], goals: Goals, achievements: [Achievement],
                mealWindows: MealWindows? = nil) {
        schemaVersion = Self.currentSchemaVersion
        generator = "foodmoment"
        self.meals = meals; self.water = water; self.weight = weight; self.goals = goals; self.achievements = achievements
        self.mealWindows = mealWindows
    }

    enum CodingKeys: String, CodingKey {
        case schemaVersion = "schema_version", generator, meals, water, weight, goals, achievements
        case mealWindows = "meal_windows"
    }

    public static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        e.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(Time.iso(date))
        }
        return e
    }

    public static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .custom { decoder in
            let c = try decoder.singleValueContainer()
            let s = try c.decode(String.self)
            guard let date = Time.parseISO(s) else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "not an ISO 8601 time: \(s)")
            }
            return date
        }
        return d
    }

    /// The document as JSON bytes (ending in a newline).
    public func jsonData() throws -> Data {
        try Self.encoder().encode(self) + Data("\n".utf8)
    }

    /// Reads an export; refuses other documents and newer schema versions with a message that says which.
    public static func decode(_ data: Data) throws(MealStoreError) -> DiaryExport {
        struct Probe: Decodable { var schema_version: Int? }
        guard let probe = try? JSONDecoder().decode(Probe.self, from: data) else {
            throw .badExport(reason: "not a JSON object")
        }
        guard let v = probe.schema_version else { throw .badExport(reason: "no schema_version field") }
        guard v <= currentSchemaVersion, v >= 1 else {
            throw .badExport(reason: "schema_version \(v) is not supported (this foodmoment reads 1…\(currentSchemaVersion); update foodmoment)")
        }
        do { return try decoder().decode(DiaryExport.self, from: data) } catch {
            throw .badExport(reason: "\(error)")
        }
    }
}

/// What `import` did.
public struct ImportReport: Sendable, Codable, Equatable {
    public var mealsAdded = 0
    public var mealsUpdated = 0
    public var mealsUnchanged = 0
    /// Meals not imported, with the reason (a photo already logged in another meal).
    public var mealsSkipped: [String] = []
    public var waterAdded = 0
    public var weightAdded = 0
    public var achievementsAdded = 0
    public var goalsSet = false
    public var mealWindowsSet = false

    public init() {}

    enum CodingKeys: String, CodingKey {
        case mealsAdded = "meals_added", mealsUpdated = "meals_updated", mealsUnchanged = "meals_unchanged"
        case mealsSkipped = "meals_skipped", waterAdded = "water_added", weightAdded = "weight_added"
        case achievementsAdded = "achievements_added", goalsSet = "goals_set", mealWindowsSet = "meal_windows_set"
    }
}

extension MealStore {
    /// Everything in the store (but the batch journal), read in one snapshot.
    public func exportDocument() throws -> DiaryExport {
        try read("export") { db in
            let meals = try Rows.meals(fromMs: Int64.min, toMs: Int64.max, db)
            let water = try Rows.water(fromMs: Int64.min, toMs: Int64.max, db)
            let weight = try Rows.weight(fromMs: Int64.min, toMs: Int64.max, db)
            return DiaryExport(meals: meals, water: water, weight: weight, goals: try Self.goals(db),
                               achievements: try Self.achievements(db), mealWindows: try Self.mealWindows(db))
        }
    }

    /// Imports an export in one transaction. Meals are matched by id: a new id is added, a known id with other
    /// contents is replaced, an identical one is left alone, so importing the same file twice changes nothing.
    /// A meal whose photo is already logged in a different meal is skipped (and reported). Water, weight and
    /// achievements are matched by id; goals are set when the file has any.
    public func importDocument(_ doc: DiaryExport) throws -> ImportReport {
        for m in doc.meals { try Validate.foods(m.foods) }
        try DiaryRules.check(doc.goals)
        let stamp = nowMs
        return try write("import") { db in
            var report = ImportReport()
            meals: for m0 in doc.meals {
                var m = m0
                m.time = Time.date(Time.ms(m.time))
                m.createdAt = Time.date(Time.ms(m.createdAt)); m.updatedAt = Time.date(Time.ms(m.updatedAt))
                m.photos = m.photos.map { var p = $0; p.takenAt = Time.date(Time.ms(p.takenAt)); return p }
                    .sorted { ($0.takenAt, $0.hash) < ($1.takenAt, $1.hash) }
                for p in m.photos {
                    if let owner = try String.fetchOne(db, sql: "SELECT meal_id FROM photos WHERE hash = ?", arguments: [p.hash]),
                       owner != m.id {
                        report.mealsSkipped.append("\(m.id): photo \(p.path) (\(p.hash.prefix(12))) is already in meal \(owner)")
                        continue meals
                    }
                }
                if let existing = try Rows.meal(id: m.id, db) {
                    if existing == m { report.mealsUnchanged += 1; continue }
                    report.mealsUpdated += 1
                } else {
                    report.mealsAdded += 1
                }
                try Rows.save(m, db)
            }
            for w in doc.water {
                try db.execute(sql: "INSERT OR IGNORE INTO water (id, time_ms, ml) VALUES (?, ?, ?)",
                               arguments: [w.id, Time.ms(w.time), w.milliliters])
                report.waterAdded += db.changesCount
            }
            for w in doc.weight {
                try db.execute(sql: "INSERT OR IGNORE INTO weight (id, time_ms, kg) VALUES (?, ?, ?)",
                               arguments: [w.id, Time.ms(w.time), w.kilograms])
                report.weightAdded += db.changesCount
            }
            for a in doc.achievements {
                try db.execute(sql: "INSERT OR IGNORE INTO achievements (id, title, unlocked_ms) VALUES (?, ?, ?)",
                               arguments: [a.id, a.title, Time.ms(a.unlockedAt)])
                report.achievementsAdded += db.changesCount
            }
            if let w = doc.mealWindows, try Self.mealWindows(db) != w {
                try Self.setMealWindows(w, db)
                report.mealWindowsSet = true
            }
            if doc.goals != Goals(), try Self.goals(db) != doc.goals {
                try Self.setGoals(doc.goals, updatedMs: stamp, db)
                report.goalsSet = true
            }
            return report
        }
    }

    /// The CSV export: one row per food (a meal without foods gets one row with empty food columns).
    public func exportCSV(timeZone: TimeZone? = nil) throws -> String {
        DiaryCSV.render(try allMeals(), timeZone: timeZone ?? self.timeZone)
    }
}

/// CSV columns (documented in the README), RFC 4180 quoting with the formula guard (`CSV`), `\n` line ends.
public enum DiaryCSV {
    public static let columns = [
        "meal_id", "meal_type", "meal_time", "local_date", "local_time", "meal_title", "meal_tags", "meal_kcal",
        "food_number", "label", "name", "name_zh", "emoji", "confidence", "grams", "grams_source", "source", "food_id",
        "kcal", "protein_g", "carbs_g", "fat_g", "fiber_g", "sugars_g", "sodium_mg", "photo_hash", "photo_path",
    ]

    public static func render(_ meals: [MealRecord], timeZone: TimeZone) -> String {
        var out = columns.joined(separator: ",") + "\n"
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = timeZone
        for m in meals {
            let c = cal.dateComponents([.hour, .minute], from: m.time)
            let head: [String] = [
                m.id, m.type.rawValue, Time.iso(m.time), LocalDay(m.time, timeZone: timeZone).description,
                String(format: "%02d:%02d", c.hour ?? 0, c.minute ?? 0), m.title, m.tags.joined(separator: ";"),
                number(m.totals.kcal),
            ]
            let paths = Dictionary(m.photos.map { ($0.hash, $0.path) }, uniquingKeysWith: { a, _ in a })
            if m.foods.isEmpty {
                out += line(head + Array(repeating: "", count: columns.count - head.count))
            }
            for (i, f) in m.foods.enumerated() {
                out += line(head + [
                    String(i + 1), f.label, f.name, f.nameZh, f.emoji, number(f.confidence), number(f.grams), f.gramsSource.rawValue,
                    f.source.rawValue, f.foodId ?? "", number(f.nutrients.kcal), number(f.nutrients.proteinG),
                    number(f.nutrients.carbsG), number(f.nutrients.fatG), number(f.nutrients.fiberG),
                    f.nutrients.sugarsG.map(number) ?? "", f.nutrients.sodiumMg.map(number) ?? "", f.photoHash ?? "",
                    f.photoHash.flatMap { paths[$0] } ?? "",
                ])
            }
        }
        return out
    }

    /// `118`, `0.93`, `12.5`: integers without a decimal point, others as Swift prints them.
    static func number(_ v: Double) -> String {
        if v.isFinite, v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
        return String(v)
    }

    /// `CSV.line` (with its guard: a meal titled "=1+1" must not run in a spreadsheet) and the line end.
    static func line(_ fields: [String]) -> String { CSV.line(fields) + "\n" }
}
