/// What went wrong in the meal store, with the input that caused it and what to do.
public enum MealStoreError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The database file could not be created, opened or migrated.
    case cannotOpen(path: String, reason: String)
    /// A statement failed (SQLite's message and the operation that ran it).
    case database(operation: String, message: String)
    /// No meal has this id (or id prefix).
    case noSuchMeal(String)
    /// More than one meal id starts with this prefix.
    case ambiguousMealID(prefix: String, matches: Int)
    /// A food number outside the meal's foods (1-based, as the CLI shows it).
    case noSuchFood(meal: String, number: Int, count: Int)
    /// A number that cannot be stored (negative grams, NaN, …).
    case invalidValue(field: String, value: String, expected: String)
    /// An export file that is not ours or is of a newer schema.
    case badExport(reason: String)
    /// A change was asked of a store opened read-only (a file the user cannot write, or `--read-only`).
    case readOnly(path: String, operation: String)
    /// `sync` was given another server than the one this diary syncs with.
    case syncServerMismatch(bound: String, asked: String)
    /// A photo already belongs to another meal (a photo is logged once).
    case photoInAnotherMeal(hash: String, meal: String)

    public var description: String {
        switch self {
        case let .cannotOpen(path, reason):
            "cannot open the meal store \(path): \(reason) (check that the folder is writable, or choose another file with --db)"
        case let .database(operation, message):
            "meal store: \(operation) failed: \(message)"
        case let .noSuchMeal(id):
            "no meal with id \(id) (see `foodmoment meal list` for ids)"
        case let .ambiguousMealID(prefix, matches):
            "meal id prefix \(prefix) matches \(matches) meals; give more characters"
        case let .noSuchFood(meal, number, count):
            "meal \(meal) has no food #\(number) (it has \(count); see `foodmoment meal show \(meal)`)"
        case let .invalidValue(field, value, expected):
            "invalid \(field) \(value): expected \(expected)"
        case let .badExport(reason):
            "not a foodmoment export: \(reason)"
        case let .readOnly(path, operation):
            "cannot \(operation): the meal store \(path) is open read-only (viewing works: diary, meal list, stats, export; "
                + "to change it, make the file and its folder writable, or copy it and use --db COPY)"
        case let .syncServerMismatch(bound, asked):
            "this diary syncs with \(bound), not \(asked): a diary's queue and cursor belong to one server (use that --server, or "
                + "`foodmoment export` and `import` into a new diary (--db) to sync with another)"
        case let .photoInAnotherMeal(hash, meal):
            "photo \(hash.prefix(12)) is already in meal \(meal.prefix(8)): edit that meal, or delete it first"
        }
    }
}
