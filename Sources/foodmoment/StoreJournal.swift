import Foundation
import Pipeline

extension AnalyzeCommand {
    /// The batch journal; the meal store lands in a later change.
    func openJournal() throws -> (any BatchJournal)? { nil }
    func journalPath() -> String { db ?? "(none)" }
}
