import FoodCore
import Foundation
import BatchStore
import MealStore
import FoodMoment
import FoodRecognition
import FoodTraining

extension AnalyzeCommand {
    var storePath: String { db ?? MealStore.defaultPath(dataDirectory: ResourceLocator.userDataDirectory()) }

    func openJournal() throws -> StoreJournal {
        do {
            let journal = try StoreJournal.open(path: storePath)
            var policy = journal.policy
            policy.merge = !noMerge
            return StoreJournal(store: journal.store, policy: policy)
        } catch {
            throw ValidationErrorMessage("\(error)")
        }
    }

    func journalPath() -> String { storePath }
}
