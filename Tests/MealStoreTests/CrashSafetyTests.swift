import FoodCore
import FoodMomentTestSupport
import Foundation
import GRDB
import MealStore
import Testing
#if canImport(Glibc)
import Glibc
#endif

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

    /// The kill always lands mid-loop, however the two processes are scheduled: the writer blocks on a full pipe, so it
    /// can be ahead of what this test has read by at most the pipe's capacity (shrunk to a page; lines are read a byte
    /// at a time), and each round asks for more photos than the writer can have committed by the time of the kill.
    /// The time limit only guards against a hang.
    @Test(.timeLimit(.minutes(5)))
    func aWriterKilledWithSIGKILLLeavesAConsistentStoreAndResumes() throws {
        let dir = TestPaths.makeTempDirectory("crash")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/meals.sqlite"
        var total = 400
        var lastCommitted = -1
        var journaled = 0
        for round in 0..<6 {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: foodmomentExecutable)
            let out = Pipe()
            let fd = out.fileHandleForReading.fileDescriptor
            _ = fcntl(fd, 1031 /* F_SETPIPE_SZ */, 4096)
            let reported = Int(fcntl(fd, 1032 /* F_GETPIPE_SZ */))
            let capacity = reported > 0 ? reported : 65536
            // Kill after a different number of commits each round, while the writer is in its loop. By then it has
            // committed at most the lines read, the lines still in the pipe (each "recorded N\n", at least 11 bytes)
            // and one it had not printed yet; the photos already journaled are skipped.
            let want = 5 + round * 7
            total = max(total, journaled + want + capacity / 11 + 2)
            p.arguments = ["dev", "debug-store-writer", "--db", path, "--count", String(total), "--foods", "4"]
            p.standardOutput = out
            p.standardError = FileHandle.nullDevice
            try p.run()
            var seen = 0
            var buffer = Data()
            var byte: UInt8 = 0
            while seen < want, read(fd, &byte, 1) == 1 {
                buffer.append(byte)
                if byte == UInt8(ascii: "\n") { seen += 1 }
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
            journaled = journal
        }
        // A final run finishes the rest: exactly one record per photo, same meals as one uninterrupted run.
        let r = try runProcess(foodmomentExecutable, ["dev", "debug-store-writer", "--db", path, "--count", String(total), "--foods", "4"])
        #expect(r.status == 0, "\(r.stderr)")
        let (journal, photos) = try checkConsistency(path)
        #expect(journal == total && photos == total)
        let clean = dir + "/clean.sqlite"
        let c = try runProcess(foodmomentExecutable, ["dev", "debug-store-writer", "--db", clean, "--count", String(total), "--foods", "4"])
        #expect(c.status == 0)
        let resumed = try MealStore(path: path).allMeals(), uninterrupted = try MealStore(path: clean).allMeals()
        #expect(resumed.map(\.totals) == uninterrupted.map(\.totals))
        #expect(resumed.map { $0.photos.map(\.hash) } == uninterrupted.map { $0.photos.map(\.hash) })
    }
}
