public import FoodCore
public import Foundation
import GRDB

/// The meal diary on disk: one SQLite file (WAL) holding meals, their foods and photos, water and weight logs,
/// goals, achievements and the batch journal. Every write is one transaction, so a process killed at any
/// instant leaves the file as it was before or after that write, never between.
public final class MealStore: Sendable {
    public let path: String
    /// The zone that decides local days for achievements and stats defaults.
    public let timeZone: TimeZone
    let pool: any DatabaseWriter
    let now: @Sendable () -> Date
    /// Opened for viewing only: every write fails with `MealStoreError.readOnly`.
    public let isReadOnly: Bool
    /// The temporary folder of a read-only snapshot copy, removed with the store.
    private let snapshotFolder: String?

    deinit { if let snapshotFolder { try? FileManager.default.removeItem(atPath: snapshotFolder) } }

    /// Opens (creating the folders and the file when needed) and migrates the store at `path`. An existing store the
    /// process cannot write (or `readOnly`) is opened for viewing only, without migrating; when SQLite cannot even
    /// open it in place (a read-only folder without the WAL's index file), a snapshot copy is opened instead.
    public init(path: String, now: @escaping @Sendable () -> Date = Date.init, timeZone: TimeZone = .current,
                readOnly: Bool = false) throws {
        self.path = path
        self.now = now
        self.timeZone = timeZone
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let exists = FileManager.default.fileExists(atPath: path)
        if readOnly || (exists && (access(path, W_OK) != 0 || access(folder, W_OK) != 0)) {
            guard exists else { throw MealStoreError.cannotOpen(path: path, reason: "no such file (nothing to view read-only)") }
            isReadOnly = true
            (pool, snapshotFolder) = try Self.openReadOnly(path: path)
            return
        }
        isReadOnly = false
        snapshotFolder = nil
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw MealStoreError.cannotOpen(path: path, reason: "cannot create folder \(folder): \(error.localizedDescription)")
        }
        var config = Configuration()
        config.foreignKeysEnabled = true
        // Another process (a second batch, the CLI while a batch runs) may hold the write lock for a moment.
        config.busyMode = .timeout(10)
        config.prepareDatabase { db in
            // WAL + NORMAL: a killed process loses nothing committed; only a power cut can lose the last commits.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        do {
            let writable = try Self.openPool(path: path, configuration: config)
            try Schema.migrate(writable)
            pool = writable
        } catch let error as DatabaseError {
            throw MealStoreError.cannotOpen(path: path, reason: error.message ?? error.description)
        } catch {
            throw MealStoreError.cannotOpen(path: path, reason: "\(error)")
        }
    }

    /// The first connection to a new file switches it to WAL, which needs the file to itself. Two processes opening
    /// the same new store together (two batches started at once) can each hold a read lock while asking for that, and
    /// SQLite answers one of them "database is locked" at once rather than let both wait forever. It is a moment's
    /// contention, so the loser tries again, within the same 10 s a busy write waits.
    private static func openPool(path: String, configuration: Configuration) throws -> DatabasePool {
        let deadline = Date().addingTimeInterval(10)
        while true {
            do {
                return try DatabasePool(path: path, configuration: configuration)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && Date() < deadline {
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
    }

    private static func openReadOnly(path: String) throws -> (any DatabaseWriter, String?) {
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(10)
        // Opening is lazy: one read proves the file can be read where it is.
        func open(_ file: String) throws -> DatabaseQueue {
            let queue = try DatabaseQueue(path: file, configuration: config)
            _ = try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM meals") }
            return queue
        }
        do {
            return (try open(path), nil)
        } catch {
            // SQLite opens a WAL database read-only only where it can find or create its -shm file.
            let copy = FileManager.default.temporaryDirectory.appendingPathComponent("foodmoment-readonly-\(UUID().uuidString)").path
            do {
                try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
                for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
                    try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + "/meals.sqlite" + suffix)
                }
                return (try open(copy + "/meals.sqlite"), copy)
            } catch let e as DatabaseError {
                throw MealStoreError.cannotOpen(path: path, reason: "read-only: " + (e.message ?? e.description))
            } catch {
                throw MealStoreError.cannotOpen(path: path, reason: "read-only: \(error)")
            }
        }
    }

    /// `dataDirectory/meals.sqlite`.
    public static func defaultPath(dataDirectory: String) -> String {
        dataDirectory + "/meals.sqlite"
    }

    // MARK: - Transactions with errors that name the operation

    func write<T>(_ operation: String, _ body: (Database) throws -> T) throws -> T {
        if isReadOnly { throw MealStoreError.readOnly(path: path, operation: operation) }
        do { return try pool.write(body) } catch let e as DatabaseError {
            throw MealStoreError.database(operation: operation, message: e.message ?? e.description)
        }
    }

    func read<T>(_ operation: String, _ body: (Database) throws -> T) throws -> T {
        do { return try pool.read(body) } catch let e as DatabaseError {
            throw MealStoreError.database(operation: operation, message: e.message ?? e.description)
        }
    }

    var nowMs: Int64 { Time.ms(now()) }
}

/// The batch journal: what was already analysed, so a resumed run skips it.
public struct JournalEntry: Sendable, Equatable {
    /// SHA-256 hex of the photo's bytes.
    public var hash: String
    public var path: String
    /// The analysis settings key (same key = same result expected).
    public var settings: String
    /// The stored result document (the batch's own encoding).
    public var result: Data
    /// The meal the photo was logged into, when it was logged (nil after that meal was deleted).
    public var mealID: String?

    public init(hash: String, path: String, settings: String, result: Data, mealID: String?) {
        self.hash = hash; self.path = path; self.settings = settings; self.result = result; self.mealID = mealID
    }
}

extension MealStore {
    /// The stored batch result for this photo content hash, when it was analysed with the same settings key.
    public func journalEntry(hash: String, settings: String) throws -> JournalEntry? {
        try journalEntries(hashes: [hash], settings: settings)[hash]
    }

    /// All entries for these hashes in one query (the batch asks per chunk).
    public func journalEntries(hashes: [String], settings: String) throws -> [String: JournalEntry] {
        guard !hashes.isEmpty else { return [:] }
        return try read("read the batch journal") { db in
            var out: [String: JournalEntry] = [:]
            // SQLite's default limit is 32766 host parameters; stay well below it.
            for chunk in stride(from: 0, to: hashes.count, by: 500).map({ Array(hashes[$0..<min($0 + 500, hashes.count)]) }) {
                let marks = Array(repeating: "?", count: chunk.count).joined(separator: ",")
                let args = StatementArguments([settings] + chunk)
                for row in try Row.fetchAll(db, sql: """
                    SELECT hash, path, settings, result, meal_id FROM journal WHERE settings = ? AND hash IN (\(marks))
                    """, arguments: args) {
                    let e = JournalEntry(hash: row["hash"], path: row["path"], settings: row["settings"],
                                         result: row["result"], mealID: row["meal_id"])
                    out[e.hash] = e
                }
            }
            return out
        }
    }

    /// ONE transaction: upserts the journal row; when `meal` is non-nil also merges it into the diary (type from
    /// the policy's windows and the photo time; same type within `gap` of an existing meal's photos on the same
    /// local day → merged into that meal; the same photo hash already logged → `.duplicate`, or `.replaced`
    /// when `replace` is true: that photo's foods are replaced by the new ones; title and tags recomputed; a photo
    /// whose meal the user deleted → `.deleted`, unless `replace` is true, which logs it and forgets the deletion).
    /// Photos merge by time only when their time can be trusted (`MealPhoto.timeSource` not `file_time`) and the
    /// policy allows merging; a photo with no foods (not recognised) is always a meal of its own.
    /// A SIGKILL at any instant leaves either all of it or none of it.
    public func record(hash: String, path: String, settings: String, result: Data, meal: PhotoMeal?,
                       policy: MergePolicy, replace: Bool) throws -> LoggedMeal? {
        if let meal { try Validate.foods(meal.foods) }
        return try write("record \(path)") { db in
            let outcome = try meal.map { try log($0, policy: policy, replace: replace, db: db) }
            try db.cachedStatement(sql: """
                INSERT INTO journal (hash, settings, path, result, meal_id, recorded_ms) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (hash, settings) DO UPDATE SET path = excluded.path, result = excluded.result,
                  meal_id = COALESCE(excluded.meal_id, journal.meal_id), recorded_ms = excluded.recorded_ms
                """).execute(arguments: [hash, settings, path, result, outcome?.outcome == .deleted ? nil : outcome?.mealID, nowMs])
            return outcome
        }
    }

    /// Logs one photo's meal inside the caller's transaction.
    private func log(_ m: PhotoMeal, policy: MergePolicy, replace: Bool, db: Database) throws -> LoggedMeal {
        var photo = m.photo
        photo.takenAt = Time.date(Time.ms(photo.takenAt))
        let foods = m.foods.map { f -> MealFood in
            var f = f
            if f.photoHash == nil { f.photoHash = photo.hash }
            return f
        }
        let stamp = Time.date(nowMs)

        if try Bool.fetchOne(db, sql: "SELECT 1 FROM deleted_photos WHERE hash = ?", arguments: [photo.hash]) == true {
            guard replace else { return LoggedMeal(outcome: .deleted, mealID: "") }
            try db.execute(sql: "DELETE FROM deleted_photos WHERE hash = ?", arguments: [photo.hash])
        }
        if let existing = try String.fetchOne(db, sql: "SELECT meal_id FROM photos WHERE hash = ?", arguments: [photo.hash]) {
            guard replace else { return LoggedMeal(outcome: .duplicate, mealID: existing) }
            guard var rec = try Rows.meal(id: existing, db) else { throw MealStoreError.noSuchMeal(existing) }
            let before = rec
            rec.foods.removeAll { $0.photoHash == photo.hash }
            rec.foods += foods
            rec.photos = rec.photos.map { $0.hash == photo.hash ? photo : $0 }
            if rec.photos.count == 1, let a = m.analysis { rec.analysis = a }
            rec.updatedAt = stamp
            try Rows.save(Rows.derive(rec, from: before), db)
            return LoggedMeal(outcome: .replaced, mealID: existing)
        }

        let type = policy.windows.type(at: photo.takenAt, timeZone: policy.timeZone)
        let day = LocalDay(photo.takenAt, timeZone: policy.timeZone)
        let t = Time.ms(photo.takenAt), gap = Int64((policy.gap * 1000).rounded())
        var best: (id: String, distance: Int64)?
        let mergeable = policy.merge && photo.timeSource != .fileTime && !foods.isEmpty
        for row in try Row.fetchAll(db.cachedStatement(sql: """
            SELECT p.meal_id, p.taken_ms FROM photos p JOIN meals m ON m.id = p.meal_id
            WHERE m.type = ? AND p.taken_ms BETWEEN ? AND ? AND p.time_source != 'file_time'
              AND EXISTS (SELECT 1 FROM foods f WHERE f.meal_id = m.id)
            """), arguments: [type.rawValue, t - gap, t + gap]) {
            guard mergeable else { break }
            let id: String = row["meal_id"], taken: Int64 = row["taken_ms"]
            guard LocalDay(Time.date(taken), timeZone: policy.timeZone) == day else { continue }
            let d = abs(taken - t)
            if best == nil || d < best!.distance || (d == best!.distance && id < best!.id) { best = (id, d) }
        }
        if let best, var rec = try Rows.meal(id: best.id, db) {
            let before = rec
            rec.foods += foods
            rec.photos.append(photo)
            rec.photos.sort { ($0.takenAt, $0.hash) < ($1.takenAt, $1.hash) }
            rec.time = min(rec.time, photo.takenAt)
            if rec.utcOffsetSeconds == nil { rec.utcOffsetSeconds = m.utcOffsetSeconds }
            switch (rec.analysis, m.analysis) {
            case let (a?, b?) where a != b: rec.analysis = a + "\n\n" + b
            case let (nil, b): rec.analysis = b
            default: break
            }
            rec.updatedAt = stamp
            try Rows.save(Rows.derive(rec, from: before), db)
            return LoggedMeal(outcome: .merged, mealID: rec.id)
        }
        let rec = MealRecord(type: type, time: photo.takenAt, utcOffsetSeconds: m.utcOffsetSeconds, title: m.title ?? "",
                             foods: foods, photos: [photo], analysis: m.analysis, createdAt: stamp)
        try Rows.save(Rows.derive(rec, from: nil), db)
        return LoggedMeal(outcome: .created, mealID: rec.id)
    }

    /// Meals whose time is in `from ..< to`, by time ascending.
    public func meals(from: Date, to: Date) throws -> [MealRecord] {
        try read("list meals") { db in try Rows.meals(fromMs: Time.ms(from), toMs: Time.ms(to), db) }
    }

    /// Every meal, by time ascending.
    public func allMeals() throws -> [MealRecord] {
        try read("list meals") { db in try Rows.meals(fromMs: Int64.min, toMs: Int64.max, db) }
    }

    /// The meal with this id, or with this unique id prefix (at least 6 characters, any case). Nil when none
    /// matches; throws `ambiguousMealID` when several do.
    public func meal(id: String) throws -> MealRecord? {
        try read("read meal \(id)") { db in
            guard let full = try Rows.resolve(id, db) else { return nil }
            return try Rows.meal(id: full, db)
        }
    }

    /// The meal that holds the photo with this content hash, nil when none does.
    public func meal(photoHash: String) throws -> MealRecord? {
        try read("find photo \(photoHash.prefix(12))") { db in
            guard let id = try String.fetchOne(db, sql: "SELECT meal_id FROM photos WHERE hash = ?", arguments: [photoHash]) else { return nil }
            return try Rows.meal(id: id, db)
        }
    }

    public func mealCount() throws -> Int {
        try read("count meals") { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM meals") ?? 0 }
    }

    /// Number of photos logged into meals (each content hash once).
    public func photoCount() throws -> Int {
        try read("count photos") { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM photos") ?? 0 }
    }

    /// Number of journal rows (photos the batch has finished, logged or not).
    public func journalCount() throws -> Int {
        try read("count journal rows") { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM journal") ?? 0 }
    }

    /// SQLite's `PRAGMA integrity_check` and `foreign_key_check`: empty when the file is sound.
    public func integrityProblems() throws -> [String] {
        try read("check integrity") { db in
            var problems = try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
            for row in try Row.fetchAll(db, sql: "PRAGMA foreign_key_check") {
                problems.append("foreign key: table \(row[0] as String) rowid \(row[1] as Int64?) -> \(row[2] as String)")
            }
            return problems
        }
    }
}

enum Validate {
    static func foods(_ foods: [MealFood]) throws {
        for f in foods {
            guard f.grams.isFinite, f.grams >= 0 else {
                throw MealStoreError.invalidValue(field: "grams of \(f.name)", value: "\(f.grams)", expected: "a number ≥ 0")
            }
        }
    }
}
