import ArgumentParser
import CurlTransport
import FoodCore
import Foundation
import MealStore

/// `foodmoment sync --server URL`: the diary's offline queue, pushed to and pulled from a FoodMoment server.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Push this diary's changes to a FoodMoment server and pull the changes made elsewhere.",
        discussion: """
        Every change to meals, water and weight logs (added, edited, deleted) and to the goals waits in the diary's \
        queue until a sync pushes it, in order, one request each with an Idempotency-Key. The first failure stops the \
        push (goals the server refuses are listed and passed over); the next sync resumes there, and nothing is applied \
        twice. Then the server's changes since the last sync are pulled.

        Conflicts: the later change (by its updated time) wins, and a deletion wins over any edit; each conflict is \
        listed. A diary syncs with one server: the first one that answered it.

        Examples:
          foodmoment serve token create --user me     (on the server: prints a token)
          foodmoment sync --server http://127.0.0.1:8080 --token fm_…
          FOODMOMENT_SYNC_TOKEN=fm_… foodmoment sync --server https://food.example.org --json
          foodmoment sync --status

        Automatic sync: once a sync with a token has worked, the token is kept beside the diary (<diary>.sync-token, \
        readable by you only), and every command that changes the diary (analyze --log, meal add/edit/delete, water, \
        weight, goals set, import) sends its changes as it ends, 5 s at most; when the server does not answer they stay \
        queued and one line says so. FOODMOMENT_AUTO_SYNC=0 or --forget-token turns it off.

        Exit status: 0 in sync; 1 stopped early (the server unreachable or refusing a change: run sync again to resume).
        """
    )

    @OptionGroup var store: StoreOptions
    @Option(help: ArgumentHelp("The FoodMoment server's URL (e.g. http://127.0.0.1:8080).", valueName: "url"))
    var server: String?
    @Option(help: ArgumentHelp("A personal token for the server (default $FOODMOMENT_SYNC_TOKEN).", valueName: "token"))
    var token: String?
    @Option(help: ArgumentHelp("Seconds to wait for each answer.", valueName: "s")) var timeout = 30.0
    @Flag(help: "Print the report as JSON.") var json = false
    @Flag(help: "Show the queue and the cursor; send nothing.") var status = false
    @Flag(help: "Forget the token kept for automatic sync (commands then leave their changes queued).") var forgetToken = false

    func validate() throws {
        if status || forgetToken { return }
        guard let server else { throw ValidationError("give --server URL (the FoodMoment server, e.g. http://127.0.0.1:8080)") }
        guard let u = URLComponents(string: server), ["http", "https"].contains(u.scheme ?? ""), !(u.host ?? "").isEmpty else {
            throw ValidationError("--server must be an http:// or https:// URL, e.g. http://127.0.0.1:8080")
        }
        guard timeout.isFinite, timeout >= 1, timeout <= 600 else { throw ValidationError("--timeout must be 1 to 600 seconds") }
        if resolvedToken.isEmpty {
            throw ValidationError("give --token (or FOODMOMENT_SYNC_TOKEN): `foodmoment serve token create --user NAME` on the server prints one")
        }
    }

    /// --token, else FOODMOMENT_SYNC_TOKEN, else the token kept by the last sync that worked.
    var resolvedToken: String {
        token ?? ProcessSettings.environment["FOODMOMENT_SYNC_TOKEN"] ?? AutoSync.token(forDiary: store.resolvedPath) ?? ""
    }

    func run() async throws {
        if forgetToken {
            print(AutoSync.forget(forDiary: store.resolvedPath) ? "forgot the sync token: commands leave their changes queued until `foodmoment sync --server … --token …`"
                  : "no sync token was kept for \(store.resolvedPath)")
            return
        }
        let s = try store.open()
        if status {
            let st = try storeCall { try s.syncState() }
            if json {
                let auto = AutoSync.token(forDiary: store.resolvedPath) != nil && ProcessSettings.autoSync
                print(try Output.json(StatusReport(server: st.server, pending: st.pending, pushed: st.pushed, cursor: st.pullCursor, automatic: auto)))
                return
            }
            print("server: \(st.server ?? "none yet (the first sync binds this diary to its server)")")
            print("queued changes: \(st.pending) · last pushed #\(st.pushed) · pulled up to #\(st.pullCursor)")
            let auto = AutoSync.token(forDiary: store.resolvedPath) != nil
            print("automatic sync: " + (!auto ? "off (no token kept: a sync with --token turns it on)"
                : ProcessSettings.autoSync ? "on (commands that change the diary send their changes as they end)" : "off (FOODMOMENT_AUTO_SYNC=0)"))
            return
        }
        guard let server else { throw Exit.usage }
        var client = SyncClient(store: s, transport: CurlHTTPTransport(userAgent: RefineOptions.userAgent), server: server, token: resolvedToken)
        client.timeout = .milliseconds(Int(timeout * 1000))
        let pending = try storeCall { try s.syncState().pending }
        let showProgress = Output.stderrIsTerminal && !json
        // One line on a terminal, rewritten in place (a first sync can push thousands of changes).
        let report = try await storeCall {
            try await client.run { step in
                guard showProgress else { return }
                let line: String
                switch step {
                case let .pushed(_, _, remaining): line = "↑ pushed \(pending - remaining) of \(pending)"
                case let .pulled(count): line = "↓ pulled \(count)"
                }
                FileHandle.standardError.write(Data("\r\u{1B}[2K\(line)".utf8))
            }
        }
        if showProgress { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
        if json {
            print(try Output.json(report))
        } else {
            let pushed = pending == 0 ? "nothing to push" : "pushed \(report.pushed) of \(pending) queued change\(pending == 1 ? "" : "s")"
            print(report.failure != nil && report.pulled == 0 ? pushed : pushed + " · pulled \(report.pulled) (\(report.pulledApplied) new here)")
            for c in report.conflicts {
                let what = c.outcome == .deleted ? "deleted on the \(c.side == "server" ? "server" : "this device") side: stays deleted"
                    : "changed later on the \(c.side == "server" ? "server" : "this device") side: that version kept"
                print("conflict: \(c.kind == .goals ? "goals" : "\(c.kind.rawValue) \(c.id.prefix(8))") — \(what)")
            }
            for n in report.notSynced { print("note: not synced: \(n) — kept on this device") }
            if report.complete { print("in sync with \(report.server)" + (report.pending > 0 ? " (\(report.pending) changes made meanwhile wait for the next sync)" : "")) }
        }
        if report.failure == nil, AutoSync.token(forDiary: store.resolvedPath) != resolvedToken {
            // The server took this token: later commands sync by themselves with it.
            do { try AutoSync.save(token: resolvedToken, forDiary: store.resolvedPath) } catch {
                Output.error("the token could not be kept for automatic sync (\(error)); run sync by hand")
            }
        }
        if let failure = report.failure {
            Output.error("sync stopped: \(failure) — \(report.pending) change\(report.pending == 1 ? "" : "s") still queued; run sync again to resume.")
            throw Exit.failed
        }
    }

    struct StatusReport: Encodable {
        var server: String?
        var pending: Int
        var pushed: Int64
        var cursor: Int64
        /// Whether commands that change the diary send their changes as they end.
        var automatic: Bool
    }
}
