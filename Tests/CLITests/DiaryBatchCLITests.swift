import FoodCore
import FoodMomentTestSupport
import Foundation
import ImageCodecs
import Testing

/// `analyze --log` keeps what the user decided: deletions, photos without a capture time, unrecognised photos.
@Suite("analyze --log and the diary (the real binary)")
struct DiaryBatchCLITests {
    let samples = TestPaths.repoRoot + "/samples"

    /// Copies of bundled samples (they carry no EXIF date: their only time is the copy's file time).
    func copies(_ names: [String]) throws -> (dir: String, photos: String) {
        let dir = TestPaths.makeTempDirectory("diary-batch")
        let photos = dir + "/photos"
        try FileManager.default.createDirectory(atPath: photos, withIntermediateDirectories: true)
        for name in names {
            try FileManager.default.copyItem(atPath: samples + "/" + name, toPath: photos + "/" + name)
        }
        return (dir, photos)
    }

    func meals(_ dir: String) throws -> [[String: Any]] {
        let list = try diaryCLI(dir, "meal", "list", "--json")
        #expect(list.status == 0, "\(list.stderr)")
        return try #require(try jsonObject(list) as? [[String: Any]])
    }

    @Test func photosWithoutACaptureTimeAreNotMergedByTime() throws {
        let (dir, photos) = try copies(["apple.jpg", "banana.jpg", "orange.jpg"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let run = try diaryCLI(dir, "analyze", photos, "--log")
        #expect(run.status == 0, "\(run.stderr)")
        // Three copies made within a second of each other: three meals, and the output says why.
        #expect(try meals(dir).count == 3)
        #expect(run.stdout.contains("file time: no EXIF date, so not merged"), "\(run.stdout)")
        #expect(run.stdout.contains("3 meals created, 0 photos merged"))

        // The user says when they were eaten: one meal at that time.
        let given = dir + "/given"
        try FileManager.default.createDirectory(atPath: given, withIntermediateDirectories: true)
        let told = try diaryCLI(given, "analyze", photos, "--log", "--date", "2026-11-20", "--time", "12:30")
        #expect(told.status == 0, "\(told.stderr)")
        let one = try meals(given)
        #expect(one.count == 1)
        #expect((one.first?["time"] as? String)?.hasPrefix("2026-11-20T12:30") == true, "\(one)")
        #expect(told.stdout.contains("(--time)"))

        // --no-merge keeps them apart even with one time.
        let apart = dir + "/apart"
        try FileManager.default.createDirectory(atPath: apart, withIntermediateDirectories: true)
        #expect(try diaryCLI(apart, "analyze", photos, "--log", "--time", "2026-11-20 12:30", "--no-merge").status == 0)
        #expect(try meals(apart).count == 3)

        #expect(try diaryCLI(dir, "analyze", photos, "--time", "12:30").status == 2, "--time without --log is a usage error")
        #expect(try diaryCLI(dir, "analyze", photos, "--log", "--date", "2026-11-20").status == 2, "--date needs --time")
        #expect(try diaryCLI(dir, "analyze", photos, "--log", "--time", "25:99").status == 2)
    }

    @Test func aDeletedMealStaysDeleted() throws {
        let (dir, photos) = try copies(["banana.jpg"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(try diaryCLI(dir, "analyze", photos, "--log").status == 0)
        let id = try #require(try meals(dir).first?["id"] as? String)
        #expect(try diaryCLI(dir, "meal", "delete", id).status == 0)
        #expect(try meals(dir).isEmpty)

        // The same folder again: the journal has the photo, the diary remembers the deletion.
        let again = try diaryCLI(dir, "analyze", photos, "--log")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try meals(dir).isEmpty, "a deleted meal came back")
        #expect(again.stdout.contains("you deleted its meal earlier"))
        #expect(again.stdout.contains("1 not logged again"))

        // --force logs it on purpose, once.
        #expect(try diaryCLI(dir, "analyze", photos, "--log", "--force").status == 0)
        #expect(try meals(dir).count == 1)
        #expect(try diaryCLI(dir, "analyze", photos, "--log").status == 0)
        #expect(try meals(dir).count == 1)
    }

    @Test func anUnrecognisedPhotoIsLoggedAsSuch() throws {
        let (dir, photos) = try copies([])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let wall = try ImageEncoder.jpeg(RGBImage(width: 320, height: 240, fill: (40, 90, 200)))
        try Data(wall).write(to: URL(fileURLWithPath: photos + "/wall.jpg"))
        let run = try diaryCLI(dir, "analyze", photos, "--log", "--json")
        #expect(run.status == 0, "\(run.stderr)")
        let doc = try #require(try jsonObject(run) as? [[String: Any]])
        #expect(doc.first?["status"] as? String == "unknown")
        #expect(run.stderr.contains("1 unrecognised (logged as such)"), "\(run.stderr)")
        let logged = try meals(dir)
        #expect(logged.count == 1)
        #expect(logged.first?["title"] as? String == "Unrecognised photo")
        #expect((logged.first?["analysis"] as? String)?.contains("best guess") == true)
        #expect((logged.first?["foods"] as? [Any])?.isEmpty == true)
    }
}
