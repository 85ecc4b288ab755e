import FoodCore
import FoodMomentTestSupport
import Foundation
import GRDB
import MealStore
import Testing

/// Goals sync as one entry per diary (id `goals`): queued when set, the later goals win, never deleted; a diary made
/// before goals synced queues its goals once when it is opened.
@Suite("meal store: goals in the sync change log")
struct GoalsSyncTests {
    func store(_ path: String, _ clock: TestClock) throws -> MealStore {
        try MealStore(path: path, now: { clock.now }, timeZone: berlin)
    }

    @Test func goalsAreOneEntryAndTheLaterGoalsWin() throws {
        let dir = TestPaths.makeTempDirectory("goals-sync")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clock = TestClock(fixedNow)
        let server = try store(dir + "/server.sqlite", clock), device = try store(dir + "/device.sqlite", clock)
        #expect(try device.changes(after: 0, limit: 10).changes.isEmpty, "goals never set are not queued")

        try device.setGoals(Goals(dailyKcal: 2000))
        clock.advance(5)
        try device.setGoals(Goals(dailyKcal: 2100, proteinG: 90))
        let queued = try device.changes(after: 0, limit: 10).changes
        #expect(queued.map { "\($0.kind.rawValue) \($0.id) \($0.op.rawValue)" } == ["goals goals upsert"], "two sets, one entry")
        #expect(queued[0].goals == Goals(dailyKcal: 2100, proteinG: 90))
        #expect(queued[0].changedAt == fixedNow.addingTimeInterval(5))
        #expect(try server.apply(queued[0]) == .applied)
        #expect(try server.apply(queued[0]) == .unchanged)
        #expect(try server.goals() == Goals(dailyKcal: 2100, proteinG: 90))

        // Set later on the server: the device's older goals are refused, the server's come down in the pull.
        clock.advance(10)
        try device.setGoals(Goals(dailyKcal: 1800))
        clock.advance(10)
        try server.setGoals(Goals(dailyKcal: 2500, waterMl: 2500))
        let stale = try device.changes(after: queued[0].seq, limit: 10).changes
        #expect(stale.count == 1)
        #expect(try server.apply(stale[0]) == .keptNewer)
        #expect(try server.goals() == Goals(dailyKcal: 2500, waterMl: 2500))
        try device.markPushed(stale[0].seq)
        let feed = try server.changes(after: 0, limit: 10)
        #expect(feed.changes.map(\.kind) == [.goals])
        // A client of an earlier version, which cannot decode goals, is not sent them; its cursor passes over them.
        let earlier = try server.changes(after: 0, limit: 10, kinds: SyncKind.feedDefault)
        #expect(earlier.changes.isEmpty && earlier.next == 0 && !earlier.more)
        #expect(feed.changes[0].changedAt == fixedNow.addingTimeInterval(25))
        #expect(try device.applyPulled(feed) == [.applied])
        #expect(try device.goals() == Goals(dailyKcal: 2500, waterMl: 2500))
        #expect(try device.syncState().pending == 0, "a pulled change is not queued back")

        // Clearing is an upsert of empty goals; a deletion, or goals under another id, is refused.
        clock.advance(10)
        try device.setGoals(Goals())
        let cleared = try device.changes(after: stale[0].seq, limit: 10).changes.last!
        #expect(cleared.goals == Goals())
        #expect(try server.apply(cleared) == .applied)
        #expect(try server.goals() == Goals())
        for (bad, field) in [(SyncChange(kind: .goals, id: SyncChange.goalsID, op: .delete, changedAt: clock.now), "op"),
                             (SyncChange(kind: .goals, id: "other", op: .upsert, changedAt: clock.now, goals: Goals()), "id"),
                             (SyncChange(kind: .goals, id: SyncChange.goalsID, op: .upsert, changedAt: clock.now), "goals"),
                             (SyncChange(kind: .goals, id: SyncChange.goalsID, op: .upsert, changedAt: clock.now,
                                         goals: Goals(dailyKcal: -5)), "goal kcal")] {
            #expect {
                try server.apply(bad)
            } throws: { e in
                guard case let .invalidValue(f, _, _) = e as? MealStoreError else { return false }
                return f.hasPrefix(field)
            }
        }
    }

    /// `Fixtures/diary-v3.sqlite` was made by the previous release (schema v3: meals, water and weight sync): a meal,
    /// a water log, a deleted one, a weight log and goals set, nothing pushed yet.
    @Test func aDiaryFromBeforeGoalsSyncedQueuesItsGoalsOnce() throws {
        let dir = TestPaths.makeTempDirectory("goals-sync")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/diary.sqlite"
        try FileManager.default.copyItem(atPath: TestPaths.fixture("MealStoreTests", "diary-v3.sqlite"), toPath: path)
        // A number used and given up before the upgrade must not come back (a client's cursor may have passed it).
        try DatabaseQueue(path: path).write { db in
            #expect(try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations").last == "v3: sync change log")
            try db.execute(sql: "UPDATE sqlite_sequence SET seq = 40 WHERE name = 'changes'")
        }
        let before = try DatabaseQueue(path: path).read { db in
            try Row.fetchAll(db, sql: "SELECT seq, kind, entity_id, op, changed_ms FROM changes ORDER BY seq").map { "\($0)" }
        }
        #expect(before.count == 4)

        let clock = TestClock(fixedNow)
        let s = try store(path, clock)
        let page = try s.changes(after: 0, limit: 10)
        #expect(page.changes.map { "\($0.kind.rawValue) \($0.op.rawValue)" } == ["meal upsert", "water upsert", "water delete",
                                                                               "weight upsert", "goals upsert"])
        #expect(page.changes.last?.goals == Goals(dailyKcal: 2100, proteinG: 90))
        #expect(page.changes.last!.seq > 40)
        let after = try DatabaseQueue(path: path).read { db in
            try Row.fetchAll(db, sql: "SELECT seq, kind, entity_id, op, changed_ms FROM changes WHERE kind != 'goals' ORDER BY seq").map { "\($0)" }
        }
        #expect(after == before, "the earlier entries keep their numbers and times")

        // The triggers are back for every kind, and goals now record their time.
        clock.advance(60)
        let w = try s.addWater(milliliters: 250, at: fixedNow)
        try s.setGoals(Goals(dailyKcal: 2000))
        let next = try s.changes(after: page.next, limit: 10).changes
        #expect(next.map(\.id) == [w.id, SyncChange.goalsID])
        #expect(next[1].changedAt == fixedNow.addingTimeInterval(60))
        #expect(try s.changes(after: 0, limit: 10).changes.count == 6, "goals stay one entry")
    }
}
