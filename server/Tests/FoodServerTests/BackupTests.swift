import FoodServer
import Foundation
import Testing

/// `serve backup` under writes and `restore` into a new folder: every write acknowledged before the backup began is
/// there, served by a server started on the restored folder (same tokens, same photos).
/// On SQLite only: when the suite runs on PostgreSQL (FOODMOMENT_TEST_STORE=postgres) the accounts and diaries are in
/// the database, whose backup is `pg_dump` (docs/deploy.md), and the archive holds only the photos.
@Suite("Backup and restore (SQLite data folder)", .serialized, .enabled(if: !TestPostgres.everyServer))
struct BackupTests {
    actor Acknowledged {
        var meals: [(token: String, id: String)] = []
        func add(_ token: String, _ id: String) { meals.append((token, id)) }
    }

    @Test func aBackupOfALiveServerHoldsEveryAcknowledgedWrite() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("fm-backup-\(UUID().uuidString)").path
        let restored = data + "-restored", file = data + ".tar"
        defer { for p in [data, restored, file] { try? FileManager.default.removeItem(atPath: p) } }
        let server = try await LiveServer(data: data)
        let alice = try await server.token(for: "alice"), bob = try await server.token(for: "bob")
        let photo = try Data(contentsOf: URL(fileURLWithPath: repoRoot + "/samples/banana.jpg"))
        let analysed = try await server.request("POST", "/api/v1/food/analyze?store_photo=true", token: alice, contentType: "image/jpeg", body: photo)
        let imageID = try #require(analysed.json["image_id"] as? String)
        let withPhoto = #"{"foods": [{"food": "banana", "grams": 120}], "image_id": "\#(imageID)", "tz": "UTC"}"#
        #expect(try await server.request("POST", "/api/v1/meals", token: alice, contentType: "application/json", body: Data(withPhoto.utf8)).status == 201)
        // Writers that keep going while the backup runs.
        let acknowledged = Acknowledged()
        let writers = [alice, bob].map { token in
            Task {
                var n = 0
                while !Task.isCancelled {
                    n += 1
                    let body = #"{"foods": [{"food": "rice", "grams": \#(100 + n)}], "tz": "UTC"}"#
                    if let reply = try? await server.request("POST", "/api/v1/meals", token: token, contentType: "application/json", body: Data(body.utf8)),
                       reply.status == 201, let id = reply.json["id"] as? String {
                        await acknowledged.add(token, id)
                    }
                }
            }
        }
        // Until both writers have had writes acknowledged (each user's diary exists), however slow the machine is.
        for _ in 0..<1500 {
            let meals = await acknowledged.meals
            if meals.filter({ $0.token == alice }).count >= 2 && meals.filter({ $0.token == bob }).count >= 2 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        let before = await acknowledged.meals
        let summary = try ServerBackup.write(dataDirectory: data, to: file)
        try await Task.sleep(for: .milliseconds(100))
        for w in writers { w.cancel() }
        for w in writers { _ = await w.value }
        let all = await acknowledged.meals
        await server.stop()
        #expect(before.count >= 4 && summary.databases >= 3 && summary.files >= 2, "\(before.count) writes before, \(summary)")

        let unpacked = try ServerBackup.restore(from: file, into: restored)
        #expect(unpacked.databases == summary.databases && unpacked.files == summary.files)
        let again = try await LiveServer(data: restored)
        for (token, id) in before {
            #expect(try await again.request("GET", "/api/v1/meals/" + id, token: token).status == 200, "meal \(id) acknowledged before the backup")
        }
        var during = 0
        for (token, id) in all.dropFirst(before.count) where try await again.request("GET", "/api/v1/meals/" + id, token: token).status == 200 { during += 1 }
        let image = try await again.request("GET", "/api/v1/images/" + imageID, token: alice)
        #expect(image.status == 200 && image.body == photo, "the kept photo, its owner's only")
        #expect(try await again.request("GET", "/api/v1/images/" + imageID, token: bob).status == 404)
        print("backup: \(before.count) meals acknowledged before, all restored; \(during) of \(all.count - before.count) written during it are in it")
        await again.stop()

        // Refusals that say what to do.
        let occupied = data + "-occupied"
        try FileManager.default.createDirectory(atPath: occupied, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: occupied + "/accounts.sqlite"))
        defer { try? FileManager.default.removeItem(atPath: occupied) }
        #expect(throws: ServerBackup.Failure.self) { try ServerBackup.restore(from: file, into: occupied) }
        let junk = data + "-junk.tar"
        try Data("not a tar".utf8).write(to: URL(fileURLWithPath: junk))
        defer { try? FileManager.default.removeItem(atPath: junk) }
        defer { try? FileManager.default.removeItem(atPath: data + "-empty") }
        #expect(throws: ServerBackup.Failure.self) { try ServerBackup.restore(from: junk, into: data + "-empty") }
        let notData = data + "-not-data"
        try FileManager.default.createDirectory(atPath: notData, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: notData) }
        #expect(throws: ServerBackup.Failure.self) { try ServerBackup.write(dataDirectory: notData, to: data + "-x.tar") }
    }
}
