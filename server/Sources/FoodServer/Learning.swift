import FoodCore
import FoodMoment
import Foundation
import Hummingbird
import FoodVision
import Logging

/// `/user/learning`: the foods a user taught by correcting meals that kept their photo (`PUT /meals/{id}`), and the
/// opt-out. Kept in the user's own folder (`PersonalFoods`), matched only against that user's photos, removed with
/// the account.
struct LearningRoutes: Sendable {
    let folders: UserFolders
    let logger: Logger

    /// A store that cannot be read: what the user can do about it (the path stays in the server's log).
    static let unreadable = APIError(.conflict, code: "taught_foods_unreadable",
                                     "your taught foods cannot be read, so nothing was changed: DELETE /api/v1/user/learning/foods starts them afresh")

    struct Body: Codable {
        struct Food: Codable { var label: String; var examples: Int }
        var fromCorrections: Bool
        var foods: [Food]?
        enum CodingKeys: String, CodingKey { case fromCorrections = "from_corrections", foods }
    }

    func body(_ user: UserID) throws -> Response {
        let personal = folders.personalFoods(user)
        do {
            let m = try personal.matcher()
            let foods = m.prototypes.map { Body.Food(label: $0.label, examples: $0.examples?.count ?? $0.count) }
            return try MealRoutes.json(Body(fromCorrections: try personal.learnsFromCorrections(), foods: foods))
        } catch {
            logger.warning("taught foods unreadable", metadata: ["path": "\(personal.directory)", "error": "\(error)"])
            throw Self.unreadable
        }
    }

    @Sendable func get(_ request: Request, context: APIContext) async throws -> Response {
        try body(try MealRoutes.user(context))
    }

    /// `{"from_corrections": false}` stops corrections from teaching; `true` resumes.
    @Sendable func update(_ request: Request, context: APIContext) async throws -> Response {
        let user = try MealRoutes.user(context)
        let change = try await MealRoutes.body(Body.self, of: request, limit: 4 << 10, example: #"{"from_corrections": false}"#)
        do { try folders.personalFoods(user).setLearnsFromCorrections(change.fromCorrections) } catch {
            logger.error("cannot save the learning setting", metadata: ["error": "\(error)"])
            throw APIError(.serviceUnavailable, code: "storage_unavailable", "the setting could not be saved; try again")
        }
        return try body(user)
    }

    /// Forgets one taught food (404 when it was not taught).
    @Sendable func forget(_ request: Request, context: APIContext) async throws -> Response {
        let user = try MealRoutes.user(context)
        let label = context.parameters.get("label") ?? ""
        let forgotten: Bool
        do { forgotten = try folders.personalFoods(user).forget(label) } catch {
            throw Self.unreadable
        }
        guard forgotten else { throw APIError.notFound("you have taught no food \(label) (GET /api/v1/user/learning lists them)") }
        return Response(status: .noContent)
    }

    /// Forgets every taught food — also the way out of a store that cannot be read.
    @Sendable func forgetAll(_ request: Request, context: APIContext) async throws -> Response {
        let path = folders.personalFoods(try MealRoutes.user(context)).matcherPath
        if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
        return Response(status: .noContent)
    }
}

/// Each user's taught foods as last read, so analyze does not parse the file on every photo: re-read when the file's
/// modification time or size changes (a correction or a forget rewrites it atomically), at most `capacity` users kept.
final class TaughtFoodsCache: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [UserID: (stamp: String, matcher: PrototypeMatcher?)] = [:]
    private let capacity: Int

    init(capacity: Int = 256) { self.capacity = capacity }

    func matcher(for user: UserID, in folders: UserFolders) throws(PersonalFoodsError) -> PrototypeMatcher? {
        let personal = folders.personalFoods(user)
        let attributes = try? FileManager.default.attributesOfItem(atPath: personal.matcherPath)
        let stamp = attributes.map { "\(($0[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0)-\($0[.size] ?? 0)" } ?? "none"
        if let hit = lock.withLock({ entries[user] }), hit.stamp == stamp { return hit.matcher }
        let matcher = try personal.matcherIfAny()
        lock.withLock {
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[user] = (stamp, matcher)
        }
        return matcher
    }
}
