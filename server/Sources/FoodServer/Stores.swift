import FoodCore
import FoodMoment
import Foundation
import MealStore

/// Users, personal tokens, refresh-token families, profiles and idempotency keys. `AccountStore` keeps them in
/// SQLite for one instance; `PostgresStore` in PostgreSQL for any number of instances.
public protocol Accounts: Sendable {
    func createToken(forUser name: String, now: Date) async throws -> (user: UserID, token: String)
    func session(_ user: UserID) async throws -> AccountStore.Session?
    func user(forToken token: String) async throws -> UserID?
    func isReachable() async -> Bool
    func appleUser(subject: String, now: Date) async throws -> (user: UserID, created: Bool)
    func createRefreshToken(for user: UserID, family: String?, lifetime: TimeInterval, now: Date) async throws -> String
    func rotateRefreshToken(_ token: String, lifetime: TimeInterval, now: Date) async throws -> AccountStore.RefreshOutcome
    func profile(_ user: UserID) async throws -> (name: String, createdAt: Date, apple: Bool, profile: AccountStore.Profile)?
    func setProfile(_ user: UserID, _ p: AccountStore.Profile, now: Date) async throws
    func beginIdempotent(_ user: UserID, key: String, fingerprint: String, now: Date) async throws -> AccountStore.IdempotencyStart
    func finishIdempotent(_ user: UserID, key: String, status: Int?, contentType: String?, body: [UInt8]) async throws
}

/// One user's diary, wherever its rows are kept; every change goes through `DiaryRules`, so both stores give the
/// same meals for the same requests.
public protocol Diary: Sendable {
    /// `photos`: the photo the server kept (`store_photo=true`) that the meal was seen in; one already in another meal
    /// is refused (`MealStoreError.photoInAnotherMeal`).
    func addMeal(time: Date, type: MealType, foods: [MealFood], title: String?, photos: [MealPhoto]) async throws -> MealRecord
    /// The meal holding the photo with this hash.
    func meal(photoHash: String) async throws -> MealRecord?
    func meals(from: Date, to: Date) async throws -> [MealRecord]
    /// The meal with exactly this id.
    func meal(id: String) async throws -> MealRecord?
    func edit(mealID: String, _ edits: [MealEdit]) async throws -> MealRecord
    func deleteMeal(id: String) async throws -> Bool
    func addWater(milliliters: Double, at time: Date?) async throws -> WaterLog
    func waterLogs(from: Date, to: Date) async throws -> [WaterLog]
    func goals() async throws -> Goals
    func setGoals(_ g: Goals) async throws
    func addWeight(kilograms: Double, at time: Date?) async throws -> WeightLog
    func weightBefore(_ time: Date) async throws -> WeightLog?
    func weightLogs(from: Date, to: Date) async throws -> [WeightLog]
    func loggedDays(timeZone: TimeZone) async throws -> Set<LocalDay>
    /// Evaluates the achievement rules (local days in UTC) and keeps the newly unlocked ones.
    func updateAchievements() async throws
    func achievements() async throws -> [Achievement]
    /// Applies a change a client pushed (`DiaryRules.resolve` decides); applied, it enters the feed for the user's
    /// other devices. The change has passed `DiaryRules.check`.
    func applySync(_ change: SyncChange) async throws -> SyncOutcome
    /// The user's change feed after `seq`: each entry's latest change, deletions as tombstones, in commit order.
    func changes(after seq: Int64, limit: Int, kinds: Set<SyncKind>) async throws -> SyncPage
}

extension Diary {
    /// The CLI's `stats` report, from the same reads on either store.
    func statsReport(range: StatsRange, day: LocalDay, today: LocalDay, timeZone: TimeZone, now: Date) async throws -> StatsReport {
        let (ps, _) = Stats.previousPeriod(range, containing: day)
        let (_, e) = Stats.period(range, containing: day)
        let from = ps.start(in: timeZone), to = e.adding(days: 1).start(in: timeZone)
        return Stats.report(range: range, day: day, today: today, meals: try await meals(from: from, to: to),
                            water: try await waterLogs(from: from, to: to), loggedDays: try await loggedDays(timeZone: timeZone),
                            goals: try await goals(), timeZone: timeZone, now: now)
    }
}

/// Where the server keeps everything but photos: accounts and each user's diary.
public protocol ServerStore: Accounts {
    func diary(for user: UserID) async throws -> any Diary
    /// Deletes the user, their tokens, profile, idempotency records and diary.
    func deleteUser(_ user: UserID) async throws
}

/// One machine: accounts in `DATA/accounts.sqlite`, each user's diary a MealStore of its own
/// (`DATA/users/<id>/meals.sqlite`), so one user's rows cannot reach another's whatever a query asks.
public final class LocalStore: ServerStore {
    let accounts: AccountStore
    let stores: UserStores

    public init(dataDirectory: String) throws {
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        accounts = try AccountStore(path: dataDirectory + "/accounts.sqlite")
        stores = UserStores(dataDirectory: dataDirectory)
    }

    public func diary(for user: UserID) async throws -> any Diary { SQLiteDiary(store: try stores.store(for: user)) }

    public func deleteUser(_ user: UserID) async throws {
        try accounts.deleteUser(user)
        try stores.remove(user)
    }

    public func createToken(forUser name: String, now: Date) async throws -> (user: UserID, token: String) {
        try accounts.createToken(forUser: name, now: now)
    }
    public func session(_ user: UserID) async throws -> AccountStore.Session? { try accounts.session(user) }
    public func user(forToken token: String) async throws -> UserID? { try accounts.user(forToken: token) }
    public func isReachable() async -> Bool { accounts.isReachable() }
    public func appleUser(subject: String, now: Date) async throws -> (user: UserID, created: Bool) {
        try accounts.appleUser(subject: subject, now: now)
    }
    public func createRefreshToken(for user: UserID, family: String?, lifetime: TimeInterval, now: Date) async throws -> String {
        try accounts.createRefreshToken(for: user, family: family, lifetime: lifetime, now: now)
    }
    public func rotateRefreshToken(_ token: String, lifetime: TimeInterval, now: Date) async throws -> AccountStore.RefreshOutcome {
        try accounts.rotateRefreshToken(token, lifetime: lifetime, now: now)
    }
    public func profile(_ user: UserID) async throws -> (name: String, createdAt: Date, apple: Bool, profile: AccountStore.Profile)? {
        try accounts.profile(user)
    }
    public func setProfile(_ user: UserID, _ p: AccountStore.Profile, now: Date) async throws { try accounts.setProfile(user, p, now: now) }
    public func beginIdempotent(_ user: UserID, key: String, fingerprint: String, now: Date) async throws -> AccountStore.IdempotencyStart {
        try accounts.beginIdempotent(user, key: key, fingerprint: fingerprint, now: now)
    }
    public func finishIdempotent(_ user: UserID, key: String, status: Int?, contentType: String?, body: [UInt8]) async throws {
        try accounts.finishIdempotent(user, key: key, status: status, contentType: contentType, body: body)
    }
}

/// A MealStore as a `Diary`.
struct SQLiteDiary: Diary {
    let store: MealStore

    func addMeal(time: Date, type: MealType, foods: [MealFood], title: String?, photos: [MealPhoto]) async throws -> MealRecord {
        try store.addMeal(time: time, type: type, foods: foods, title: title, photos: photos)
    }
    func meal(photoHash: String) async throws -> MealRecord? { try store.meal(photoHash: photoHash) }
    func meals(from: Date, to: Date) async throws -> [MealRecord] { try store.meals(from: from, to: to) }
    func meal(id: String) async throws -> MealRecord? { try store.meal(id: id).flatMap { $0.id == id ? $0 : nil } }
    func edit(mealID: String, _ edits: [MealEdit]) async throws -> MealRecord { try store.edit(mealID: mealID, edits) }
    func deleteMeal(id: String) async throws -> Bool { try store.deleteMeal(id: id) }
    func addWater(milliliters: Double, at time: Date?) async throws -> WaterLog { try store.addWater(milliliters: milliliters, at: time) }
    func waterLogs(from: Date, to: Date) async throws -> [WaterLog] { try store.waterLogs(from: from, to: to) }
    func goals() async throws -> Goals { try store.goals() }
    func setGoals(_ g: Goals) async throws { try store.setGoals(g) }
    func addWeight(kilograms: Double, at time: Date?) async throws -> WeightLog { try store.addWeight(kilograms: kilograms, at: time) }
    func weightBefore(_ time: Date) async throws -> WeightLog? { try store.weightBefore(time) }
    func weightLogs(from: Date, to: Date) async throws -> [WeightLog] { try store.weightLogs(from: from, to: to) }
    func loggedDays(timeZone: TimeZone) async throws -> Set<LocalDay> { try store.loggedDays(timeZone: timeZone) }
    func updateAchievements() async throws { try store.updateAchievements() }
    func achievements() async throws -> [Achievement] { try store.achievements() }
    func applySync(_ change: SyncChange) async throws -> SyncOutcome { try store.apply(change) }
    func changes(after seq: Int64, limit: Int, kinds: Set<SyncKind>) async throws -> SyncPage {
        try store.changes(after: seq, limit: limit, kinds: kinds)
    }
}

/// Photos a user asked to keep (`store_photo=true`): files under `DATA/users/<id>/photos` with either store (on many
/// instances, DATA is a shared volume), removed with the account.
struct UserFolders: Sendable {
    let directory: String

    init(dataDirectory: String) { directory = dataDirectory + "/users" }

    func folder(_ user: UserID) -> String { directory + "/" + user.rawValue }

    /// The photo `store_photo=true` kept under this image id (`photos/<id>.<ext>`, relative to the user's folder).
    func storedPhoto(_ imageID: String, for user: UserID) -> String? {
        guard imageID.count == 64, imageID.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder(user) + "/photos")) ?? []
        return names.sorted().first { $0.hasPrefix(imageID + ".") }.map { "photos/" + $0 }
    }

    /// The user's taught foods (corrections of meals with a kept photo), in their folder: removed with the account.
    func personalFoods(_ user: UserID) -> PersonalFoods { PersonalFoods(directory: folder(user)) }

    /// A kept photo's bytes and file extension, for its owner only (another user's id finds nothing).
    func photo(_ imageID: String, for user: UserID) -> (bytes: Data, ext: String)? {
        guard let relative = storedPhoto(imageID, for: user),
              let data = FileManager.default.contents(atPath: folder(user) + "/" + relative) else { return nil }
        return (data, (relative as NSString).pathExtension.lowercased())
    }

    func savePhoto(_ bytes: [UInt8], named name: String, for user: UserID) throws {
        let photos = folder(user) + "/photos"
        try FileManager.default.createDirectory(atPath: photos, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: photos + "/" + name), options: .atomic)
    }

    func remove(_ user: UserID) throws {
        if FileManager.default.fileExists(atPath: folder(user)) { try FileManager.default.removeItem(atPath: folder(user)) }
    }
}
