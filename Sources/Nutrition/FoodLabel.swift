import Foundation

/// One recognition label and the food it stands for (an entry of `nutrition-db/labels.json`).
public struct FoodLabel: Sendable, Codable, Equatable {
    public struct Aliases: Sendable, Codable, Equatable {
        public var en: [String]
        public var zh: [String]
    }

    /// The label as the classifier emits it (`banana`, `dal_or_sambar`).
    public var label: String
    /// English display name.
    public var name: String
    /// Chinese display name.
    public var nameZh: String
    public var emoji: String
    /// "#RRGGBB".
    public var color: String
    /// Food id in the tables (`sr:173944`, `fndds:58100100`).
    public var food: String
    /// Default portion in grams and as a household description ("1 medium, 118 g").
    public var portionGrams: Double
    public var portion: String
    public var aliases: Aliases
    /// The generic kind this dish is one of (`ramen` → `noodle_soup`), itself a label with its own nutrition row: what
    /// stage 1 answers when it cannot tell which dish of the kind a photo shows. nil for kinds and plain foods.
    public var parent: String?

    enum CodingKeys: String, CodingKey {
        case label, name, nameZh = "name_zh", emoji, color, food, portionGrams = "portion_grams", portion, aliases, parent
    }

    struct File: Codable {
        var version: Int
        var labels: [FoodLabel]
    }

    static func load(from url: URL) throws(NutritionError) -> [String: FoodLabel] {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw .labelsInvalid(path: url.path, reason: "unreadable: \(error.localizedDescription)")
        }
        let file: File
        do { file = try JSONDecoder().decode(File.self, from: data) } catch {
            throw .labelsInvalid(path: url.path, reason: "\(error)")
        }
        var out: [String: FoodLabel] = [:]
        for l in file.labels {
            guard out[l.label] == nil else { throw .labelsInvalid(path: url.path, reason: "label \(l.label) appears twice") }
            guard l.portionGrams > 0, l.portionGrams.isFinite else {
                throw .labelsInvalid(path: url.path, reason: "label \(l.label) has portion_grams \(l.portionGrams)")
            }
            out[l.label] = l
        }
        return out
    }
}
