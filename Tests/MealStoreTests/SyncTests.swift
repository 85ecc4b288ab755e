import FoodCore
import FoodMomentTestSupport
import Foundation
import MealStore
import Testing

/// A clock the test moves.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var t: Date
    init(_ t: Date) { self.t = t }
    var now: Date { lock.withLock { t } }
    func advance(_ s: TimeInterval) { lock.withLock { t = t.addingTimeInterval(s) } }
}

@Suite("meal store: the sync change log and its conflict rule")
struct SyncTests {
    func store(_ dir: String, _ name: String, _ clock: TestClock) throws -> MealStore {
        try MealStore(path: dir + "/\(name).sqlite", now: { clock.now }, timeZone: berlin)
    }

    @Test func everyChangeIsQueuedOncePerEntryInCommitOrder() throws {
        let dir = TestPaths.makeTempDirectory("sync")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clock = TestClock(fixedNow)
        let s = try store(dir, "a", clock)
        let meal = try s.addMeal(time: at("2026-11-22", "12:00"), foods: [food("Rice", kcal: 130)])
        let water = try s.addWater(milliliters: 250, at: at("2026-11-22", "09:00"))
        let weight = try s.addWeight(kilograms: 70, at: at("2026-11-22", "07:00"))
        clock.advance(60)
        _ = try s.edit(mealID: meal.id, [.grams(index: 0, grams: 200)])
        try #require(try s.deleteWater(id: water.id) != nil)

        let page = try s.changes(after: 0, limit: 100)
        #expect(page.changes.map { "\($0.kind.rawValue) \($0.op.rawValue)" } == ["weight upsert", "meal upsert", "water delete"])
        #expect(page.changes.map(\.id) == [weight.id, meal.id, water.id])
        #expect(page.changes[1].meal?.foods.first?.grams == 200)
        #expect(page.changes[1].changedAt == fixedNow.addingTimeInterval(60))
        #expect(page.changes[0].weight == weight)
        #expect(page.next == page.changes.last!.seq && !page.more)
        let first = try s.changes(after: 0, limit: 2)
        #expect(first.changes.count == 2 && first.more)
        #expect(try s.changes(after: first.next, limit: 2).changes.map(\.id) == [water.id])

        try s.markPushed(page.next)
        #expect(try s.syncState().pending == 0)
        // Changes pulled from the server are applied without being queued back.
        let other = SyncChange(kind: .water, id: "W-FROM-SERVER", op: .upsert, changedAt: fixedNow,
                               water: WaterLog(id: "W-FROM-SERVER", time: at("2026-11-23", "10:00"), milliliters: 300), seq: 7)
        #expect(try s.applyPulled(SyncPage(changes: [other], next: 7, more: false)) == [.applied])
        #expect(try s.syncState().pending == 0 && s.syncState().pullCursor == 7)
        #expect(try s.waterLog(id: "W-FROM-SERVER")?.milliliters == 300)
        // The same page again (a pull killed before its answer was read) changes nothing.
        #expect(try s.applyPulled(SyncPage(changes: [other], next: 7, more: false)) == [.unchanged])
    }

    @Test func laterChangeWinsAndDeletionsWin() throws {
        let dir = TestPaths.makeTempDirectory("sync")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let clock = TestClock(fixedNow)
        let server = try store(dir, "server", clock)
        let device = try store(dir, "device", clock)
        let meal = try device.addMeal(time: at("2026-11-22", "12:00"), foods: [food("Rice", kcal: 130)])
        let push = { (c: SyncChange) throws -> SyncOutcome in try server.apply(c) }
        let created = try device.changes(after: 0, limit: 10).changes[0]
        #expect(try push(created) == .applied)
        #expect(try push(created) == .unchanged)
        #expect(try server.meal(id: meal.id) == meal)

        // Edited on the server later than on the device: the device's older edit is refused, the server's kept.
        clock.advance(10)
        let deviceEdit = try device.edit(mealID: meal.id, [.title("Device title")])
        clock.advance(10)
        _ = try server.edit(mealID: meal.id, [.title("Server title")])
        let stale = try device.changes(after: created.seq, limit: 10).changes[0]
        #expect(stale.meal == deviceEdit)
        #expect(try push(stale) == .keptNewer)
        #expect(try server.meal(id: meal.id)?.title == "Server title")
        // The server's version comes down and replaces the device's.
        let feed = try server.changes(after: 0, limit: 10)
        #expect(try device.applyPulled(feed) == [.applied])
        #expect(try device.meal(id: meal.id)?.title == "Server title")

        // Deleted on the server; a later edit from the device does not bring it back.
        #expect(try server.deleteMeal(id: meal.id))
        clock.advance(10)
        _ = try device.edit(mealID: meal.id, [.title("Too late")])
        let late = try device.changes(after: stale.seq, limit: 10).changes.last!
        #expect(try push(late) == .deleted)
        #expect(try server.meal(id: meal.id) == nil)
        // And the tombstone comes down: the device deletes it too (deletions win over its newer edit).
        let tomb = try server.changes(after: feed.next, limit: 10)
        #expect(tomb.changes.map(\.op) == [.delete])
        #expect(try device.applyPulled(tomb) == [.applied])
        #expect(try device.meal(id: meal.id) == nil)

        // A deletion of an entry the server never had still leaves a tombstone there.
        let ghost = SyncChange(kind: .weight, id: "never-seen", op: .delete, changedAt: clock.now, seq: 99)
        #expect(try push(ghost) == .unchanged)
        let w = SyncChange(kind: .weight, id: "never-seen", op: .upsert, changedAt: clock.now.addingTimeInterval(5),
                           weight: WeightLog(id: "never-seen", time: clock.now, kilograms: 70), seq: 100)
        #expect(try push(w) == .deleted)
        #expect(try push(ghost) == .unchanged)
    }

    @Test func malformedChangesAreRefusedWithTheirReason() throws {
        let bad: [(SyncChange, String)] = [
            (SyncChange(kind: .water, id: "", op: .upsert, changedAt: fixedNow), "id"),
            (SyncChange(kind: .water, id: "w1", op: .upsert, changedAt: fixedNow), "water"),
            (SyncChange(kind: .water, id: "w1", op: .upsert, changedAt: fixedNow,
                        water: WaterLog(id: "w1", time: fixedNow, milliliters: -5)), "water"),
            (SyncChange(kind: .weight, id: "g1", op: .upsert, changedAt: fixedNow,
                        water: WaterLog(id: "g1", time: fixedNow, milliliters: 5)), "weight"),
            (SyncChange(kind: .meal, id: "m1", op: .delete, changedAt: fixedNow,
                        water: WaterLog(id: "m1", time: fixedNow, milliliters: 5)), "op"),
        ]
        for (c, field) in bad {
            #expect {
                try DiaryRules.check(c)
            } throws: { e in
                guard case let .invalidValue(f, _, _) = e as? MealStoreError else { return false }
                return f.hasPrefix(field)
            }
        }
        var m = MealRecord(id: "m1", type: .lunch, time: fixedNow, title: "x", foods: [food("Rice", kcal: 130)], createdAt: fixedNow)
        m.foods[0].nutrients.kcal = .nan
        #expect(throws: MealStoreError.self) {
            try DiaryRules.check(SyncChange(kind: .meal, id: "m1", op: .upsert, changedAt: fixedNow, meal: m))
        }
        m.foods[0].nutrients.kcal = 130
        try DiaryRules.check(SyncChange(kind: .meal, id: "m1", op: .upsert, changedAt: fixedNow, meal: m))
        let photo = MealPhoto(hash: "h1", path: "/p.jpg", takenAt: fixedNow, timeSource: .exif)
        m.photos = [photo, photo]
        #expect(throws: MealStoreError.self) {
            try DiaryRules.check(SyncChange(kind: .meal, id: "m1", op: .upsert, changedAt: fixedNow, meal: m))
        }
        // changed_at must be the meal's updated_at (the time the conflict rule compares).
        m.photos = [photo]
        #expect(throws: MealStoreError.self) {
            try DiaryRules.check(SyncChange(kind: .meal, id: "m1", op: .upsert, changedAt: fixedNow.addingTimeInterval(1), meal: m))
        }
    }

    @Test func aDiarySyncsWithOneServer() throws {
        let dir = TestPaths.makeTempDirectory("sync")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = try store(dir, "a", TestClock(fixedNow))
        try s.bindSyncServer("http://typo.example", bind: false)
        #expect(try s.syncState().server == nil)
        let device = try s.bindSyncServer("http://a.example")
        #expect(try s.bindSyncServer("http://a.example") == device)
        #expect(try s.syncState().device == device && device.count == 36)
        #expect(throws: MealStoreError.syncServerMismatch(bound: "http://a.example", asked: "http://b.example")) {
            try s.bindSyncServer("http://b.example")
        }
    }
}
