import GRDB

/// A statement run on a diary's file past the store's checks, as an earlier version could have written it. Apart from
/// the tests that use it: GRDB's SQL operators (`&&` among them) confuse `#expect` in files that import it.
enum RawSQL {
    static func execute(_ sql: String, in path: String) throws {
        try DatabaseQueue(path: path).write { try $0.execute(sql: sql) }
    }
}
