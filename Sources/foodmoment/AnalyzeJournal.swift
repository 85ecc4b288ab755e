import FoodCore
import Foundation
import MealStore
import FoodMoment
import FoodRecognition
import FoodTraining

extension AnalyzeCommand {
    var storePath: String { db ?? MealStore.defaultPath(dataDirectory: ProcessSettings.userDataDirectory) }

    func openJournal() throws -> MealStore.Journal {
        do {
            let store = try MealStore(path: storePath, timeZone: .current)
            var policy = try store.journal().policy
            policy.merge = !noMerge
            return try store.journal(policy: policy)
        } catch {
            throw ValidationErrorMessage("\(error)")
        }
    }

    func journalPath() -> String { storePath }
}
