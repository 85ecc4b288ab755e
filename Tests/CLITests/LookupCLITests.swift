import FoodMomentTestSupport
import Foundation
import Testing

@Suite("look-ups from the terminal (the real binary)")
struct LookupCLITests {
    /// The help's own example: pizza tables count "pieces", people count "slices".
    @Test func pizzaBySlices() throws {
        let r = try foodmoment("nutrition", "pizza", "--portion", "2 slices", "--json")
        #expect(r.status == 0, "\(r.stderr)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let grams = try #require(doc["grams"] as? Double)
        #expect(grams > 100 && grams < 400, "2 slices of pizza = \(grams) g")
        #expect((doc["portion"] as? String)?.contains("piece") == true)
        // A unit the food has no portion for is refused with what it does have.
        let cups = try foodmoment("nutrition", "pizza", "--portion", "3 bowls")
        #expect(cups.status == 1 && cups.stderr.contains("its portions are:") && cups.stderr.contains("piece"), "\(cups.stderr)")
    }
}
