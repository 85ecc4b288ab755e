/// Everything the Nutrition stage can fail with; each case says what failed and what to do next.
public enum NutritionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A source table is missing or unreadable.
    case sourceUnreadable(path: String, reason: String)
    /// A source table is readable but its content is not what the builder expects.
    case sourceMalformed(path: String, reason: String)
    /// The output directory could not be written.
    case outputUnwritable(path: String, reason: String)
    /// The compiled database file is missing.
    case databaseMissing(path: String)
    /// The compiled database file exists but is damaged or from another format version.
    case databaseCorrupt(path: String, reason: String)
    /// labels.json is missing or malformed.
    case labelsInvalid(path: String, reason: String)
    /// No food with that id, label or barcode.
    case unknownFood(String)
    /// A portion text that could not be parsed at all ("a bit", "cup 1/").
    case unparsablePortion(String)
    /// A portion whose unit cannot be turned into grams for this food.
    case portionNotConvertible(portion: String, food: String, available: [String])
    /// A non-positive or non-finite quantity.
    case invalidQuantity(String)

    public var description: String {
        switch self {
        case let .sourceUnreadable(path, reason):
            "cannot read source table \(path): \(reason) (check --from points at the shared nutrition folder)"
        case let .sourceMalformed(path, reason):
            "source table \(path) is malformed: \(reason)"
        case let .outputUnwritable(path, reason):
            "cannot write \(path): \(reason) (check the --out directory exists and is writable)"
        case let .databaseMissing(path):
            "nutrition database not found at \(path) or \(path).gz (pass --nutrition-db DIR, set FOODMOMENT_NUTRITION_DB, or run `foodmoment dev nutrition-db build`)"
        case let .databaseCorrupt(path, reason):
            "nutrition database \(path) is damaged or of another version: \(reason) (rebuild it with `foodmoment dev nutrition-db build`)"
        case let .labelsInvalid(path, reason):
            "label mapping \(path) is invalid: \(reason)"
        case let .unknownFood(what):
            "no food, label or product matches \"\(what)\" (try `foodmoment search \"\(what)\"`)"
        case let .unparsablePortion(text):
            "cannot understand the portion \"\(text)\": write a quantity and a unit, e.g. \"150 g\", \"5 oz\", \"1 cup\", \"2 slices\", \"1 medium\""
        case let .portionNotConvertible(portion, food, available):
            available.isEmpty
                ? "cannot convert \"\(portion)\" to grams for \(food): it has no household portions; give a mass instead (e.g. \"150 g\", \"5 oz\")"
                : "cannot convert \"\(portion)\" to grams for \(food); its portions are: \(available.joined(separator: "; ")) (or give a mass such as \"150 g\")"
        case let .invalidQuantity(text):
            "invalid quantity \"\(text)\": it must be a positive, finite number"
        }
    }
}
