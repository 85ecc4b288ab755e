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
        // The running server and `serve token create` share this file; either may hold its lock for a moment.
        var configuration = GRDB.Configuration()
        configuration.busyMode = .timeout(10)
        db = try DatabaseQueue(path: path, configuration: configuration)
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
        migrator.registerMigration("v2: sign in with Apple, refresh tokens, profiles, idempotency") { db in
            try db.alter(table: "users") { t in t.add(column: "apple_sub", .text) }
            try db.create(index: "users_apple_sub", on: "users", columns: ["apple_sub"], unique: true)
            try db.create(table: "refresh_tokens") { t in
                t.primaryKey("token_sha256", .text)
                t.column("user_id", .text).notNull().indexed().references("users", onDelete: .cascade)
                // Every token rotated from one sign-in shares a family; reusing a rotated token revokes the family.
                t.column("family", .text).notNull().indexed()
                t.column("created_at", .double).notNull()
                t.column("expires_at", .double).notNull()
                t.column("used_at", .double)
                t.column("revoked", .boolean).notNull().defaults(to: false)
            }
            try db.create(table: "profiles") { t in
                t.primaryKey("user_id", .text).references("users", onDelete: .cascade)
                t.column("display_name", .text)
                t.column("time_zone", .text)
                t.column("height_cm", .double)
                t.column("updated_at", .double).notNull()
            }
            try db.create(table: "idempotency") { t in
                t.column("user_id", .text).notNull().references("users", onDelete: .cascade)
                t.column("key", .text).notNull()
                t.column("fingerprint", .text).notNull()
                // NULL while the first request is still running.
                t.column("status", .integer)
                t.column("content_type", .text)
                t.column("body", .blob)
                t.column("created_at", .double).notNull()
                t.primaryKey(["user_id", "key"])
            }
        }
        // The migrator reads what is applied before it takes the write lock, so of two processes creating the file
        // together one can fail on work the other just did; then more is applied than before, and it reads again.
        while true {
            let before = try db.read { try migrator.appliedIdentifiers($0) }
            do {
                try migrator.migrate(db)
                return
            } catch {
                let after = try db.read { try migrator.appliedIdentifiers($0) }
                guard after.isStrictSuperset(of: before) else { throw error }
            }
        }
    }

    /// A new personal token for `name` (the user is created on first use); the token itself is returned once.
    public func createToken(forUser name: String, now: Date = Date()) throws -> (user: UserID, token: String) {
        try Self.checkName(name)
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

    public struct Session: Sendable { public var timeZone: String? }

    /// What a request needs of its user, or nil when the user no longer exists (a deleted account's access tokens
    /// stop working at once, not when they expire).
    public func session(_ user: UserID) throws -> Session? {
        try db.read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT p.time_zone AS tz FROM users u LEFT JOIN profiles p ON p.user_id = u.id WHERE u.id = ?
                """, arguments: [user.rawValue]) else { return nil }
            return Session(timeZone: row["tz"])
        }
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

    // MARK: - Sign in with Apple and refresh tokens

    /// The user for an Apple account (`sub` of its identity token), created on first sign-in.
    public func appleUser(subject: String, now: Date = Date()) throws -> (user: UserID, created: Bool) {
        try db.write { db in
            if let id = try String.fetchOne(db, sql: "SELECT id FROM users WHERE apple_sub = ?", arguments: [subject]) {
                return (UserID(rawValue: id), false)
            }
            let id = UUID().uuidString.lowercased()
            try db.execute(sql: "INSERT INTO users (id, name, created_at, apple_sub) VALUES (?, ?, ?, ?)",
                           arguments: [id, "apple-" + id, now.timeIntervalSince1970, subject])
            return (UserID(rawValue: id), true)
        }
    }

    /// A new refresh token for `user` in `family` (a new family for a new sign-in); the token itself is returned once.
    public func createRefreshToken(for user: UserID, family: String? = nil, lifetime: TimeInterval, now: Date = Date()) throws -> String {
        let token = "fr_" + Self.randomToken()
        try db.write { db in
            try Self.insertRefresh(token, user: user, family: family ?? UUID().uuidString.lowercased(), lifetime: lifetime, now: now, db)
        }
        return token
    }

    private static func insertRefresh(_ token: String, user: UserID, family: String, lifetime: TimeInterval, now: Date, _ db: Database) throws {
        try db.execute(sql: """
            INSERT INTO refresh_tokens (token_sha256, user_id, family, created_at, expires_at) VALUES (?, ?, ?, ?, ?)
            """, arguments: [digest(token), user.rawValue, family, now.timeIntervalSince1970, now.timeIntervalSince1970 + lifetime])
    }

    public enum RefreshOutcome: Equatable, Sendable {
        case rotated(user: UserID, token: String)
        case unknown
        case expired
        /// An already rotated token came back: someone holds a copy. The whole family is revoked.
        case reused
    }

    /// Trades a refresh token for a new one of the same family (one transaction: two racing uses of one token
    /// cannot both succeed; the second is a reuse).
    public func rotateRefreshToken(_ token: String, lifetime: TimeInterval, now: Date = Date()) throws -> RefreshOutcome {
        guard token.hasPrefix("fr_"), token.count <= 128 else { return .unknown }
        return try db.write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM refresh_tokens WHERE token_sha256 = ?", arguments: [Self.digest(token)]) else {
                return .unknown
            }
            let family: String = row["family"], user = UserID(rawValue: row["user_id"])
            if row["used_at"] as Double? != nil || row["revoked"] as Bool {
                try db.execute(sql: "UPDATE refresh_tokens SET revoked = 1 WHERE family = ?", arguments: [family])
                return .reused
            }
            guard (row["expires_at"] as Double) > now.timeIntervalSince1970 else { return .expired }
            try db.execute(sql: "UPDATE refresh_tokens SET used_at = ? WHERE token_sha256 = ?",
                           arguments: [now.timeIntervalSince1970, Self.digest(token)])
            let next = "fr_" + Self.randomToken()
            try Self.insertRefresh(next, user: user, family: family, lifetime: lifetime, now: now, db)
            return .rotated(user: user, token: next)
        }
    }

    /// Deletes the user and, by cascade, their tokens, profile and idempotency records. Their diary files are the
    /// caller's to remove.
    public func deleteUser(_ user: UserID) throws {
        try db.write { db in try db.execute(sql: "DELETE FROM users WHERE id = ?", arguments: [user.rawValue]) }
    }

    // MARK: - Profiles

    public struct Profile: Codable, Equatable, Sendable {
        public var displayName: String?
        public var timeZone: String?
        public var heightCm: Double?
        enum CodingKeys: String, CodingKey { case displayName = "display_name", timeZone = "time_zone", heightCm = "height_cm" }
        public init(displayName: String? = nil, timeZone: String? = nil, heightCm: Double? = nil) {
            self.displayName = displayName; self.timeZone = timeZone; self.heightCm = heightCm
        }
    }

    public func profile(_ user: UserID) throws -> (name: String, createdAt: Date, apple: Bool, profile: Profile)? {
        try db.read { db in
            guard let u = try Row.fetchOne(db, sql: "SELECT * FROM users WHERE id = ?", arguments: [user.rawValue]) else { return nil }
            let p = try Row.fetchOne(db, sql: "SELECT * FROM profiles WHERE user_id = ?", arguments: [user.rawValue])
            return (u["name"], Date(timeIntervalSince1970: u["created_at"]), (u["apple_sub"] as String?) != nil,
                    Profile(displayName: p?["display_name"], timeZone: p?["time_zone"], heightCm: p?["height_cm"]))
        }
    }

    public func setProfile(_ user: UserID, _ p: Profile, now: Date = Date()) throws {
        try db.write { db in
            try db.execute(sql: """
                INSERT INTO profiles (user_id, display_name, time_zone, height_cm, updated_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (user_id) DO UPDATE SET display_name = excluded.display_name, time_zone = excluded.time_zone,
                  height_cm = excluded.height_cm, updated_at = excluded.updated_at
                """, arguments: [user.rawValue, p.displayName, p.timeZone, p.heightCm, now.timeIntervalSince1970])
        }
    }

    // MARK: - Idempotency keys

    public enum IdempotencyStart: Sendable {
        case started
        case replay(status: Int, contentType: String?, body: [UInt8])
        case inProgress
        case differentRequest
    }

    /// Claims `key` for this request (by a row whose primary key is the user and the key: a unique constraint, not
    /// memory), or says what the first request with this key got. Keys older than a day are forgotten.
    public func beginIdempotent(_ user: UserID, key: String, fingerprint: String, now: Date = Date()) throws -> IdempotencyStart {
        try db.write { db in
            try db.execute(sql: "DELETE FROM idempotency WHERE created_at < ?", arguments: [now.timeIntervalSince1970 - 86_400])
            if let row = try Row.fetchOne(db, sql: "SELECT * FROM idempotency WHERE user_id = ? AND key = ?", arguments: [user.rawValue, key]) {
                guard row["fingerprint"] as String == fingerprint else { return .differentRequest }
                guard let status = row["status"] as Int? else { return .inProgress }
                return .replay(status: status, contentType: row["content_type"], body: [UInt8]((row["body"] as Data?) ?? Data()))
            }
            try db.execute(sql: "INSERT INTO idempotency (user_id, key, fingerprint, created_at) VALUES (?, ?, ?, ?)",
                           arguments: [user.rawValue, key, fingerprint, now.timeIntervalSince1970])
            return .started
        }
    }

    /// Records the answer the first request got (nil: it failed on the server's side, so the key is released for a retry).
    public func finishIdempotent(_ user: UserID, key: String, status: Int?, contentType: String?, body: [UInt8]) throws {
        try db.write { db in
            if let status {
                try db.execute(sql: "UPDATE idempotency SET status = ?, content_type = ?, body = ? WHERE user_id = ? AND key = ?",
                               arguments: [status, contentType, Data(body), user.rawValue, key])
            } else {
                try db.execute(sql: "DELETE FROM idempotency WHERE user_id = ? AND key = ?", arguments: [user.rawValue, key])
            }
        }
    }

    static func checkName(_ name: String) throws {
        guard (1...64).contains(name.count),
              name.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) && $0.isASCII || "._-".unicodeScalars.contains($0) })
        else { throw AccountError.invalidUserName(name) }
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
