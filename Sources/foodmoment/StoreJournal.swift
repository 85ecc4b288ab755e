import FoodCore
import Foundation
import MealStore
import Pipeline

/// The batch journal is the meal store: results keyed by photo hash + settings, and (with `--log`) the diary,
/// written in one transaction per photo.
struct StoreJournal: BatchJournal {
    let store: MealStore
    let policy: MergePolicy

    func finishedResults(hashes: [String], settings: String) throws -> [String: Data] {
        try store.journalEntries(hashes: hashes, settings: settings).mapValues(\.result)
    }

    func record(hash: String, path: String, settings: String, result: Data, meal: PhotoMealInput?, replace: Bool) throws -> LoggedMeal? {
        let photoMeal = meal.map { PhotoMeal(photo: $0.photo, foods: $0.foods, analysis: $0.analysis, utcOffsetSeconds: $0.utcOffsetSeconds) }
        return try store.record(hash: hash, path: path, settings: settings, result: result, meal: photoMeal,
                                policy: policy, replace: replace)
            .map { LoggedMeal(outcome: $0.kind.rawValue, mealID: $0.mealID) }
    }
}

extension AnalyzeCommand {
    var storePath: String { db ?? MealStore.defaultPath(dataDirectory: ResourceLocator.userDataDirectory()) }

    func openJournal() throws -> (any BatchJournal)? {
        do {
            let store = try MealStore(path: storePath)
            let policy = MergePolicy(windows: try store.mealWindows(), timeZone: .current)
            return StoreJournal(store: store, policy: policy)
        } catch {
            throw ValidationErrorMessage("cannot open the meal store \(storePath): \(error) (use --db PATH, or --no-journal to keep nothing)")
        }
    }

    func journalPath() -> String { storePath }

    /// After a `--log` run: achievements the new meals unlocked.
    func updateAchievements() -> [Achievement] {
        (try? MealStore(path: storePath).updateAchievements()) ?? []
    }
}
