import FoodCore
import Foundation
import Hummingbird
import MealStore

/// `POST /api/v1/sync/push` (one change of a client's queue, with an Idempotency-Key) and
/// `GET /api/v1/sync/changes?since=&limit=&kinds=` (the user's change feed): what `foodmoment sync` talks to. The conflict
/// rule is `DiaryRules.resolve`, the same in both stores and on the client.
struct SyncRoutes: Sendable {
    let store: any ServerStore

    static let example = #"{"kind": "water", "id": "6F1C…", "op": "upsert", "changed_at": "2026-11-26T08:00:00.000Z", "#
        + #""water": {"id": "6F1C…", "time": "2026-11-26T08:00:00.000Z", "milliliters": 250}, "seq": 1}"#

    @Sendable func push(_ request: Request, context: APIContext) async throws -> Response {
        let user = try MealRoutes.user(context)
        let change = try await MealRoutes.body(SyncChange.self, of: request, limit: 1 << 20, example: Self.example)
        do {
            try DiaryRules.check(change)
        } catch let error as MealStoreError {
            let what = change.kind == .goals ? "goals" : "\(change.kind.rawValue) \(change.id)"
            throw APIError(.unprocessableContent, code: "invalid_change", "\(what): \(error.description)")
        }
        let outcome = try await store.diary(for: user).applySync(change)
        return try MealRoutes.json(SyncPushResult(kind: change.kind, id: change.id, outcome: outcome))
    }

    @Sendable func changes(_ request: Request, context: APIContext) async throws -> Response {
        let user = try MealRoutes.user(context)
        let q = request.uri.queryParameters
        var since: Int64 = 0
        if let text = q.get("since") {
            guard let v = Int64(text), v >= 0 else {
                throw APIError.badRequest("invalid_since", "since must be a whole number ≥ 0: 0 for everything, else the `next` of the last page")
            }
            since = v
        }
        var limit = 200
        if let text = q.get("limit") {
            guard let v = Int(text), (1...1000).contains(v) else {
                throw APIError.badRequest("invalid_limit", "limit must be a whole number from 1 to 1000 (default 200)")
            }
            limit = v
        }
        var kinds = SyncKind.feedDefault
        if let text = q.get("kinds") {
            let names = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            let parsed = names.compactMap(SyncKind.init(rawValue:))
            guard !names.isEmpty, parsed.count == names.count else {
                let known = SyncKind.allCases.map(\.rawValue).joined(separator: ",")
                throw APIError.badRequest("invalid_kinds", "kinds must be a comma-separated list of \(known) (default meal,water,weight), not \(text)")
            }
            kinds = Set(parsed)
        }
        return try MealRoutes.json(try await store.diary(for: user).changes(after: since, limit: limit, kinds: kinds))
    }
}
