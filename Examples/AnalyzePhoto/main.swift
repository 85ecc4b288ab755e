import FoodMoment
import Foundation

// Analyse the photos named on the command line with the bundled models and nutrition tables (found beside the
// executable, or through FOODMOMENT_MODELS and FOODMOMENT_NUTRITION_DB of the environment this program hands the
// library): foods, grams and kcal.
let paths = Array(CommandLine.arguments.dropFirst())
guard !paths.isEmpty else {
    FileHandle.standardError.write(Data("usage: analyze-photo PHOTO...\n".utf8))
    exit(2)
}
let analyzer = try MealAnalyzer.load(environment: ProcessInfo.processInfo.environment)
var failed = false
for path in paths {
    let result = analyzer.analyze(path: path)
    if let error = result.error {
        print("\(path): \(error.message)")
        failed = true
        continue
    }
    print(path)
    for item in result.foods ?? [] {
        let kcal = item.hasNutrition ? String(format: "%.0f kcal", item.nutrients.kcal) : "no nutrition data"
        print("  \(item.emoji) \(item.name)  \(Int(item.grams)) g  \(kcal)")
    }
    if let totals = result.totals { print(String(format: "  total %.0f kcal", totals.kcal)) }
}
exit(failed ? 1 : 0)
