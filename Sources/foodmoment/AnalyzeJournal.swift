import FoodCore
import Foundation
import BatchStore
import MealStore
import Pipeline

extension AnalyzeCommand {
    var storePath: String { db ?? MealStore.defaultPath(dataDirectory: ResourceLocator.userDataDirectory()) }

    func openJournal() throws -> (any BatchJournal)? {
        do {
            return try StoreJournal.open(path: storePath)
        } catch {
            throw ValidationErrorMessage("\(error)")
        }
    }

    func journalPath() -> String { storePath }

    /// After a `--log` run: achievements the new meals unlocked.
    func updateAchievements() -> [Achievement] {
        (try? MealStore(path: storePath).updateAchievements()) ?? []
    }
}
