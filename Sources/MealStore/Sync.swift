public import FoodCore
public import Foundation
import GRDB

/// The diary entries that sync between a device and a server. `goals` is one entry per diary, its id always
/// `SyncChange.goalsID`; it is never deleted (clearing the goals is an upsert of empty goals).
public enum SyncKind: String, Sendable, Codable, CaseIterable {
    case meal, water, weight, goals

    /// What a server's feed sends a client that does not name the kinds it takes: the kinds every client version
    /// decodes. A client that takes more asks for them (`GET /api/v1/sync/changes?kinds=…`).
    public static let feedDefault: Set<SyncKind> = [.meal, .water, .weight]
}

public enum SyncOperation: String, Sendable, Codable {
    case upsert, delete
}

/// One entry's latest change, as a client pushes it and a server's feed returns it: the whole entry for an upsert,
/// only its kind and id for a deletion.
public struct SyncChange: Sendable, Codable, Equatable {
    public var kind: SyncKind
    public var id: String
    public var op: SyncOperation
    /// When the entry last changed: a meal's `updated_at`, a log's last edit, a deletion's time. Conflicts compare it.
    public var changedAt: Date
    public var meal: MealRecord?
    public var water: WaterLog?
    public var weight: WeightLog?
    public var goals: Goals?
    /// The change's place in the log it was read from (the client's queue when pushed, the server's feed when pulled).
    public var seq: Int64

    /// The id of the one `goals` entry of a diary.
    public static let goalsID = "goals"

    public init(kind: SyncKind, id: String, op: SyncOperation, changedAt: Date, meal: MealRecord? = nil, water: WaterLog? = nil,
                weight: WeightLog? = nil, goals: Goals? = nil, seq: Int64 = 0) {
        self.kind = kind; self.id = id; self.op = op; self.changedAt = changedAt
        self.meal = meal; self.water = water; self.weight = weight; self.goals = goals; self.seq = seq
    }

    /// Whether the change carries an entry (an upsert read from a log always does).
    var hasEntry: Bool { meal != nil || water != nil || weight != nil || goals != nil }

    enum CodingKeys: String, CodingKey {
        case kind, id, op, meal, water, weight, goals, seq
        case changedAt = "changed_at"
    }
}

/// What applying a change did. Only `applied` changed anything.
public enum SyncOutcome: String, Sendable, Codable {
    case applied
    /// The entry already had this change (a retry, or a client's own change coming back in its pull).
    case unchanged
    /// Conflict: the entry here changed later than the incoming change (last writer by `changed_at` wins); kept.
    case keptNewer = "kept_newer"
    /// Conflict: the entry was deleted here; deletions win over edits, so it stays deleted.
    case deleted
}

/// The server's answer to one pushed change.
public struct SyncPushResult: Sendable, Codable, Equatable {
    public var kind: SyncKind
    public var id: String
    public var outcome: SyncOutcome

    public init(kind: SyncKind, id: String, outcome: SyncOutcome) { self.kind = kind; self.id = id; self.outcome = outcome }
}

/// One page of a change log.
public struct SyncPage: Sendable, Codable, Equatable {
    public var changes: [SyncChange]
    /// The `since` that continues after this page (the last change's `seq`, or the one asked for on an empty page).
    /// A client stores it with the page's changes.
    public var next: Int64
    public var more: Bool

    public init(changes: [SyncChange], next: Int64, more: Bool) { self.changes = changes; self.next = next; self.more = more }
}

extension DiaryRules {
    /// The sync conflict rule, the same on both sides: a deletion always applies (`unchanged` when the entry is not
    /// here) and an edit never brings a deleted entry back; otherwise the later `changed_at` wins, and an equal one
    /// means the change is already there.
    /// `current` is the entry's last change time here (nil when absent), `deleted` whether it was deleted here.
    public static func resolve(_ change: SyncChange, currentMs: Int64?, deleted: Bool) -> SyncOutcome {
        switch change.op {
        case .delete:
            return currentMs == nil ? .unchanged : .applied
        case .upsert:
            if deleted { return .deleted }
            guard let currentMs else { return .applied }
            let incoming = Time.ms(change.changedAt)
            return currentMs > incoming ? .keptNewer : currentMs == incoming ? .unchanged : .applied
        }
    }

    /// A change as received from the other side: its entry present, of its kind and id, and its values in the diary's
    /// ranges. `MealStoreError.invalidValue` names what is wrong.
    public static func check(_ c: SyncChange) throws {
        func bad(_ field: String, _ value: String, _ expected: String) -> MealStoreError {
            .invalidValue(field: field, value: value, expected: expected)
        }
        guard !c.id.isEmpty, c.id.utf8.count <= 64, c.id.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f }) else {
            throw bad("id", c.id, "1–64 visible ASCII characters (a UUID)")
        }
        let t = c.changedAt.timeIntervalSince1970
        guard t.isFinite, abs(t) < 1e12 else { throw bad("changed_at", "\(t)", "a time") }
        let present = [c.meal != nil, c.water != nil, c.weight != nil, c.goals != nil].filter { $0 }.count
        if c.kind == .goals {
            guard c.id == SyncChange.goalsID else { throw bad("id", c.id, "\(SyncChange.goalsID) (a diary has one set of goals)") }
            guard c.op == .upsert else { throw bad("op", "delete", "upsert: goals are cleared by sending empty goals, not deleted") }
        }
        if c.op == .delete {
            guard present == 0 else { throw bad("op", "delete", "no meal, water, weight or goals with a deletion") }
            return
        }
        switch c.kind {
        case .meal:
            guard let m = c.meal, present == 1 else { throw bad("meal", "missing", "the whole meal with kind meal") }
            guard m.id == c.id else { throw bad("meal.id", m.id, "the change's id \(c.id)") }
            guard Time.ms(m.updatedAt) == Time.ms(c.changedAt) else {
                throw bad("changed_at", Time.iso(c.changedAt), "the meal's updated_at \(Time.iso(m.updatedAt))")
            }
            try Validate.foods(m.foods)
            guard Set(m.photos.map(\.hash)).count == m.photos.count else {
                throw bad("meal.photos", "\(m.photos.count) photos", "each photo (hash) once")
            }
            for f in m.foods {
                let n = f.nutrients
                guard ([n.kcal, n.proteinG, n.carbsG, n.fatG, n.fiberG] + [n.sugarsG, n.sodiumMg].compactMap { $0 }).allSatisfy({ $0.isFinite && $0 >= 0 && $0 < 1e6 }),
                      f.confidence.isFinite, f.grams < 1e6 else {
                    throw bad("nutrients of \(f.name)", "\(n.kcal) kcal", "finite numbers ≥ 0")
                }
            }
            for d in [m.time, m.createdAt] + m.photos.map(\.takenAt) where !(d.timeIntervalSince1970.isFinite && abs(d.timeIntervalSince1970) < 1e12) {
                throw bad("meal time", "\(d.timeIntervalSince1970)", "a time")
            }
        case .water:
            guard let w = c.water, present == 1, w.id == c.id else { throw bad("water", "missing", "the water log with kind water and the change's id") }
            _ = try DiaryRules.water(milliliters: w.milliliters, at: w.time)
            guard abs(w.time.timeIntervalSince1970) < 1e12 else { throw bad("water time", "\(w.time.timeIntervalSince1970)", "a time") }
        case .weight:
            guard let w = c.weight, present == 1, w.id == c.id else { throw bad("weight", "missing", "the weight log with kind weight and the change's id") }
            _ = try DiaryRules.weight(kilograms: w.kilograms, at: w.time)
            guard abs(w.time.timeIntervalSince1970) < 1e12 else { throw bad("weight time", "\(w.time.timeIntervalSince1970)", "a time") }
        case .goals:
            guard let g = c.goals, present == 1 else { throw bad("goals", "missing", "the goals (fields null when not set) with kind goals") }
            try DiaryRules.check(g)
        }
    }
}

extension MealStore {
    /// The change log after `seq`, oldest first, each entry as it is now: on a client, the changes not yet pushed; on a
    /// server, the feed a client pulls (only the `kinds` that client takes; the others are passed over for good).
    public func changes(after seq: Int64, limit: Int, kinds: Set<SyncKind> = Set(SyncKind.allCases)) throws -> SyncPage {
        let names = kinds.map { "'\($0.rawValue)'" }.sorted().joined(separator: ", ")   // the enum's own names
        return try read("read the change log") { db in
            let rows = try Row.fetchAll(db, sql: """
                SELECT seq, kind, entity_id, op, changed_ms FROM changes WHERE seq > ? AND kind IN (\(names.isEmpty ? "''" : names))
                ORDER BY seq LIMIT ?
                """, arguments: [seq, max(1, limit) + 1])
            var out: [SyncChange] = []
            var last = seq
            for row in rows.prefix(max(1, limit)) {
                last = row["seq"]
                guard let kind = SyncKind(rawValue: row["kind"]) else { continue }
                let id: String = row["entity_id"]
                var c = SyncChange(kind: kind, id: id, op: row["op"] == "delete" ? .delete : .upsert,
                                   changedAt: Time.date(row["changed_ms"]), seq: row["seq"])
                if c.op == .upsert {
                    switch kind {
                    case .meal: c.meal = try Rows.meal(id: id, db)
                    case .water: c.water = try Self.logRow(id, table: "water", column: "ml", db).map {
                        WaterLog(id: $0.id, time: $0.time, milliliters: $0.value) }
                    case .weight: c.weight = try Self.logRow(id, table: "weight", column: "kg", db).map {
                        WeightLog(id: $0.id, time: $0.time, kilograms: $0.value) }
                    case .goals:
                        if let row = try Self.goalsRow(db) { c.goals = row.goals; c.changedAt = Time.date(row.updatedMs) }
                    }
                    // Each write of the entry renumbers its row, so an upsert's entry exists; be safe all the same.
                    guard c.hasEntry else { continue }
                    if let m = c.meal { c.changedAt = m.updatedAt }
                }
                out.append(c)
            }
            return SyncPage(changes: out, next: last, more: rows.count > max(1, limit))
        }
    }

    /// Applies a change from the other side under the conflict rule (`DiaryRules.resolve`). On a server it enters the
    /// feed for the user's other devices; on a client (`fromServer`) it is not queued to be pushed back.
    public func apply(_ change: SyncChange, fromServer: Bool = false) throws -> SyncOutcome {
        try DiaryRules.check(change)
        return try write("apply a synced \(change.kind.rawValue) \(change.id)") { db in
            try Self.apply(change, fromServer: fromServer, db)
        }
    }

    /// A page pulled from the server and the cursor after it, in one transaction: a killed pull resumes at the same
    /// page, and applying it again changes nothing.
    public func applyPulled(_ page: SyncPage) throws -> [SyncOutcome] {
        for c in page.changes { try DiaryRules.check(c) }
        return try write("apply pulled changes") { db in
            let out = try page.changes.map { try Self.apply($0, fromServer: true, db) }
            try Self.setSyncValue("pull_cursor", String(page.next), db)
            return out
        }
    }

    static func apply(_ c: SyncChange, fromServer: Bool, _ db: Database) throws -> SyncOutcome {
        let table = c.kind == .meal ? "meals" : c.kind.rawValue
        let current = c.kind == .goals ? try goalsRow(db)?.updatedMs
            : try Int64.fetchOne(db, sql: "SELECT updated_ms FROM \(table) WHERE id = ?", arguments: [c.id])
        let lastOp = try String.fetchOne(db, sql: "SELECT op FROM changes WHERE kind = ? AND entity_id = ?", arguments: [c.kind.rawValue, c.id])
        let outcome = DiaryRules.resolve(c, currentMs: current, deleted: current == nil && lastOp == "delete")
        if c.op == .delete, !fromServer, current == nil, lastOp != "delete" {
            // A deletion of an entry this side never had still becomes a tombstone, so a late edit cannot revive it
            // (deleting an entry that is here leaves one through the trigger).
            try db.execute(sql: "DELETE FROM changes WHERE kind = ? AND entity_id = ?", arguments: [c.kind.rawValue, c.id])
            try db.execute(sql: "INSERT INTO changes (kind, entity_id, op, changed_ms) VALUES (?, ?, 'delete', ?)",
                           arguments: [c.kind.rawValue, c.id, Time.ms(c.changedAt)])
        }
        guard outcome == .applied else { return outcome }
        if fromServer { try db.execute(sql: "INSERT OR REPLACE INTO sync_state (key, value) VALUES ('applying', '1')") }
        switch (c.op, c.kind) {
        case (.delete, .meal):
            try db.execute(sql: """
                INSERT INTO deleted_photos (hash, deleted_ms) SELECT hash, ? FROM photos WHERE meal_id = ?
                ON CONFLICT (hash) DO UPDATE SET deleted_ms = excluded.deleted_ms
                """, arguments: [Time.ms(c.changedAt), c.id])
            try db.execute(sql: "DELETE FROM meals WHERE id = ?", arguments: [c.id])
        case (.delete, .goals):
            break   // refused by `check`
        case (.delete, _):
            try db.execute(sql: "DELETE FROM \(table) WHERE id = ?", arguments: [c.id])
        case (.upsert, .goals):
            guard let g = c.goals else { break }
            try setGoals(g, updatedMs: Time.ms(c.changedAt), db)
        case (.upsert, .meal):
            guard var m = c.meal else { break }
            // A photo already in another meal here stays there (a photo belongs to one meal); the foods come all the same.
            m.photos = try m.photos.filter {
                try String.fetchOne(db, sql: "SELECT meal_id FROM photos WHERE hash = ?", arguments: [$0.hash]).map { $0 == m.id } ?? true
            }
            try db.execute(sql: "DELETE FROM deleted_photos WHERE hash IN (SELECT value FROM json_each(?))",
                           arguments: [String(decoding: try JSONEncoder().encode(m.photos.map(\.hash)), as: UTF8.self)])
            try Rows.save(m, db)
        case (.upsert, .water), (.upsert, .weight):
            // The two log tables share their shape: id, time, one value.
            guard let (time, value, column) = c.water.map({ ($0.time, $0.milliliters, "ml") })
                ?? c.weight.map({ ($0.time, $0.kilograms, "kg") }) else { break }
            try db.execute(sql: """
                INSERT INTO \(table) (id, time_ms, \(column), updated_ms) VALUES (?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET time_ms = excluded.time_ms, \(column) = excluded.\(column), updated_ms = excluded.updated_ms
                """, arguments: [c.id, Time.ms(time), value, Time.ms(c.changedAt)])
        }
        if fromServer { try db.execute(sql: "DELETE FROM sync_state WHERE key = 'applying'") }
        return outcome
    }

    // MARK: - The client's sync state

    /// Where this diary's sync stands: the server it syncs with, the last change pushed, the server feed's cursor.
    public struct SyncState: Sendable, Equatable {
        public var server: String?
        /// This diary's name in its Idempotency-Keys (so two devices' queue positions never share a key).
        public var device: String?
        public var pushed: Int64
        public var pullCursor: Int64
        /// Changes waiting to be pushed.
        public var pending: Int
    }

    public func syncState() throws -> SyncState {
        try read("read the sync state") { db in
            let values = Dictionary(try Row.fetchAll(db, sql: "SELECT key, value FROM sync_state").map { ($0["key"] as String, $0["value"] as String) },
                                    uniquingKeysWith: { a, _ in a })
            let pushed = values["pushed"].flatMap { Int64($0) } ?? 0
            let pending = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM changes WHERE seq > ?", arguments: [pushed]) ?? 0
            return SyncState(server: values["server"], device: values["device"], pushed: pushed, pullCursor: values["pull_cursor"].flatMap { Int64($0) } ?? 0,
                             pending: pending)
        }
    }

    /// Binds the diary to `server` (`bind`, once the server has answered), or only checks that it is not bound to
    /// another: a diary syncs with one server, its queue and cursor are that server's. Throws `syncServerMismatch`.
    /// Returns this diary's device id, made on first use.
    @discardableResult
    public func bindSyncServer(_ server: String, bind: Bool = true) throws -> String {
        try write("bind the sync server") { db in
            if let bound = try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'server'") {
                guard bound == server else { throw MealStoreError.syncServerMismatch(bound: bound, asked: server) }
            } else if bind {
                try Self.setSyncValue("server", server, db)
            }
            if let device = try String.fetchOne(db, sql: "SELECT value FROM sync_state WHERE key = 'device'") { return device }
            let device = UUID().uuidString.lowercased()
            try Self.setSyncValue("device", device, db)
            return device
        }
    }

    /// Records that the change `seq` reached the server: the queue resumes after it.
    public func markPushed(_ seq: Int64) throws {
        try write("record a pushed change") { db in try Self.setSyncValue("pushed", String(seq), db) }
    }

    static func setSyncValue(_ key: String, _ value: String, _ db: Database) throws {
        try db.execute(sql: "INSERT INTO sync_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                       arguments: [key, value])
    }
}
