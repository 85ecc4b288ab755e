import FoodCore
import FoodMomentTestSupport
import Foundation
import GRDB
import MealStore
import Testing

/// The built `foodmoment` binary, next to the test bundle.
let foodmomentExecutable: String = {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("foodmoment").path
}()

@Suite("atomicity and crash safety")
struct CrashSafetyTests {
    /// Installs a trigger that makes SQLite abort inserts into `table` (a real failure halfway through `record`).
    func failInserts(into table: String, path: String) throws {
        let q = try DatabaseQueue(path: path)
        try q.write { db in
            try db.execute(sql: "CREATE TRIGGER fail_\(table) BEFORE INSERT ON \(table) BEGIN SELECT RAISE(ABORT, 'injected failure'); END")
        }
    }

    @Test(arguments: ["foods", "photos", "journal"])
    func aRecordThatFailsMidwayLeavesNothing(table: String) throws {
        let t = try TempStore()
        defer { t.cleanup() }
        let s = t.store
        try s.log(photoMeal("first", at("2026-11-22", "12:00"), [food("Rice", kcal: 130)]))
        let before = try s.exportDocument()
        try failInserts(into: table, path: s.path)
        // A new meal (created) and a photo of the same meal (merged) both fail as one piece.
        for m in [photoMeal("new", at("2026-11-22", "19:00"), [food("Soup", kcal: 50)]),
                  photoMeal("merge", at("2026-11-22", "12:10"), [food("Naan", kcal: 290)])] {
            #expect {
                try s.record(hash: m.photo.hash, path: m.photo.path, settings: "s1", result: Data("r".utf8), meal: m,
                             policy: MergePolicy(timeZone: berlin), replace: false)
            } throws: { e in
                (e as? MealStoreError)?.description.contains("injected failure") == true
            }
            #expect(try s.journalEntry(hash: m.photo.hash, settings: "s1") == nil)
        }
        #expect(try s.exportDocument() == before)
        #expect(try s.integrityProblems() == [])
    }

    /// Every meal has photos, totals are the sum of stored foods, journal links point at meals: the invariants a
    /// half-written record would break.
    func checkConsistency(_ path: String) throws -> (journal: Int, photos: Int) {
        let s = try MealStore(path: path)
        #expect(try s.integrityProblems() == [])
        let meals = try s.allMeals()
        for m in meals {
            #expect(!m.photos.isEmpty)
            #expect(Set(m.foods.compactMap(\.photoHash)) == Set(m.photos.map(\.hash)))
            #expect(m.title == MealRules.title(foods: m.foods, type: m.type))
            #expect(m.tags == MealRules.tags(totals: m.totals))
        }
        let photos = meals.reduce(0) { $0 + $1.photos.count }
        #expect(photos == (try s.photoCount()))
        // Each photo is logged iff its journal row exists (the writer logs every photo it journals).
        #expect(try s.journalCount() == photos)
        return (try s.journalCount(), photos)
    }

    @Test(.timeLimit(.minutes(1)))
    func aWriterKilledWithSIGKILLLeavesAConsistentStoreAndResumes() throws {
        let dir = TestPaths.makeTempDirectory("crash")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/meals.sqlite"
        let total = 400
        var lastCommitted = -1
        for round in 0..<6 {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: foodmomentExecutable)
            p.arguments = ["debug-store-writer", "--db", path, "--count", String(total), "--foods", "4"]
            let out = Pipe()
            p.standardOutput = out
            p.standardError = FileHandle.nullDevice
            try p.run()
            // Kill after a different number of commits each round, while the writer is in its loop.
            let want = 5 + round * 7
            var seen = 0
            var buffer = Data()
            while seen < want {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                buffer += chunk
                seen = buffer.split(separator: UInt8(ascii: "\n")).count
            }
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            #expect(p.terminationReason == .uncaughtSignal, "round \(round): the writer finished before it was killed")
            let lines = String(decoding: buffer, as: UTF8.self).split(separator: "\n")
            if let last = lines.last(where: { $0.hasPrefix("recorded ") }), let n = Int(last.dropFirst(9)) {
                lastCommitted = max(lastCommitted, n)
            }
            let (journal, _) = try checkConsistency(path)
            // Everything the writer reported as committed is there (and maybe one more it had not reported).
            #expect(journal >= lastCommitted + 1)
        }
        // A final run finishes the rest: exactly one record per photo, same meals as one uninterrupted run.
        let r = try runProcess(foodmomentExecutable, ["debug-store-writer", "--db", path, "--count", String(total), "--foods", "4"])
        #expect(r.status == 0, "\(r.stderr)")
        let (journal, photos) = try checkConsistency(path)
        #expect(journal == total && photos == total)
        let clean = dir + "/clean.sqlite"
        let c = try runProcess(foodmomentExecutable, ["debug-store-writer", "--db", clean, "--count", String(total), "--foods", "4"])
        #expect(c.status == 0)
        let resumed = try MealStore(path: path).allMeals(), uninterrupted = try MealStore(path: clean).allMeals()
        #expect(resumed.map(\.totals) == uninterrupted.map(\.totals))
        #expect(resumed.map { $0.photos.map(\.hash) } == uninterrupted.map { $0.photos.map(\.hash) })
    }
}
