import FoodCore
public import Foundation
public import MealStore
public import FoodMoment

/// The batch journal is the meal store: results keyed by photo hash + settings, and (with `--log`) the diary,
/// written in one transaction per photo.
public struct StoreJournal: BatchJournal {
    public let store: MealStore
    public let policy: MergePolicy

    public init(store: MealStore, policy: MergePolicy) { self.store = store; self.policy = policy }

    /// Opens (creating) the store at `path` with the user's meal windows from the store.
    public static func open(path: String, timeZone: TimeZone = .current) throws -> StoreJournal {
        let store = try MealStore(path: path, timeZone: timeZone)
        return StoreJournal(store: store, policy: MergePolicy(windows: try store.mealWindows(), timeZone: timeZone))
    }

    public func finishedResults(hashes: [String], settings: String) throws -> [String: Data] {
        try store.journalEntries(hashes: hashes, settings: settings).mapValues(\.result)
    }

    public func record(hash: String, path: String, settings: String, result: Data, meal: PhotoMealInput?, replace: Bool) throws -> LoggedMeal? {
        let photoMeal = meal.map { PhotoMeal(photo: $0.photo, foods: $0.foods, analysis: $0.analysis, utcOffsetSeconds: $0.utcOffsetSeconds,
                                        title: $0.title) }
        return try store.record(hash: hash, path: path, settings: settings, result: result, meal: photoMeal,
                                policy: policy, replace: replace)
            .map { LoggedMeal(outcome: $0.kind, mealID: $0.mealID) }
    }
}

