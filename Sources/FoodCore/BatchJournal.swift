public import Foundation

/// What a batch remembers between runs: the result of every photo it finished (keyed by content hash and the
/// settings that produced it) and, with `--log`, the meal it went into. `MealStore` is the one the executables use.
public protocol BatchJournal: Sendable {
    /// Stored results (JSON of `PhotoResult`) for the hashes that were finished with these settings.
    func finishedResults(hashes: [String], settings: String) throws -> [String: Data]
    /// Stores one finished photo; with `meal` also merges it into the diary, in the same transaction.
    /// Returns how the meal was logged (nil when `meal` is nil).
    func record(hash: String, path: String, settings: String, result: Data, meal: PhotoMeal?, replace: Bool) throws -> LoggedMeal?
}

/// A photo's contribution to the diary: what `analyze --log` hands the journal.
public struct PhotoMeal: Sendable, Equatable {
    public var photo: MealPhoto
    public var foods: [MealFood]
    public var analysis: String?
    /// EXIF OffsetTimeOriginal in seconds, when the photo had one (kept on the meal for showing local time).
    public var utcOffsetSeconds: Int?
    /// The title of a new meal when the rules should not derive it from the foods (an unrecognised photo); nil lets
    /// the diary title the meal from its foods.
    public var title: String?

    public init(photo: MealPhoto, foods: [MealFood], analysis: String?, utcOffsetSeconds: Int? = nil, title: String? = nil) {
        self.photo = photo; self.foods = foods; self.analysis = analysis; self.utcOffsetSeconds = utcOffsetSeconds
        self.title = title
    }
}

/// How a photo landed in the diary: `created`, `merged`, `duplicate`, `replaced` or `deleted` (the user deleted its
/// meal earlier; not logged again), the meal's id (empty for `deleted`), and the time the photo was logged at.
public struct LoggedMeal: Sendable, Equatable, Codable {
    public var outcome: MealOutcome
    public var mealID: String
    /// When the photo says it was taken, as logged.
    public var time: Date?
    /// Where `time` came from (a file time is never merged with other photos).
    public var timeSource: TimeSource?
    public init(outcome: MealOutcome, mealID: String, time: Date? = nil, timeSource: TimeSource? = nil) {
        self.outcome = outcome; self.mealID = mealID; self.time = time; self.timeSource = timeSource
    }
    enum CodingKeys: String, CodingKey { case outcome, time; case mealID = "meal_id", timeSource = "time_source" }
}
