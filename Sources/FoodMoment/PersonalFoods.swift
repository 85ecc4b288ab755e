import Foundation
public import FoodCore
import ImageCodecs
public import FoodVision

/// Why a user's taught foods could not be read or changed.
public enum PersonalFoodsError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file exists but is not a store this version reads: it is left as it is, for the user to look at.
    case damaged(path: String, reason: String)
    case io(path: String, reason: String)
    /// A photo of a corrected meal that cannot be used (moved, deleted, unreadable).
    case photo(path: String, reason: String)

    public var description: String {
        switch self {
        case .damaged(let path, let reason):
            "your taught foods in \(path) cannot be read (\(reason)): move the file away to start afresh, or restore it"
        case .io(let path, let reason): "cannot write \(path): \(reason)"
        case .photo(let path, let reason): "the meal's photo \(path) cannot be used: \(reason)"
        }
    }
}

/// One user's taught foods — `learn`, and the corrections of meals with a photo — in their data folder:
/// `learned-foods.json` (a `PrototypeMatcher`) and the opt-out, `learning.json` (`{"fromCorrections": false}`).
/// The CLI's folder is the user data folder; the server gives each account its own.
public struct PersonalFoods: Sendable {
    public let directory: String
    public var matcherPath: String { directory + "/learned-foods.json" }
    public var settingsPath: String { directory + "/learning.json" }

    public init(directory: String) { self.directory = directory }

    struct Settings: Codable { var fromCorrections: Bool }

    /// The taught foods; an empty matcher when nothing was taught yet.
    public func matcher(dimension: Int = EfficientNetLite0.embeddingSize) throws(PersonalFoodsError) -> PrototypeMatcher {
        guard FileManager.default.fileExists(atPath: matcherPath) else { return PrototypeMatcher(dimension: dimension) }
        let m: PrototypeMatcher
        do { m = try PrototypeMatcher.load(from: matcherPath) } catch { throw .damaged(path: matcherPath, reason: error.description) }
        guard m.dimension == dimension else {
            throw .damaged(path: matcherPath, reason: "its examples have \(m.dimension) values, this model's have \(dimension)")
        }
        return m
    }

    /// The taught foods for analysis: nil when there are none (the recogniser's own matcher then applies).
    public func matcherIfAny(dimension: Int = EfficientNetLite0.embeddingSize) throws(PersonalFoodsError) -> PrototypeMatcher? {
        let m = try matcher(dimension: dimension)
        return m.labels.isEmpty ? nil : m
    }

    public func save(_ matcher: PrototypeMatcher) throws(PersonalFoodsError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try matcher.save(to: matcherPath)
        } catch let error as FoodVisionError {
            throw .io(path: matcherPath, reason: error.description)
        } catch {
            throw .io(path: directory, reason: error.localizedDescription)
        }
    }

    /// Whether a correction teaches (on unless the user turned it off).
    public func learnsFromCorrections() throws(PersonalFoodsError) -> Bool {
        guard let data = FileManager.default.contents(atPath: settingsPath) else { return true }
        do { return try JSONDecoder().decode(Settings.self, from: data).fromCorrections } catch {
            throw .damaged(path: settingsPath, reason: "not the {\"fromCorrections\": true|false} this version writes")
        }
    }

    public func setLearnsFromCorrections(_ on: Bool) throws(PersonalFoodsError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try JSONEncoder().encode(Settings(fromCorrections: on)).write(to: URL(fileURLWithPath: settingsPath), options: .atomic)
        } catch {
            throw .io(path: settingsPath, reason: error.localizedDescription)
        }
    }

    /// Adds examples to `label` and saves; the store as saved.
    @discardableResult
    public func add(label: String, examples: [[Float]], grams: Double? = nil) throws(PersonalFoodsError) -> PrototypeMatcher {
        var m = try matcher(dimension: examples.first?.count ?? EfficientNetLite0.embeddingSize)
        do { try m.add(label: label, examples: examples, grams: grams) } catch { throw .io(path: matcherPath, reason: error.description) }
        try save(m)
        return m
    }

    /// Forgets `label`; false when it was not taught.
    public func forget(_ label: String) throws(PersonalFoodsError) -> Bool {
        var m = try matcher()
        guard m.labels.contains(label) else { return false }
        m.remove(label: label)
        try save(m)
        return true
    }
}

/// A correction of a logged meal: food `index` of `meal` is now `food`. When the meal has a photo and the user has not
/// turned learning off, the photo (the food's box in it when the photo shows other foods too) becomes a personal
/// example of the new label, so the next photo of the same home dish is named right.
public struct Correction: Sendable {
    public enum Outcome: Sendable, Equatable {
        /// Taught: the label and the examples it now holds.
        case taught(label: String, examples: Int)
        /// Nothing taught, and why (no photo, learning off, the same label).
        case notTaught(String)
    }

    public var meal: MealRecord
    public var index: Int
    public var food: MealFood

    public init(meal: MealRecord, index: Int, food: MealFood) {
        self.meal = meal; self.index = index; self.food = food
    }

    /// The photo the corrected food was seen in: the one its hash names, else the meal's only photo.
    public var photo: MealPhoto? {
        guard meal.foods.indices.contains(index) else { return nil }
        if let hash = meal.foods[index].photoHash, let p = meal.photos.first(where: { $0.hash == hash }) { return p }
        return meal.photos.count == 1 ? meal.photos[0] : nil
    }

    /// Why this correction teaches nothing, or nil; reads only the opt-out.
    func skipReason(_ store: PersonalFoods) throws(PersonalFoodsError) -> Outcome? {
        guard meal.foods.indices.contains(index) else { return .notTaught("no food \(index + 1) in the meal") }
        guard meal.foods[index].label != food.label else { return .notTaught("the food keeps its label") }
        guard photo != nil else { return .notTaught("the meal has no photo") }
        guard try store.learnsFromCorrections() else { return .notTaught("learning from corrections is off") }
        return nil
    }

    /// Checks, before the diary changes, that the store can be read and whether this correction will teach.
    public func plan(_ store: PersonalFoods) throws(PersonalFoodsError) -> Outcome? {
        if let skip = try skipReason(store) { return skip }
        _ = try store.matcher()
        return nil
    }

    /// Teaches the corrected label from the photo (call after the diary edit succeeded; `plan` said nil). The store is
    /// read once more, by `add`, which reports it damaged as `plan` would.
    /// `photoDirectory`: where a relative photo path starts (a server keeps `photos/<id>.jpg` in the user's folder).
    public func teach(_ store: PersonalFoods, analyzer: MealAnalyzer, photoDirectory: String? = nil) throws(PersonalFoodsError) -> Outcome {
        if let skip = try skipReason(store) { return skip }
        guard let photo else { return .notTaught("the meal has no photo") }
        let path = photo.path.hasPrefix("/") ? photo.path : photoDirectory.map { $0 + "/" + photo.path } ?? photo.path
        let image: RGBImage
        switch analyzer.decoder.decode(path: path) {
        case .success(let (decoded, _)): image = decoded.image
        case .failure(let error): throw .photo(path: path, reason: error.message)
        }
        // The whole photo when the food is the only one seen in it: `analyze` matches taught foods against the whole
        // photo, and a box around part of a lone dish is further from the next photo of it than the photo itself.
        let seen = meal.foods[index]
        let shared = meal.foods.indices.contains { $0 != index && meal.foods[$0].photoHash != nil && meal.foods[$0].photoHash == seen.photoHash }
        let box = shared ? seen.box : nil
        let examples: [[Float]]
        do { examples = try analyzer.exampleEmbeddings(of: image, region: box) } catch {
            throw .photo(path: path, reason: "\(error)")
        }
        let m = try store.add(label: food.label, examples: examples, grams: food.grams)
        return .taught(label: food.label, examples: m.prototypes.first { $0.label == food.label }?.examples?.count ?? examples.count)
    }
}
