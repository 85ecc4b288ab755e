import Foundation
import GRDB
import ImageCodecs

/// A signed-in user: the id every row and file of theirs is kept under.
public struct UserID: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

public enum AccountError: Error, Equatable, CustomStringConvertible {
    case invalidUserName(String)

    public var description: String {
        switch self {
        case .invalidUserName(let name):
            "user name \"\(name)\" must be 1–64 letters, digits, '.', '_' or '-'"
        }
    }
}

/// Users and their personal API tokens (`DATA/accounts.sqlite`). Only a token's SHA-256 is stored: a copy of the
/// database lets no one in.
public final class AccountStore: Sendable {
    private let db: DatabaseQueue

    public init(path: String) throws {
        db = try DatabaseQueue(path: path)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "users") { t in
                t.primaryKey("id", .text)
                t.column("name", .text).notNull().unique()
                t.column("created_at", .double).notNull()
            }
            try db.create(table: "api_tokens") { t in
                t.primaryKey("token_sha256", .text)
                t.column("user_id", .text).notNull().references("users", onDelete: .cascade)
                t.column("created_at", .double).notNull()
            }
        }
        try migrator.migrate(db)
    }

    /// A new personal token for `name` (the user is created on first use); the token itself is returned once.
    public func createToken(forUser name: String, now: Date = Date()) throws -> (user: UserID, token: String) {
        guard (1...64).contains(name.count),
              name.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) && $0.isASCII || "._-".unicodeScalars.contains($0) })
        else { throw AccountError.invalidUserName(name) }
        let token = "fm_" + Self.randomToken()
        let user = try db.write { db -> UserID in
            let existing = try String.fetchOne(db, sql: "SELECT id FROM users WHERE name = ?", arguments: [name])
            let id = existing ?? UUID().uuidString.lowercased()
            if existing == nil {
                try db.execute(sql: "INSERT INTO users (id, name, created_at) VALUES (?, ?, ?)", arguments: [id, name, now.timeIntervalSince1970])
            }
            try db.execute(sql: "INSERT INTO api_tokens (token_sha256, user_id, created_at) VALUES (?, ?, ?)",
                           arguments: [Self.digest(token), id, now.timeIntervalSince1970])
            return UserID(rawValue: id)
        }
        return (user, token)
    }

    /// The user a bearer token belongs to, or nil.
    public func user(forToken token: String) throws -> UserID? {
        guard token.hasPrefix("fm_"), token.count <= 128 else { return nil }
        return try db.read { db in
            try String.fetchOne(db, sql: "SELECT user_id FROM api_tokens WHERE token_sha256 = ?", arguments: [Self.digest(token)])
        }.map(UserID.init(rawValue:))
    }

    /// Whether the database answers (readiness).
    public func isReachable() -> Bool {
        (try? db.read { try Int.fetchOne($0, sql: "SELECT 1") }) == 1
    }

    static func digest(_ token: String) -> String { ContentDigest.sha256Hex(Array(token.utf8)) }

    /// 32 random bytes as base64url (43 characters).
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
