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
            return try StoreJournal.open(path: storePath)
        } catch {
            throw ValidationErrorMessage("\(error)")
        }
    }

    func journalPath() -> String { storePath }
}
