import ArgumentParser
import FoodCore
import Foundation
import MealStore

/// Hidden: records synthetic photos into a meal store in a loop, printing `recorded N` after each commit.
/// The crash-safety tests start it, SIGKILL it mid-write and check the store; also a quick write benchmark.
struct StoreWriterDebugCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "debug-store-writer",
        abstract: "Record synthetic photos into a meal store (crash-safety tests and benchmarks).",
        shouldDisplay: false
    )
    @OptionGroup var store: StoreOptions
    @Option(help: "Number of synthetic photos (photo i is taken 20 minutes after photo i-1).") var count = 100
    @Option(help: "Foods per photo.") var foods = 3
    @Option(help: "Settings key for the journal.") var settings = "debug-v1"

    func run() async throws {
        let s = try store.open()
        let policy = MergePolicy(timeZone: TimeZone(identifier: "UTC")!)
        let base = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18
        let hashes = (0..<count).map { StoreWriterDebugCommand.hash($0) }
        let done = try storeCall { try s.journalEntries(hashes: hashes, settings: settings) }
        let start = ContinuousClock.now
        var written = 0
        for i in 0..<count where done[hashes[i]] == nil {
            let meal = StoreWriterDebugCommand.photoMeal(i, base: base, foods: foods)
            let result = Data("{\"photo\":\(i),\"foods\":\(foods)}".utf8)
            _ = try storeCall {
                try s.record(hash: hashes[i], path: meal.photo.path, settings: settings, result: result, meal: meal,
                             policy: policy, replace: false)
            }
            written += 1
            FileHandle.standardOutput.write(Data("recorded \(i)\n".utf8))
        }
        let d = ContinuousClock.now - start
        let secs = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        Output.note(String(format: "recorded %d photos in %.3f s (%.0f photos/s); %d meals in the store", written, secs,
                           secs > 0 ? Double(written) / secs : 0, try storeCall { try s.mealCount() }))
    }

    static func hash(_ i: Int) -> String { String(format: "%064x", i &* 2_654_435_761 &+ 1) }

    /// Photo `i`: taken 20 minutes after photo `i - 1`, with `foods` foods of known per-100 g values.
    static func photoMeal(_ i: Int, base: Date, foods: Int) -> PhotoMeal {
        let names = ["Rice", "Chicken curry", "Naan", "Salad", "Banana", "Yogurt"]
        let photo = MealPhoto(hash: hash(i), path: "/photos/synthetic-\(i).jpg", takenAt: base.addingTimeInterval(Double(i) * 1200),
                              timeSource: .exif)
        var list: [MealFood] = []
        for k in 0..<foods {
            let name: String = names[(i + k) % names.count]
            let grams = Double(50 + (i * 7 + k * 13) % 200)
            let per100 = Macros(kcal: Double(100 + k * 40), proteinG: Double(5 + k), carbsG: 20, fatG: 3, fiberG: 1)
            list.append(MealFood(label: name.lowercased(), name: name, confidence: 0.9,
                                 box: NormalizedBox(x: 0.1, y: 0.1, w: 0.5, h: 0.5), grams: grams, gramsSource: .boxArea,
                                 source: .model, foodId: "sr:\(1000 + k)", provenance: "synthetic", per100g: per100))
        }
        return PhotoMeal(photo: photo, foods: list, analysis: "synthetic photo \(i)")
    }
}
