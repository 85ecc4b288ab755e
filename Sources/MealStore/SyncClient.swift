public import FoodCore
import Foundation

/// `foodmoment sync`: pushes this diary's queued changes to a FoodMoment server in order, one request each with an
/// Idempotency-Key, and stops at the first failure (the next run resumes there); then pulls the server's changes since
/// the last pull, a page per transaction together with the cursor. Conflicts follow `DiaryRules.resolve` on both
/// sides and are listed in the report. The transport is the caller's (libcurl in the CLI).
public struct SyncClient: Sendable {
    public let store: MealStore
    public let transport: any HTTPTransport
    /// The server's base URL (`http://127.0.0.1:8080`), without `/api/v1`.
    public let server: String
    public let token: String
    public var pageSize = 200
    public var timeout: Duration = .seconds(30)

    public init(store: MealStore, transport: any HTTPTransport, server: String, token: String) {
        self.store = store
        self.transport = transport
        var s = server
        while s.hasSuffix("/") { s.removeLast() }
        self.server = s
        self.token = token
    }

    /// A change that did not go as sent: the server kept its newer entry, or the entry was deleted on one side.
    public struct Conflict: Sendable, Codable, Equatable {
        public var kind: SyncKind
        public var id: String
        /// `kept_newer` or `deleted`.
        public var outcome: SyncOutcome
        /// Where the conflict was resolved: `server` (a pushed change) or `local` (a pulled one).
        public var side: String
    }

    public struct Report: Sendable, Codable, Equatable {
        public var server: String
        public var pushed = 0
        public var pulled = 0
        /// Pulled changes that changed this diary (the rest were already here, often this diary's own changes).
        public var pulledApplied = 0
        public var conflicts: [Conflict] = []
        /// Changes still queued (non-zero after a failure).
        public var pending = 0
        public var complete = false
        /// Why the run stopped early, naming the change and what the server said.
        public var failure: String?
        /// Changes the server refused that do not stop the sync: goals a server of an earlier version does not know,
        /// or out of its range (set before goals had limits). They stay as they are on this device.
        public var notSynced: [String] = []

        enum CodingKeys: String, CodingKey {
            case server, pushed, pulled, conflicts, pending, complete, failure
            case pulledApplied = "pulled_applied", notSynced = "not_synced"
        }
    }

    public enum Step: Sendable {
        case pushed(SyncChange, SyncOutcome, remaining: Int)
        case pulled(count: Int)
    }

    /// Runs one sync. Never throws for the server's or network's sake: the report says where it stopped and why;
    /// throws only for the local diary (unreadable, read-only, bound to another server).
    public func run(progress: @Sendable (Step) -> Void = { _ in }) async throws -> Report {
        // Bound only once the server has answered, so a mistyped URL does not claim the diary.
        let device = try store.bindSyncServer(server, bind: false)
        let state = try store.syncState()
        var bound = state.server != nil
        func answered() throws {
            if !bound { try store.bindSyncServer(server); bound = true }
        }
        var report = Report(server: server)
        func stop(_ why: String) throws -> Report {
            report.failure = why
            report.pending = try store.syncState().pending
            return report
        }
        var remaining = state.pending
        var after = state.pushed
        let encoder = DiaryExport.encoder()
        push: while true {
            let page = try store.changes(after: after, limit: pageSize)
            for c in page.changes {
                let body = Array(try encoder.encode(c))
                let request = HTTPRequest(method: .post, url: server + "/api/v1/sync/push",
                                          headers: ["Authorization": "Bearer " + token, "Content-Type": "application/json",
                                                    "Idempotency-Key": "sync-\(device)-\(c.seq)"],
                                          body: body, totalTimeout: timeout)
                let result: SyncPushResult
                switch await call(request, SyncPushResult.self) {
                case .success(let r): result = r
                case .failure(let why, let status) where c.kind == .goals && (status == 400 || status == 422):
                    // Goals are one entry that the next change replaces; refused, they must not hold back every
                    // meal queued after them. Meals, water and weight keep the rule: the first failure stops.
                    try answered()
                    try store.markPushed(c.seq)
                    after = c.seq
                    remaining -= 1
                    report.notSynced.append("goals: \(why)")
                    continue
                case .failure(let why, _): return try stop("pushing \(c.kind.rawValue) \(c.id) (\(c.op.rawValue)): \(why)")
                }
                try answered()
                try store.markPushed(c.seq)
                after = c.seq
                report.pushed += 1
                remaining -= 1
                if result.outcome == .keptNewer || result.outcome == .deleted {
                    report.conflicts.append(Conflict(kind: c.kind, id: c.id, outcome: result.outcome, side: "server"))
                }
                progress(.pushed(c, result.outcome, remaining: max(0, remaining)))
            }
            if !page.more { break push }
        }
        var cursor = try store.syncState().pullCursor
        while true {
            let request = HTTPRequest(method: .get, url: server + "/api/v1/sync/changes?since=\(cursor)&limit=\(pageSize)&kinds=\(Self.kinds)",
                                      headers: ["Authorization": "Bearer " + token], totalTimeout: timeout, maxBodyBytes: 64 << 20)
            let page: SyncPage
            switch await call(request, SyncPage.self) {
            case .success(let p): page = p
            case .failure(let why, _): return try stop("pulling changes since \(cursor): \(why)")
            }
            try answered()
            let outcomes: [SyncOutcome]
            do { outcomes = try store.applyPulled(page) } catch let e as MealStoreError {
                if case .invalidValue = e {
                    return try stop("the server sent a change this diary refuses (\(e.description)); nothing of that page was applied")
                }
                throw e
            }
            for (c, o) in zip(page.changes, outcomes) {
                if o == .applied { report.pulledApplied += 1 }
                if o == .keptNewer || o == .deleted { report.conflicts.append(Conflict(kind: c.kind, id: c.id, outcome: o, side: "local")) }
            }
            report.pulled += page.changes.count
            progress(.pulled(count: report.pulled))
            cursor = page.next
            if !page.more || page.changes.isEmpty { break }
        }
        // Changes made here while this sync ran wait for the next one.
        report.pending = try store.syncState().pending
        report.complete = true
        return report
    }

    /// Every kind this client applies, asked of the feed (a server sends earlier clients only the kinds they know).
    static let kinds = SyncKind.allCases.map(\.rawValue).joined(separator: ",")

    /// A failure's status is nil when no HTTP answer came.
    enum CallResult<T> { case success(T), failure(String, status: Int?) }

    /// One request; any answer but a 2xx with the expected JSON is a failure described for the user.
    func call<T: Decodable>(_ request: HTTPRequest, _ type: T.Type) async -> CallResult<T> {
        let response: HTTPResponse
        do { response = try await transport.send(request) } catch {
            return .failure("\(error.description) (is the server running at \(server)?)", status: nil)
        }
        guard (200..<300).contains(response.status) else {
            let message: String
            if let e = try? JSONDecoder().decode(ServerError.self, from: Data(response.body)) {
                message = e.error.message
            } else {
                // Not the FoodMoment error shape: another server, a proxy's page. One line, not the page.
                let type = response.contentType.map { " (\($0))" } ?? ""
                message = "an answer that is not from a FoodMoment server\(type): is \(server) the FoodMoment server's URL?"
            }
            let hint = response.retryAfter.map { " (the server asks to retry after \($0) s)" } ?? ""
            return .failure("HTTP \(response.status): \(message)\(hint)", status: response.status)
        }
        do { return .success(try DiaryExport.decoder().decode(T.self, from: Data(response.body))) } catch {
            return .failure("HTTP \(response.status) with an answer that is not FoodMoment's sync JSON: is \(server) the FoodMoment server's URL?",
                            status: response.status)
        }
    }

    /// The server's error shape: `{"error": {"code": …, "message": …}}`.
    struct ServerError: Decodable {
        struct Body: Decodable { var message: String }
        var error: Body
    }
}
