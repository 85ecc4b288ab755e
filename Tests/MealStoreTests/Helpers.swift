import FoodCore
import FoodMomentTestSupport
import Foundation
import MealStore

let berlin = TimeZone(identifier: "Europe/Berlin")!
let fixedNow = Date(timeIntervalSince1970: 1_795_400_000)

/// A fresh store in its own temp folder (removed by `cleanup`).
struct TempStore {
    let dir: String
    let store: MealStore
    init(timeZone: TimeZone = berlin) throws {
        dir = TestPaths.makeTempDirectory("mealstore")
        store = try MealStore(path: dir + "/sub/meals.sqlite", now: { fixedNow }, timeZone: timeZone)
    }
    func cleanup() { try? FileManager.default.removeItem(atPath: dir) }
}

/// `2026-11-22` at `HH:MM` local time in `zone`.
func at(_ day: String, _ hhmm: String, _ zone: TimeZone = berlin) -> Date {
    let p = hhmm.split(separator: ":").map { Int($0)! }
    return LocalDay(day)!.start(in: zone).addingTimeInterval(TimeInterval(p[0] * 3600 + p[1] * 60))
}

/// A food whose nutrients are per100 × grams / 100.
func food(_ name: String, grams: Double = 100, kcal: Double, protein: Double = 0, carbs: Double = 0, fat: Double = 0,
          fiber: Double = 0) -> MealFood {
    MealFood(label: name.lowercased().replacingOccurrences(of: " ", with: "_"), name: name, emoji: "🍽️", confidence: 0.8,
             box: NormalizedBox(x: 0.1, y: 0.2, w: 0.3, h: 0.4), grams: grams, gramsSource: .boxArea, source: .model,
             foodId: "sr:1", provenance: "test", per100g: Macros(kcal: kcal, proteinG: protein, carbsG: carbs, fatG: fat, fiberG: fiber))
}

func photoMeal(_ hash: String, _ time: Date, _ foods: [MealFood], analysis: String? = nil) -> PhotoMeal {
    PhotoMeal(photo: MealPhoto(hash: hash, path: "/photos/\(hash).jpg", takenAt: time, timeSource: .exif), foods: foods,
              analysis: analysis)
}

extension MealStore {
    /// Records one photo's meal with the default policy in Berlin.
    @discardableResult
    func log(_ m: PhotoMeal, replace: Bool = false, gap: TimeInterval = 45 * 60) throws -> LoggedMeal {
        try record(hash: m.photo.hash, path: m.photo.path, settings: "s1", result: Data("{}".utf8), meal: m,
                   policy: MergePolicy(gap: gap, timeZone: berlin), replace: replace)!
    }
}
