import FoodMomentTestSupport
import Foundation
import Testing

@Suite("correcting the diary (the real binary)")
struct DiaryCorrectionsCLITests {
    @Test func weightCanBeCorrectedAndATypoNeedsForce() throws {
        let dir = TestPaths.makeTempDirectory("weight-fix")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try diaryCLI(dir, "weight", "add", "72.4", "--time", "2026-11-24 08:00").status == 0)
        let typo = try diaryCLI(dir, "weight", "add", "172", "--time", "2026-11-25 08:00")
        #expect(typo.status == 2 && typo.stderr.contains("99.6 kg more than the 72.4 kg") && typo.stderr.contains("--force"),
                "\(typo.stderr)")
        #expect(try diaryCLI(dir, "weight", "add", "72.9", "--time", "2026-11-25 08:00").status == 0, "a normal day's change")
        #expect(try diaryCLI(dir, "weight", "add", "172", "--time", "2026-11-26 08:00", "--force").status == 0)
        func logs() throws -> [[String: Any]] {
            try #require(try jsonObject(try diaryCLI(dir, "weight", "list", "--json")) as? [[String: Any]])
        }
        let typed = try #require(try logs().last?["id"] as? String)
        let edit = try diaryCLI(dir, "weight", "edit", String(typed.prefix(8)), "--kg", "72.1")
        #expect(edit.status == 0, "\(edit.stderr)")
        #expect(try logs().compactMap { $0["kilograms"] as? Double } == [72.4, 72.9, 72.1])
        #expect(try diaryCLI(dir, "weight", "delete", String(typed.prefix(8))).status == 0)
        #expect(try logs().count == 2)
        let missing = try diaryCLI(dir, "weight", "delete", "nosuchid")
        #expect(missing.status == 1 && missing.stderr.contains("weight list"))
    }

    @Test func waterCanBeCorrectedAndATypoNeedsForce() throws {
        let dir = TestPaths.makeTempDirectory("water-fix")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try diaryCLI(dir, "water", "add", "250", "--time", "2026-11-24 08:00").status == 0)
        let typo = try diaryCLI(dir, "water", "add", "5000", "--time", "2026-11-24 09:00")
        #expect(typo.status == 2 && typo.stderr.contains("--force"), "\(typo.stderr)")
        func logs() throws -> [[String: Any]] {
            try #require(try jsonObject(try diaryCLI(dir, "water", "list", "--date", "2026-11-24", "--json")) as? [[String: Any]])
        }
        let id = try #require(try logs().first?["id"] as? String)
        #expect(try diaryCLI(dir, "water", "edit", String(id.prefix(8)), "--ml", "330", "--time", "08:30").status == 0)
        let fixed = try #require(try logs().first)
        #expect(fixed["milliliters"] as? Double == 330)
        #expect((fixed["time"] as? String)?.hasPrefix("2026-11-24T08:30") == true, "\(fixed)")
        #expect(try diaryCLI(dir, "water", "delete", String(id.prefix(8))).status == 0)
        #expect(try logs().isEmpty)
    }

    @Test func anAbsurdAmountOfFoodNeedsForce() throws {
        let r = try foodmoment("nutrition", "banana", "--grams", "1e9")
        #expect(r.status == 2 && r.stderr.contains("more than 5 kg") && r.stderr.contains("--force"), "\(r.stderr)")
        #expect(try foodmoment("nutrition", "banana", "--grams", "1e9", "--force").status == 0)
    }
}

@Suite("a read-only diary (the real binary)")
struct ReadOnlyDiaryCLITests {
    /// Viewing works and changes nothing; a change is refused with what to do. (Tests run as root, for whom file
    /// permissions do not apply, so `--read-only` stands in for a file the user cannot write: the same code path.)
    @Test func aReadOnlyDiaryCanStillBeViewed() throws {
        let dir = TestPaths.makeTempDirectory("readonly")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try diaryCLI(dir, "meal", "add", "--time", "2026-11-24 12:30", "--food", "banana=118").status == 0)
        #expect(try diaryCLI(dir, "water", "add", "250", "--time", "2026-11-24 13:00").status == 0)
        let before = TestPaths.read(dir + "/meals.sqlite")
        for args in [["diary", "--date", "2026-11-24"], ["meal", "list"], ["stats", "--date", "2026-11-24"],
                     ["export"], ["achievements"], ["water", "list", "--date", "2026-11-24"]] {
            let r = try runProcess(foodmomentBinary, args + ["--db", dir + "/meals.sqlite", "--read-only"],
                                   environment: ["FOODMOMENT_HOME": dir + "/home", "TZ": "UTC", "PATH": "/usr/bin:/bin"])
            #expect(r.status == 0, "\(args): \(r.stderr)")
            #expect(!r.stdout.isEmpty, "\(args) printed nothing")
        }
        let refused = try runProcess(foodmomentBinary, ["water", "add", "250", "--db", dir + "/meals.sqlite", "--read-only"],
                                     environment: ["FOODMOMENT_HOME": dir + "/home", "TZ": "UTC"])
        #expect(refused.status == 1 && refused.stderr.contains("read-only") && refused.stderr.contains("--db COPY"), "\(refused.stderr)")
        #expect(TestPaths.read(dir + "/meals.sqlite") == before, "viewing changed the file")
    }
}

@Suite("foodmoment sync: what a user sees without a server (the real binary; against a real server: server/Tests SyncTests)")
struct SyncCLITests {
    @Test func theQueueWaitsForTheServerAndEveryMistakeIsNamed() throws {
        let dir = TestPaths.makeTempDirectory("sync-cli")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try diaryCLI(dir, "water", "add", "250", "--time", "2026-11-24 08:00").status == 0)
        #expect(try diaryCLI(dir, "weight", "add", "70", "--time", "2026-11-24 07:00").status == 0)
        let status = try jsonObject(try diaryCLI(dir, "sync", "--status", "--json")) as? [String: Any]
        #expect(status?["pending"] as? Int == 2 && status?["server"] == nil)

        let noToken = try diaryCLI(dir, "sync", "--server", "http://127.0.0.1:9")
        #expect(noToken.status == 2 && noToken.stderr.contains("--token"), "\(noToken.stderr)")
        let badURL = try diaryCLI(dir, "sync", "--server", "127.0.0.1:8080", "--token", "fm_x")
        #expect(badURL.status == 2 && badURL.stderr.contains("http://"), "\(badURL.stderr)")

        // Nothing listens on port 9: the first change is named, both stay queued, the diary is not bound to that URL.
        let down = try diaryCLI(dir, "sync", "--server", "http://127.0.0.1:9", "--token", "fm_x", "--json")
        #expect(down.status == 1 && down.stderr.contains("pushing water") && down.stderr.contains("2 changes still queued"), "\(down.stderr)")
        let report = try jsonObject(down) as? [String: Any]
        #expect(report?["complete"] as? Bool == false && report?["pushed"] as? Int == 0 && report?["pending"] as? Int == 2)
        #expect((report?["failure"] as? String)?.contains("127.0.0.1") == true)
        let after = try jsonObject(try diaryCLI(dir, "sync", "--status", "--json")) as? [String: Any]
        #expect(after?["pending"] as? Int == 2 && after?["server"] == nil)

        // A web server that is not FoodMoment (an HTML page for every request, as a proxy or a typo'd port gives):
        // one line that says so, not the page; nothing leaves the queue.
        let page = Array("<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>".utf8)
        let web = try LoopbackHTTPServer(respond: { _ in .init(status: 200, headers: ["Content-Type": "text/html"], body: page) })
        let wrong = try diaryCLI(dir, "sync", "--server", web.baseURL, "--token", "fm_x")
        #expect(wrong.status == 1 && wrong.stderr.contains("is \(web.baseURL) the FoodMoment server's URL?")
                && !wrong.stderr.contains("nginx") && wrong.stderr.contains("2 changes still queued"), "\(wrong.stderr)")
    }
}
