import FoodCore
import Foundation
import GRDB

/// Reading and writing whole meal records inside a transaction the caller holds.
enum Rows {
    /// Water logs with `fromMs ≤ time < toMs`, by time.
    static func water(fromMs: Int64, toMs: Int64, _ db: Database) throws -> [WaterLog] {
        try Row.fetchAll(db, sql: "SELECT * FROM water WHERE time_ms >= ? AND time_ms < ? ORDER BY time_ms, id",
                         arguments: [fromMs, toMs])
            .map { WaterLog(id: $0["id"], time: Time.date($0["time_ms"]), milliliters: $0["ml"]) }
    }

    /// Weight logs with `fromMs ≤ time < toMs`, by time.
    static func weight(fromMs: Int64, toMs: Int64, _ db: Database) throws -> [WeightLog] {
        try Row.fetchAll(db, sql: "SELECT * FROM weight WHERE time_ms >= ? AND time_ms < ? ORDER BY time_ms, id",
                         arguments: [fromMs, toMs])
            .map { WeightLog(id: $0["id"], time: Time.date($0["time_ms"]), kilograms: $0["kg"]) }
    }

    /// Title and tags follow the foods. A title that is still the automatic one for the old foods follows
    /// the new foods; a title typed by hand stays.
    static func derive(_ rec: MealRecord, from before: MealRecord?) -> MealRecord {
        var rec = rec
        if rec.title.isEmpty {
            rec.title = MealRules.title(foods: rec.foods, type: rec.type)
        } else if let before, rec.title == before.title,
                  before.foods.isEmpty || before.title == MealRules.title(foods: before.foods, type: before.type) {
            // A title the rules wrote, or an unrecognised photo's placeholder, follows the foods.
            rec.title = MealRules.title(foods: rec.foods, type: rec.type)
        }
        rec.tags = MealRules.tags(totals: rec.totals)
        return rec
    }

    static func save(_ rec: MealRecord, _ db: Database) throws {
        let tags = String(decoding: try JSONEncoder().encode(rec.tags), as: UTF8.self)
        try db.cachedStatement(sql: """
            INSERT INTO meals (id, type, time_ms, utc_offset_s, title, tags, analysis, created_ms, updated_ms)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET type = excluded.type, time_ms = excluded.time_ms,
              utc_offset_s = excluded.utc_offset_s, title = excluded.title, tags = excluded.tags,
              analysis = excluded.analysis, created_ms = excluded.created_ms, updated_ms = excluded.updated_ms
            """).execute(arguments: [rec.id, rec.type.rawValue, Time.ms(rec.time), rec.utcOffsetSeconds, rec.title, tags,
                                     rec.analysis, Time.ms(rec.createdAt), Time.ms(rec.updatedAt)])
        try db.cachedStatement(sql: "DELETE FROM foods WHERE meal_id = ?").execute(arguments: [rec.id])
        let insertFood = try db.cachedStatement(sql: """
            INSERT INTO foods (meal_id, position, label, name, name_zh, emoji, confidence, box_x, box_y, box_w, box_h,
              grams, grams_source, source, food_id, provenance,
              per100_kcal, per100_protein_g, per100_carbs_g, per100_fat_g, per100_fiber_g,
              kcal, protein_g, carbs_g, fat_g, fiber_g, photo_hash,
              color, food_name, per100_sugars_g, per100_sodium_mg, sugars_g, sodium_mg)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for (i, f) in rec.foods.enumerated() {
            let values: [(any DatabaseValueConvertible)?] = [
                rec.id, i, f.label, f.name, f.nameZh, f.emoji, f.confidence, f.box?.x, f.box?.y, f.box?.w, f.box?.h,
                f.grams, f.gramsSource.rawValue, f.source.rawValue, f.foodId, f.provenance,
                f.per100g?.kcal, f.per100g?.proteinG, f.per100g?.carbsG, f.per100g?.fatG, f.per100g?.fiberG,
                f.nutrients.kcal, f.nutrients.proteinG, f.nutrients.carbsG, f.nutrients.fatG, f.nutrients.fiberG,
                f.photoHash,
                f.color, f.foodName, f.per100g?.sugarsG, f.per100g?.sodiumMg, f.nutrients.sugarsG, f.nutrients.sodiumMg,
            ]
            try insertFood.execute(arguments: StatementArguments(values))
        }
        try db.cachedStatement(sql: "DELETE FROM photos WHERE meal_id = ?").execute(arguments: [rec.id])
        let insertPhoto = try db.cachedStatement(sql: """
            INSERT INTO photos (hash, meal_id, path, taken_ms, time_source) VALUES (?, ?, ?, ?, ?)
            """)
        for p in rec.photos {
            try insertPhoto.execute(arguments: [p.hash, rec.id, p.path, Time.ms(p.takenAt), p.timeSource.rawValue])
        }
    }

    static func meal(id: String, _ db: Database) throws -> MealRecord? {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM meals WHERE id = ?"), arguments: [id]) else {
            return nil
        }
        var rec = try meal(row)
        rec.foods = try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM foods WHERE meal_id = ? ORDER BY position"),
                                     arguments: [id]).map(food)
        rec.photos = try Row.fetchAll(db.cachedStatement(sql: "SELECT * FROM photos WHERE meal_id = ? ORDER BY taken_ms, hash"),
                                      arguments: [id]).map(photo)
        return rec
    }

    /// Meals with `fromMs <= time_ms < toMs`, by time, with their foods and photos (three queries).
    static func meals(fromMs: Int64, toMs: Int64, _ db: Database) throws -> [MealRecord] {
        let args: StatementArguments = [fromMs, toMs]
        var recs = try Row.fetchAll(db, sql: "SELECT * FROM meals WHERE time_ms >= ? AND time_ms < ? ORDER BY time_ms, id",
                                    arguments: args).map(meal)
        guard !recs.isEmpty else { return [] }
        var index: [String: Int] = [:]
        for (i, r) in recs.enumerated() { index[r.id] = i }
        for row in try Row.fetchAll(db, sql: """
            SELECT f.* FROM foods f JOIN meals m ON m.id = f.meal_id WHERE m.time_ms >= ? AND m.time_ms < ?
            ORDER BY f.meal_id, f.position
            """, arguments: args) {
            if let i = index[row["meal_id"] as String] { recs[i].foods.append(food(row)) }
        }
        for row in try Row.fetchAll(db, sql: """
            SELECT p.* FROM photos p JOIN meals m ON m.id = p.meal_id WHERE m.time_ms >= ? AND m.time_ms < ?
            ORDER BY p.meal_id, p.taken_ms, p.hash
            """, arguments: args) {
            if let i = index[row["meal_id"] as String] { recs[i].photos.append(photo(row)) }
        }
        return recs
    }

    /// A full id, or the one id that starts with `prefix` (≥ 6 characters, any case).
    /// The full id of the row of `table` (`meals`, `water`, `weight`: our constants, never user text) with this id or
    /// unique id prefix of at least 6 characters, any case.
    static func resolve(_ prefix: String, table: String = "meals", _ db: Database) throws -> String? {
        if let id = try String.fetchOne(db, sql: "SELECT id FROM \(table) WHERE id = ?", arguments: [prefix]) { return id }
        guard prefix.unicodeScalars.count >= 6 else { return nil }
        let ids = try String.fetchAll(db, sql: "SELECT id FROM \(table) WHERE substr(upper(id), 1, ?) = upper(?) LIMIT 10",
                                      arguments: [prefix.unicodeScalars.count, prefix])
        if ids.count > 1 { throw MealStoreError.ambiguousMealID(prefix: prefix, matches: ids.count) }
        return ids.first
    }

    private static func meal(_ row: Row) throws -> MealRecord {
        let tagsText: String = row["tags"]
        let tags = (try? JSONDecoder().decode([String].self, from: Data(tagsText.utf8))) ?? []
        let typeText: String = row["type"]
        return MealRecord(id: row["id"], type: MealType(rawValue: typeText) ?? .snack, time: Time.date(row["time_ms"]),
                          utcOffsetSeconds: row["utc_offset_s"], title: row["title"], foods: [], photos: [], tags: tags,
                          analysis: row["analysis"], createdAt: Time.date(row["created_ms"]),
                          updatedAt: Time.date(row["updated_ms"]))
    }

    private static func food(_ row: Row) -> MealFood {
        var box: NormalizedBox?
        if let x: Double = row["box_x"], let y: Double = row["box_y"], let w: Double = row["box_w"], let h: Double = row["box_h"] {
            box = NormalizedBox(x: x, y: y, w: w, h: h)
        }
        var per100: Macros?
        if let k: Double = row["per100_kcal"] {
            per100 = Macros(kcal: k, proteinG: row["per100_protein_g"] ?? 0, carbsG: row["per100_carbs_g"] ?? 0,
                            fatG: row["per100_fat_g"] ?? 0, fiberG: row["per100_fiber_g"] ?? 0,
                            sugarsG: row["per100_sugars_g"], sodiumMg: row["per100_sodium_mg"])
        }
        var f = MealFood(label: row["label"], name: row["name"], nameZh: row["name_zh"], emoji: row["emoji"],
                         color: row["color"] ?? MealFood.defaultColor, confidence: row["confidence"], box: box, grams: row["grams"], gramsSource: gramsSourceColumn(row["grams_source"]),
                         source: foodSourceColumn(row["source"]), foodId: row["food_id"], foodName: row["food_name"],
                         provenance: row["provenance"], per100g: per100,
                         photoHash: row["photo_hash"])
        // Stored nutrients are the truth (an import may carry values without per-100 g numbers).
        f.nutrients = Macros(kcal: row["kcal"], proteinG: row["protein_g"], carbsG: row["carbs_g"], fatG: row["fat_g"],
                             fiberG: row["fiber_g"], sugarsG: row["sugars_g"], sodiumMg: row["sodium_mg"])
        return f
    }

    private static func photo(_ row: Row) -> MealPhoto {
        MealPhoto(hash: row["hash"], path: row["path"], takenAt: Time.date(row["taken_ms"]), timeSource: TimeSource(rawValue: row["time_source"]) ?? .fileTime)
    }
}

/// Provenance columns written by a newer version may hold a value this one does not know: the food and its numbers are
/// kept, only the provenance reads as the user's (the one source that never claims the model's authority).
func gramsSourceColumn(_ raw: String) -> GramsSource { GramsSource(rawValue: raw) ?? .user }
func foodSourceColumn(_ raw: String) -> FoodOrigin { FoodOrigin(rawValue: raw) ?? .user }
