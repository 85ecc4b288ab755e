import FoodCore
public import Foundation
import GRDB

/// Tables and their migrations. Times are integer milliseconds since 1970 (UTC), so every value survives a
/// store → export → import → export round trip bit for bit.
enum Schema {
    /// Brings `writer` up to date, where other processes may be opening the same new file at the same moment (two
    /// batches started together). GRDB's migrator reads which migrations are applied before it takes the write lock,
    /// so two openers can both set out to run the same migration, and the later one then fails ("table meals already
    /// exists"). A failure after which more migrations are applied than before is that race, lost to another opener
    /// that did the work: read again and go on. A failure that changed nothing is a real error.
    static func migrate(_ writer: any DatabaseWriter) throws {
        let migrator = Self.migrator
        while true {
            let before = try writer.read { try migrator.appliedIdentifiers($0) }
            do {
                return try migrator.migrate(writer)
            } catch {
                let after = try writer.read { try migrator.appliedIdentifiers($0) }
                guard after.isStrictSuperset(of: before) else { throw error }
            }
        }
    }

    static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1: meals, foods, photos, logs, goals, achievements, journal") { db in
            try db.execute(sql: """
                CREATE TABLE meals (
                  id TEXT PRIMARY KEY NOT NULL,
                  type TEXT NOT NULL CHECK (type IN ('breakfast', 'lunch', 'dinner', 'snack')),
                  time_ms INTEGER NOT NULL,
                  utc_offset_s INTEGER,
                  title TEXT NOT NULL,
                  tags TEXT NOT NULL,
                  analysis TEXT,
                  created_ms INTEGER NOT NULL,
                  updated_ms INTEGER NOT NULL
                );
                CREATE INDEX meals_by_time ON meals(time_ms);
                CREATE TABLE foods (
                  meal_id TEXT NOT NULL REFERENCES meals(id) ON DELETE CASCADE,
                  position INTEGER NOT NULL,
                  label TEXT NOT NULL, name TEXT NOT NULL, name_zh TEXT NOT NULL, emoji TEXT NOT NULL,
                  confidence REAL NOT NULL,
                  box_x REAL, box_y REAL, box_w REAL, box_h REAL,
                  grams REAL NOT NULL CHECK (grams >= 0),
                  grams_source TEXT NOT NULL, source TEXT NOT NULL, food_id TEXT, provenance TEXT,
                  per100_kcal REAL, per100_protein_g REAL, per100_carbs_g REAL, per100_fat_g REAL, per100_fiber_g REAL,
                  kcal REAL NOT NULL, protein_g REAL NOT NULL, carbs_g REAL NOT NULL, fat_g REAL NOT NULL,
                  fiber_g REAL NOT NULL,
                  photo_hash TEXT,
                  PRIMARY KEY (meal_id, position)
                );
                CREATE TABLE photos (
                  hash TEXT PRIMARY KEY NOT NULL,
                  meal_id TEXT NOT NULL REFERENCES meals(id) ON DELETE CASCADE,
                  path TEXT NOT NULL,
                  taken_ms INTEGER NOT NULL,
                  time_source TEXT NOT NULL
                );
                CREATE INDEX photos_by_meal ON photos(meal_id);
                CREATE INDEX photos_by_time ON photos(taken_ms);
                CREATE TABLE water (id TEXT PRIMARY KEY NOT NULL, time_ms INTEGER NOT NULL, ml REAL NOT NULL CHECK (ml > 0));
                CREATE INDEX water_by_time ON water(time_ms);
                CREATE TABLE weight (id TEXT PRIMARY KEY NOT NULL, time_ms INTEGER NOT NULL, kg REAL NOT NULL CHECK (kg > 0));
                CREATE INDEX weight_by_time ON weight(time_ms);
                CREATE TABLE goals (
                  id INTEGER PRIMARY KEY CHECK (id = 1),
                  daily_kcal REAL, protein_g REAL, carbs_g REAL, fat_g REAL, water_ml REAL, target_weight_kg REAL
                );
                CREATE TABLE achievements (id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, unlocked_ms INTEGER NOT NULL);
                CREATE TABLE journal (
                  hash TEXT NOT NULL,
                  settings TEXT NOT NULL,
                  path TEXT NOT NULL,
                  result BLOB NOT NULL,
                  meal_id TEXT REFERENCES meals(id) ON DELETE SET NULL,
                  recorded_ms INTEGER NOT NULL,
                  PRIMARY KEY (hash, settings)
                );
                CREATE INDEX journal_by_meal ON journal(meal_id);
                CREATE TABLE settings (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                """)
        }
        // A meal the user deleted stays deleted: its photos' hashes are remembered so that the next
        // `analyze --log` of the same folder does not bring it back (`--force` does, and forgets the deletion).
        m.registerMigration("v2: deleted photos") { db in
            try db.execute(sql: """
                CREATE TABLE deleted_photos (hash TEXT PRIMARY KEY NOT NULL, deleted_ms INTEGER NOT NULL);
                """)
        }
        // Sync: every change of a meal, water or weight log lands in `changes` (one row per entry, its last change,
        // numbered in commit order). On a client it is the queue `sync` pushes from; on a server it is the feed clients
        // pull from, deletions kept as tombstones. Changes a client pulls are applied with `sync_state.applying` set,
        // so they are not queued back. Existing entries are queued once, so the first sync pushes the whole diary.
        m.registerMigration("v3: sync change log") { db in
            try db.execute(sql: """
                ALTER TABLE water ADD COLUMN updated_ms INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE weight ADD COLUMN updated_ms INTEGER NOT NULL DEFAULT 0;
                CREATE TABLE changes (
                  seq INTEGER PRIMARY KEY AUTOINCREMENT,
                  kind TEXT NOT NULL CHECK (kind IN ('meal', 'water', 'weight')),
                  entity_id TEXT NOT NULL,
                  op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
                  changed_ms INTEGER NOT NULL,
                  UNIQUE (kind, entity_id)
                );
                CREATE TABLE sync_state (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
                INSERT INTO changes (kind, entity_id, op, changed_ms) SELECT 'meal', id, 'upsert', updated_ms FROM meals ORDER BY time_ms, id;
                INSERT INTO changes (kind, entity_id, op, changed_ms) SELECT 'water', id, 'upsert', updated_ms FROM water ORDER BY time_ms, id;
                INSERT INTO changes (kind, entity_id, op, changed_ms) SELECT 'weight', id, 'upsert', updated_ms FROM weight ORDER BY time_ms, id;
                """)
            try createChangeTriggers(db)
        }
        // Goals sync too: one entry per diary (id "goals"), which changes but is never deleted. `changes` is made
        // again for its kind check (SQLite cannot alter a check), its triggers with it; goals set before this
        // version are queued once, stamped now, so that of two devices' old goals the later-upgraded one wins.
        m.registerMigration("v4: goals in the change log") { db in
            for (table, _) in syncedTables {
                try db.execute(sql: "DROP TRIGGER \(table)_inserted; DROP TRIGGER \(table)_updated; DROP TRIGGER \(table)_deleted")
            }
            // AUTOINCREMENT numbers after the highest seq ever used; the copy must go on from there, or a number a
            // client's cursor has passed could be used again.
            let used = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'changes'") ?? 0
            try db.execute(sql: """
                ALTER TABLE goals ADD COLUMN updated_ms INTEGER NOT NULL DEFAULT 0;
                UPDATE goals SET updated_ms = \(sqlNowMs);
                CREATE TABLE changes_v4 (
                  seq INTEGER PRIMARY KEY AUTOINCREMENT,
                  kind TEXT NOT NULL CHECK (kind IN ('meal', 'water', 'weight', 'goals')),
                  entity_id TEXT NOT NULL,
                  op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
                  changed_ms INTEGER NOT NULL,
                  UNIQUE (kind, entity_id)
                );
                INSERT INTO changes_v4 (seq, kind, entity_id, op, changed_ms) SELECT seq, kind, entity_id, op, changed_ms FROM changes;
                DROP TABLE changes;
                ALTER TABLE changes_v4 RENAME TO changes;
                """)
            try db.execute(sql: "DELETE FROM sqlite_sequence WHERE name = 'changes'")
            try db.execute(sql: "INSERT INTO sqlite_sequence (name, seq) VALUES ('changes', max(?, COALESCE((SELECT MAX(seq) FROM changes), 0)))",
                           arguments: [used])
            try db.execute(sql: "INSERT INTO changes (kind, entity_id, op, changed_ms) SELECT 'goals', 'goals', 'upsert', updated_ms FROM goals")
            try createChangeTriggers(db, goals: true)
        }
        m.registerMigration("v5: one food value (colour, table name, sugars, sodium)") { db in
            // Rows from before keep NULL: no colour (the default grey), no sugars or sodium known.
            try db.execute(sql: """
                ALTER TABLE foods ADD COLUMN color TEXT;
                ALTER TABLE foods ADD COLUMN food_name TEXT;
                ALTER TABLE foods ADD COLUMN per100_sugars_g REAL;
                ALTER TABLE foods ADD COLUMN per100_sodium_mg REAL;
                ALTER TABLE foods ADD COLUMN sugars_g REAL;
                ALTER TABLE foods ADD COLUMN sodium_mg REAL;
                """)
        }
        return m
    }

    /// SQL for now, in milliseconds since 1970.
    static let sqlNowMs = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"

    /// The tables of the synced entries that have ids of their own, and their kind in `changes`.
    static let syncedTables = [("meals", "meal"), ("water", "water"), ("weight", "weight")]

    /// The triggers that record every change of a synced entry in `changes`, except while a pulled change is applied.
    static func createChangeTriggers(_ db: Database, goals: Bool = false) throws {
        func record(_ kind: String, _ op: String, _ id: String, _ time: String) -> String { """
            WHEN NOT EXISTS (SELECT 1 FROM sync_state WHERE key = 'applying') BEGIN
              DELETE FROM changes WHERE kind = '\(kind)' AND entity_id = \(id);
              INSERT INTO changes (kind, entity_id, op, changed_ms) VALUES ('\(kind)', \(id), '\(op)', \(time));
            END;
            """ }
        for (table, kind) in syncedTables {
            try db.execute(sql: """
                CREATE TRIGGER \(table)_inserted AFTER INSERT ON \(table) \(record(kind, "upsert", "NEW.id", "NEW.updated_ms"))
                CREATE TRIGGER \(table)_updated AFTER UPDATE ON \(table) \(record(kind, "upsert", "NEW.id", "NEW.updated_ms"))
                CREATE TRIGGER \(table)_deleted AFTER DELETE ON \(table) \(record(kind, "delete", "OLD.id", sqlNowMs))
                """)
        }
        if goals {
            try db.execute(sql: """
                CREATE TRIGGER goals_inserted AFTER INSERT ON goals \(record("goals", "upsert", "'goals'", "NEW.updated_ms"))
                CREATE TRIGGER goals_updated AFTER UPDATE ON goals \(record("goals", "upsert", "'goals'", "NEW.updated_ms"))
                """)
        }
    }
}

/// Milliseconds since 1970 ↔ Date, and ISO 8601 text with milliseconds (UTC) for exports.
enum Time {
    static func ms(_ d: Date) -> Int64 {
        let v = (d.timeIntervalSince1970 * 1000).rounded()
        return v.isFinite ? Int64(max(min(v, 9e15), -9e15)) : 0
    }

    static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }

    /// `2026-11-22T08:15:00.000Z`.
    static func iso(_ d: Date) -> String {
        let ms = ms(d)
        let secs = ms.floorDiv(1000), milli = ms - secs * 1000
        let days = secs.floorDiv(86_400), rest = secs - days * 86_400
        let (y, m, dd) = CivilDate.fromDays(days)
        return String(format: "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%03lldZ", y, m, dd, rest / 3600, rest % 3600 / 60,
                      rest % 60, milli)
    }

    /// Parses what `iso` writes (also without milliseconds, and with a `+hh:mm` offset).
    static func parseISO(_ s: String) -> Date? {
        let b = Array(s.utf8)
        func num(_ at: Int, _ n: Int) -> Int64? {
            guard at + n <= b.count else { return nil }
            var v: Int64 = 0
            for c in b[at..<(at + n)] { guard c >= 48, c <= 57 else { return nil }; v = v * 10 + Int64(c - 48) }
            return v
        }
        guard b.count >= 20, b[4] == 45, b[7] == 45, b[10] == 84, b[13] == 58, b[16] == 58,
              let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2), let h = num(11, 2), let mi = num(14, 2),
              let se = num(17, 2), (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, se < 61 else { return nil }
        var i = 19
        var milli: Int64 = 0
        if i < b.count, b[i] == 46 {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if digits < 3 { milli = milli * 10 + Int64(b[i] - 48) }
                digits += 1; i += 1
            }
            guard digits > 0 else { return nil }
            if digits < 3 { for _ in digits..<3 { milli *= 10 } }
        }
        var offset: Int64 = 0
        if i < b.count, b[i] == 90 { i += 1 } else if i + 6 == b.count, b[i] == 43 || b[i] == 45, b[i + 3] == 58,
                  let oh = num(i + 1, 2), let om = num(i + 4, 2) {
            offset = (oh * 3600 + om * 60) * (b[i] == 45 ? -1 : 1)
            i += 6
        } else { return nil }
        guard i == b.count else { return nil }
        let secs = CivilDate.days(year: y, month: mo, day: d) * 86_400 + h * 3600 + mi * 60 + se - offset
        return date(secs * 1000 + milli)
    }
}

extension Int64 {
    func floorDiv(_ d: Int64) -> Int64 { CivilDate.floorDiv(self, d) }
}

/// A calendar day in some time zone (`2026-11-22`).
public struct LocalDay: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    public init(year: Int, month: Int, day: Int) { self.year = year; self.month = month; self.day = day }

    public init(_ date: Date, timeZone: TimeZone) {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = timeZone
        let d = c.dateComponents([.year, .month, .day], from: date)
        self.init(year: d.year ?? 1970, month: d.month ?? 1, day: d.day ?? 1)
    }

    /// Parses `2026-11-22`.
    public init?(_ text: String) {
        let p = text.split(separator: "-")
        guard p.count == 3, p[0].count == 4, let y = Int(p[0]), let m = Int(p[1]), let d = Int(p[2]),
              (1...12).contains(m), (1...31).contains(d) else { return nil }
        let back = CivilDate.fromDays(CivilDate.days(year: Int64(y), month: Int64(m), day: Int64(d)))
        guard back == (Int64(y), Int64(m), Int64(d)) else { return nil }
        self.init(year: y, month: m, day: d)
    }

    /// Days since 1970-01-01 (for day arithmetic without a time zone).
    public var dayNumber: Int { Int(CivilDate.days(year: Int64(year), month: Int64(month), day: Int64(day))) }

    public init(dayNumber: Int) {
        let (y, m, d) = CivilDate.fromDays(Int64(dayNumber))
        self.init(year: Int(y), month: Int(m), day: Int(d))
    }

    public func adding(days n: Int) -> LocalDay { LocalDay(dayNumber: dayNumber + n) }

    /// Monday = 0 … Sunday = 6.
    public var weekdayFromMonday: Int { ((dayNumber + 3) % 7 + 7) % 7 }

    /// Local midnight that starts this day in `timeZone`.
    public func start(in timeZone: TimeZone) -> Date {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = timeZone
        return c.date(from: DateComponents(year: year, month: month, day: day)) ?? Time.date(Int64(dayNumber) * 86_400_000)
    }

    public var description: String { String(format: "%04d-%02d-%02d", year, month, day) }

    public static func < (a: LocalDay, b: LocalDay) -> Bool { (a.year, a.month, a.day) < (b.year, b.month, b.day) }

    public init(from decoder: any Decoder) throws {
        let s = try decoder.singleValueContainer().decode(String.self)
        guard let d = LocalDay(s) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a YYYY-MM-DD day: \(s)"))
        }
        self = d
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
