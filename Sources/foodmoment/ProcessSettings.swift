import FoodMoment
import FoodVision
import Foundation
import Nutrition

/// The CLI's environment, read here and nowhere else: the executable turns `FOODMOMENT_*`, `XDG_*` and `HOME` into
/// the folders and options it passes to the library, which reads no environment of its own.
enum ProcessSettings {
    static let environment = ProcessInfo.processInfo.environment

    /// `models/` beside the executable, or `FOODMOMENT_MODELS`.
    static var modelsDirectory: String { ResourceLocator.modelsDirectory(environment: environment) }
    /// `FOODMOMENT_HOME`, else `$XDG_DATA_HOME/foodmoment`, else `~/.local/share/foodmoment`.
    static var userDataDirectory: String { ResourceLocator.userDataDirectory(environment: environment) }

    /// `FOODMOMENT_AUTO_SYNC=0` (or `off`, `false`): commands leave their changes queued for `foodmoment sync`.
    static var autoSync: Bool { !["0", "off", "false", "no"].contains((environment["FOODMOMENT_AUTO_SYNC"] ?? "").lowercased()) }
    /// `nutrition-db/` beside the executable, or `FOODMOMENT_NUTRITION_DB`.
    static var nutritionDirectory: URL { NutritionDatabase.defaultDirectory(environment: environment) }
    /// Where the packed tables are unpacked (`XDG_CACHE_HOME`, `~/.cache`).
    static var nutritionCache: URL { NutritionDatabase.defaultCacheDirectory(environment: environment) }

    /// The tables in `directory` (default: `nutritionDirectory`), unpacked into this user's cache.
    static func loadNutrition(_ directory: URL? = nil) throws(NutritionError) -> NutritionDatabase {
        try NutritionDatabase.load(directory: directory ?? nutritionDirectory, cacheDirectory: nutritionCache)
    }

    /// How the networks run: `FOODMOMENT_PRECISION`, `FOODMOMENT_GEMM_KERNEL`, `FOODMOMENT_BAND_FLOATS`, with a
    /// command's `--precision` winning over the variable.
    static func inference(precision: InferencePrecision? = nil) -> InferenceOptions {
        var options = InferenceOptions(environment: environment)
        if let precision { options.precision = precision }
        return options
    }
}
