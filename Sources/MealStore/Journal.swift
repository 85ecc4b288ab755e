public import FoodCore
public import Foundation

/// The meal store is the batch journal: results keyed by photo hash and settings, and (with `--log`) the diary, written
/// in one transaction per photo. With the store's own meal windows and merging on; `journal(policy:)` for others.
extension MealStore: BatchJournal {
    public func finishedResults(hashes: [String], settings: String) throws -> [String: Data] {
        try journalEntries(hashes: hashes, settings: settings).mapValues(\.result)
    }

    public func record(hash: String, path: String, settings: String, result: Data, meal: PhotoMeal?, replace: Bool) throws -> LoggedMeal? {
        try journal().record(hash: hash, path: path, settings: settings, result: result, meal: meal, replace: replace)
    }

    /// This store as a journal that merges photos by `policy` (default: the store's meal windows, in its time zone).
    public func journal(policy: MergePolicy? = nil) throws -> Journal {
        Journal(store: self, policy: try policy ?? MergePolicy(windows: mealWindows(), timeZone: timeZone))
    }

    /// The store with a merge policy fixed for a whole batch (`analyze --no-merge` turns merging off).
    public struct Journal: BatchJournal {
        public let store: MealStore
        public let policy: MergePolicy

        public func finishedResults(hashes: [String], settings: String) throws -> [String: Data] {
            try store.finishedResults(hashes: hashes, settings: settings)
        }

        public func record(hash: String, path: String, settings: String, result: Data, meal: PhotoMeal?, replace: Bool) throws -> LoggedMeal? {
            try store.record(hash: hash, path: path, settings: settings, result: result, meal: meal, policy: policy, replace: replace)
        }
    }
}
