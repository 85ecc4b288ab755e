import CurlTransport
import Foundation
import MealStore

/// Commands that change the diary: when they end well, `AutoSync` sends what they queued.
protocol ChangesDiary {
    /// The diary this run changed; nil when it changed none (`analyze` without `--log`).
    var changedDiaryPath: String? { get }
}

/// Automatic sync: once `foodmoment sync --server URL --token T` has worked, the token is kept beside the diary
/// (`<diary>.sync-token`, mode 0600) and each command that changed the diary (`analyze --log`, `meal add/edit/delete`,
/// `water …`, `weight …`, `goals set`, `import`) pushes its queued changes — and pulls the server's — as it ends,
/// waiting a few seconds at most. A server that does not answer leaves everything queued for the next command or
/// `foodmoment sync`, and one line on stderr says so; the command's own result and exit status do not change.
/// `FOODMOMENT_AUTO_SYNC=0` (or `sync --forget-token`) turns it off.
enum AutoSync {
    static func tokenPath(forDiary path: String) -> String { path + ".sync-token" }

    static func token(forDiary path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: tokenPath(forDiary: path)) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    /// Keeps the token that just synced, readable by this user only.
    static func save(token: String, forDiary path: String) throws {
        let file = tokenPath(forDiary: path)
        FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o600])
        try Data((token + "\n").utf8).write(to: URL(fileURLWithPath: file))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file)
    }

    static func forget(forDiary path: String) -> Bool {
        (try? FileManager.default.removeItem(atPath: tokenPath(forDiary: path))) != nil
    }

    /// Seconds an automatic sync may take before the command ends anyway.
    static let timeout: Duration = .seconds(5)

    static func waits(_ n: Int) -> String { n == 1 ? "1 change waits" : "\(n) changes wait" }

    /// One line on stderr, after what the command printed (stdout flushed first, so the order holds in a pipe).
    static func say(_ line: String) {
        fflush(nil)   // every C stream (print writes through stdout's buffer)
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// After a command that changed `path`: push and pull when a server and its token are known and something waits.
    static func afterChange(diary path: String, enabled: Bool) async {
        guard enabled, let token = token(forDiary: path), FileManager.default.fileExists(atPath: path),
              let store = try? MealStore(path: path), let state = try? store.syncState(),
              let server = state.server, state.pending > 0 else { return }
        var client = SyncClient(store: store, transport: CurlHTTPTransport(userAgent: RefineOptions.userAgent), server: server, token: token)
        client.timeout = timeout
        let waiting = state.pending
        do {
            let report = try await client.run { _ in }
            if let failure = report.failure {
                say("sync: not sent — \(waits(report.pending)) for the next command or `foodmoment sync` (\(failure))")
            } else {
                let sent = waiting - report.pending
                say("sync: sent \(sent) change\(sent == 1 ? "" : "s") to \(server)\(report.pulledApplied > 0 ? ", \(report.pulledApplied) new from it" : "")")
            }
        } catch {
            say("sync: not sent — \(waits(waiting)) for the next command or `foodmoment sync` (\(error))")
        }
    }
}

// Commands whose changes go to the server when they end (AutoSync).
extension AnalyzeCommand: ChangesDiary { var changedDiaryPath: String? { log ? storePath : nil } }
extension MealCommand.Edit: ChangesDiary { var changedDiaryPath: String? { store.resolvedPath } }
extension MealCommand.Add: ChangesDiary { var changedDiaryPath: String? { store.resolvedPath } }
extension MealCommand.Delete: ChangesDiary { var changedDiaryPath: String? { store.resolvedPath } }
extension WaterCommand.Add: ChangesDiary { var changedDiaryPath: String? { store.resolvedPath } }
extension WaterCommand.Edit: ChangesDiary { var changedDiaryPath: String? { store.resolvedPath } }
extension WaterCommand.Delete: ChangesDiary { var changedDiaryPath: String? { store.resolvedPath } }
extension WeightCommand.Add: ChangesDiary { var changedDiaryPath: String? { store.resolvedPath } }
extension WeightCommand.Edit: ChangesDiary { var changedDiaryPath: String? { store.resolvedPath } }
extension WeightCommand.Delete: ChangesDiary { var changedDiaryPath: String? { store.resolvedPath } }
extension GoalsCommand.Set: ChangesDiary { var changedDiaryPath: String? { store.resolvedPath } }
extension ImportCommand: ChangesDiary { var changedDiaryPath: String? { store.resolvedPath } }
