@testable import FoodServer
import Foundation
import MealStore
import Testing

@Suite("SQLite diaries kept open")
struct UserStoresTests {
    /// With a thousand users each holding an open SQLite pool the server's memory grew with every user seen; only the
    /// most recently used stay open, and a closed one opens again with its rows.
    @Test func onlyTheMostRecentlyUsedDiariesStayOpen() throws {
        let dir = NSTemporaryDirectory() + "foodmoment-userstores-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let stores = UserStores(dataDirectory: dir, capacity: 2)
        let users = (1...3).map { UserID(rawValue: "u\($0)") }
        for (i, u) in users.enumerated() { try stores.store(for: u).addWater(milliliters: Double(100 * (i + 1))) }
        #expect(stores.openCount == 2)
        let first = try stores.store(for: users[0]).waterLogs(from: .distantPast, to: .distantFuture)
        #expect(first.map(\.milliliters) == [100], "the closed diary opens again with its row")
        #expect(stores.openCount == 2)
        #expect(try stores.store(for: users[2]).waterLogs(from: .distantPast, to: .distantFuture).map(\.milliliters) == [300])
    }
}
