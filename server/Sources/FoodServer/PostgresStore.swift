import FoodCore
import Foundation
import Hummingbird
import Logging
import MealStore
import PostgresNIO
import _ConnectionPoolModule

/// Accounts and every user's diary in one PostgreSQL database, shared by any number of server instances. Rows carry
/// their user's id and every query names it; deleting a user cascades to all of theirs. What must hold across
/// instances is a database constraint or a row lock, never memory: a refresh token is rotated under `FOR UPDATE`, an
/// Idempotency-Key is the primary key (user, key), an Apple account is `UNIQUE (apple_sub)`.
public final class PostgresStore: ServerStore {
    let client: PostgresClient
    let logger: Logger
    /// Longest a request waits for the database (a free connection included) before it is answered 503.
    let deadline: Duration

    /// `postgres://user:password@host:port/database` (`?sslmode=require` for TLS, as a managed PostgreSQL wants).
    /// Every connection's `statement_timeout` is `deadline`, the store's deadline for a call: a statement whose caller
    /// has already been answered 503 is stopped by PostgreSQL, which releases its connection and its locks, instead of
    /// running on (a query already on a connection does not stop when its task is cancelled).
    public static func configuration(url text: String, deadline: Duration = .seconds(5)) throws -> PostgresClient.Configuration {
        guard let url = URLComponents(string: text), ["postgres", "postgresql"].contains(url.scheme ?? ""),
              let host = url.host, !host.isEmpty, let user = url.user, !user.isEmpty else {
            throw PostgresStoreError.badURL(text)
        }
        let database = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        let mode = url.queryItems?.first(where: { $0.name == "sslmode" })?.value ?? "disable"
        let tls: PostgresClient.Configuration.TLS
        switch mode {
        case "disable": tls = .disable
        case "prefer": tls = .prefer(.makeClientConfiguration())
        case "require", "verify-full": tls = .require(.makeClientConfiguration())
        default: throw PostgresStoreError.badURL(text + " (sslmode must be disable, prefer, require or verify-full)")
        }
        var c = PostgresClient.Configuration(host: host, port: url.port ?? 5432, username: user,
                                             password: url.password?.removingPercentEncoding, database: database.isEmpty ? nil : database, tls: tls)
        c.options.connectTimeout = .seconds(3)
        c.options.maximumConnections = 16
        c.options.additionalStartupParameters = [("statement_timeout", "\(Int(max(1, deadline.milliseconds.rounded(.up))))ms")]
        return c
    }

    /// The store on `client`, which the caller runs (`client.run()`, e.g. as a service of the application).
    public init(client: PostgresClient, logger: Logger, deadline: Duration = .seconds(5)) {
        self.client = client
        self.logger = logger
        self.deadline = deadline
    }

    /// Connects to `url`, brings the schema up to date and runs `body` with the store; the connections close when it
    /// returns. A database that cannot be reached or migrated within `connectTimeout` is an error naming the URL's host.
    public static func with<T: Sendable>(url: String, logger: Logger, deadline: Duration = .seconds(5),
                                         _ body: (PostgresStore) async throws -> T) async throws -> T {
        let config = try configuration(url: url, deadline: deadline)
        let client = PostgresClient(configuration: config, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            let store = PostgresStore(client: client, logger: logger, deadline: deadline)
            do {
                _ = try await store.run { try await store.migrate() }
            } catch let error as APIError {
                throw PostgresStoreError.unreachable(host: "\(config.host ?? "?"):\(config.port ?? 5432)", why: error.message)
            }
            return try await body(store)
        }
    }

    // MARK: - Migrations

    /// Each step runs once, in order, in its own transaction. Instances starting together take an advisory lock
    /// first, so exactly one of them migrates and the others find the work done.
    public static let migrations: [[String]] = [
        [
            """
            CREATE TABLE users (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at DOUBLE PRECISION NOT NULL,
              apple_sub TEXT UNIQUE)
            """,
            """
            CREATE TABLE api_tokens (token_sha256 TEXT PRIMARY KEY,
              user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, created_at DOUBLE PRECISION NOT NULL)
            """,
            """
            CREATE TABLE refresh_tokens (token_sha256 TEXT PRIMARY KEY,
              user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, family TEXT NOT NULL,
              created_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL, used_at DOUBLE PRECISION,
              revoked BOOLEAN NOT NULL DEFAULT false)
            """,
            "CREATE INDEX refresh_tokens_family ON refresh_tokens(family)",
            "CREATE INDEX refresh_tokens_user ON refresh_tokens(user_id)",
            """
            CREATE TABLE profiles (user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE, display_name TEXT,
              time_zone TEXT, height_cm DOUBLE PRECISION, updated_at DOUBLE PRECISION NOT NULL)
            """,
            """
            CREATE TABLE idempotency (user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, key TEXT NOT NULL,
              fingerprint TEXT NOT NULL, status INTEGER, content_type TEXT, body BYTEA, created_at DOUBLE PRECISION NOT NULL,
              PRIMARY KEY (user_id, key))
            """,
            // A meal is kept whole as the export's JSON (foods, boxes, provenance); queries need only its time and protein.
            """
            CREATE TABLE meals (user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, id TEXT NOT NULL,
              time_ms BIGINT NOT NULL, updated_ms BIGINT NOT NULL, protein_g DOUBLE PRECISION NOT NULL, record TEXT NOT NULL,
              PRIMARY KEY (user_id, id))
            """,
            "CREATE INDEX meals_by_time ON meals(user_id, time_ms)",
            """
            CREATE TABLE water (user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, id TEXT NOT NULL,
              time_ms BIGINT NOT NULL, ml DOUBLE PRECISION NOT NULL CHECK (ml > 0), PRIMARY KEY (user_id, id))
            """,
            "CREATE INDEX water_by_time ON water(user_id, time_ms)",
            """
            CREATE TABLE weight (user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, id TEXT NOT NULL,
              time_ms BIGINT NOT NULL, kg DOUBLE PRECISION NOT NULL CHECK (kg > 0), PRIMARY KEY (user_id, id))
            """,
            "CREATE INDEX weight_by_time ON weight(user_id, time_ms)",
            """
            CREATE TABLE goals (user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE, daily_kcal DOUBLE PRECISION,
              protein_g DOUBLE PRECISION, carbs_g DOUBLE PRECISION, fat_g DOUBLE PRECISION, water_ml DOUBLE PRECISION,
              target_weight_kg DOUBLE PRECISION)
            """,
            """
            CREATE TABLE achievements (user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, id TEXT NOT NULL,
              title TEXT NOT NULL, unlocked_ms BIGINT NOT NULL, PRIMARY KEY (user_id, id))
            """,
        ],
        // Sync: each user's change feed, one row per entry (its last change; deletions stay as tombstones), numbered
        // by one sequence. The trigger takes a per-user transaction lock before numbering, so a user's numbers follow
        // commit order and a client's cursor never skips a change that commits late.
        [
            "ALTER TABLE water ADD COLUMN updated_ms BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE weight ADD COLUMN updated_ms BIGINT NOT NULL DEFAULT 0",
            "CREATE SEQUENCE changes_seq",
            """
            CREATE TABLE changes (user_id TEXT NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('meal', 'water', 'weight')),
              entity_id TEXT NOT NULL, op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')), seq BIGINT NOT NULL,
              changed_ms BIGINT NOT NULL, PRIMARY KEY (user_id, kind, entity_id))
            """,
            "CREATE INDEX changes_feed ON changes(user_id, seq)",
            """
            INSERT INTO changes (user_id, kind, entity_id, op, seq, changed_ms)
            SELECT user_id, kind, id, 'upsert', nextval('changes_seq'), updated_ms FROM (
              SELECT user_id, 'meal' AS kind, id, updated_ms, time_ms FROM meals
              UNION ALL SELECT user_id, 'water', id, updated_ms, time_ms FROM water
              UNION ALL SELECT user_id, 'weight', id, updated_ms, time_ms FROM weight
              ORDER BY user_id, time_ms, id) AS existing
            """,
            """
            CREATE FUNCTION foodmoment_record_change() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE uid TEXT; eid TEXT; what TEXT; t BIGINT;
            BEGIN
              IF TG_OP = 'DELETE' THEN
                uid := OLD.user_id; eid := OLD.id; what := 'delete'; t := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
              ELSE
                uid := NEW.user_id; eid := NEW.id; what := 'upsert'; t := NEW.updated_ms;
              END IF;
              -- A user being deleted takes their rows with them: no tombstones for them.
              IF NOT EXISTS (SELECT 1 FROM users WHERE id = uid) THEN RETURN NULL; END IF;
              PERFORM pg_advisory_xact_lock(hashtext('foodmoment-changes'), hashtext(uid));
              INSERT INTO changes (user_id, kind, entity_id, op, seq, changed_ms)
              VALUES (uid, TG_ARGV[0], eid, what, nextval('changes_seq'), t)
              ON CONFLICT (user_id, kind, entity_id) DO UPDATE SET op = excluded.op, seq = excluded.seq, changed_ms = excluded.changed_ms;
              RETURN NULL;
            END $$
            """,
            "CREATE TRIGGER meals_changes AFTER INSERT OR UPDATE OR DELETE ON meals FOR EACH ROW EXECUTE FUNCTION foodmoment_record_change('meal')",
            "CREATE TRIGGER water_changes AFTER INSERT OR UPDATE OR DELETE ON water FOR EACH ROW EXECUTE FUNCTION foodmoment_record_change('water')",
            "CREATE TRIGGER weight_changes AFTER INSERT OR UPDATE OR DELETE ON weight FOR EACH ROW EXECUTE FUNCTION foodmoment_record_change('weight')",
        ],
        // Goals sync too: one entry per user (id 'goals'), changed but never deleted. Goals set before this version
        // are stamped now and enter the feed once.
        [
            "ALTER TABLE goals ADD COLUMN updated_ms BIGINT NOT NULL DEFAULT 0",
            "UPDATE goals SET updated_ms = (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
            "ALTER TABLE changes DROP CONSTRAINT changes_kind_check",
            "ALTER TABLE changes ADD CONSTRAINT changes_kind_check CHECK (kind IN ('meal', 'water', 'weight', 'goals'))",
            """
            INSERT INTO changes (user_id, kind, entity_id, op, seq, changed_ms)
            SELECT user_id, 'goals', 'goals', 'upsert', nextval('changes_seq'), updated_ms FROM goals ORDER BY user_id
            """,
            """
            CREATE FUNCTION foodmoment_record_goals_change() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              PERFORM pg_advisory_xact_lock(hashtext('foodmoment-changes'), hashtext(NEW.user_id));
              INSERT INTO changes (user_id, kind, entity_id, op, seq, changed_ms)
              VALUES (NEW.user_id, 'goals', 'goals', 'upsert', nextval('changes_seq'), NEW.updated_ms)
              ON CONFLICT (user_id, kind, entity_id) DO UPDATE SET op = excluded.op, seq = excluded.seq, changed_ms = excluded.changed_ms;
              RETURN NULL;
            END $$
            """,
            "CREATE TRIGGER goals_changes AFTER INSERT OR UPDATE ON goals FOR EACH ROW EXECUTE FUNCTION foodmoment_record_goals_change()",
        ],
    ]

    /// A fixed key for `pg_advisory_lock` (any 64-bit number no other application on the database uses).
    static let migrationLock: Int64 = 0x466F_6F64_4D6F_6D31

    /// Brings the schema up to date; returns the steps this call applied (0 when another instance had done them).
    @discardableResult
    public func migrate() async throws -> Int {
        try await client.withConnection { conn in
            try await Self.drain(conn.query("SELECT pg_advisory_lock(\(Self.migrationLock))", logger: logger))
            do {
                _ = try await conn.query("""
                    CREATE TABLE IF NOT EXISTS foodmoment_migrations (version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)
                    """, logger: logger)
                var current = 0
                for try await v in try await conn.query("SELECT COALESCE(MAX(version), 0) FROM foodmoment_migrations", logger: logger)
                    .decode(Int.self) { current = v }
                var applied = 0
                for (i, steps) in Self.migrations.enumerated() where i + 1 > current {
                    let version = i + 1, now = Date().timeIntervalSince1970
                    try await conn.withTransaction(logger: logger) { tx in
                        for sql in steps { _ = try await tx.query(PostgresQuery(unsafeSQL: sql), logger: logger) }
                        _ = try await tx.query("INSERT INTO foodmoment_migrations (version, applied_at) VALUES (\(version), \(now))", logger: logger)
                    }
                    applied += 1
                }
                try await Self.drain(conn.query("SELECT pg_advisory_unlock(\(Self.migrationLock))", logger: logger))
                return applied
            } catch {
                _ = try? await conn.query("SELECT pg_advisory_unlock(\(Self.migrationLock))", logger: logger)
                throw error
            }
        }
    }

    /// Reads a statement's rows to the end. A SELECT's error (a lock wait stopped by `statement_timeout`) arrives with
    /// its rows, so a lock taken by `_ = try await conn.query(…)` could fail unseen and the work go on without it.
    static func drain(_ rows: PostgresRowSequence) async throws {
        for try await _ in rows {}
    }

    // MARK: - Reaching the database

    /// Runs `body` within the deadline; an unreachable database (no connection, or one lost) becomes a 503 with
    /// Retry-After, so a caller fails fast while PostgreSQL is down and the pool reconnects by itself.
    func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        do {
            return try await Self.first(body, within: deadline)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == PostgresError.Code.queryCanceled.raw {
            // statement_timeout stopped it (or an operator cancelled it): the database is busy, not broken.
            logger.warning("PostgreSQL stopped a statement (statement_timeout or a cancel request); answered 503")
            throw Self.unavailable("PostgreSQL stopped a statement that ran past its statement_timeout")
        } catch let error as PSQLError where error.code != .server || Self.isOutage(error) {
            throw Self.unavailable(error.code == .server ? "SQLSTATE \(error.serverInfo?[.sqlState] ?? "?")" : "\(error.code)")
        } catch PostgresStoreError.deadline {
            let seconds = deadline.milliseconds / 1000
            logger.warning("a database call passed its deadline (\(seconds) s); answered 503 and left to finish")
            throw Self.unavailable("no answer within \(seconds.formatted(.number.precision(.fractionLength(0...2)))) s")
        } catch is CancellationError {
            throw Self.unavailable("cancelled")
        } catch let error as ConnectionPoolError {
            // Thrown by a lease, not by PostgreSQL: after repeated failed connection attempts the pool's circuit
            // breaker fails every lease at once (connectionCreationCircuitBreakerTripped), or the pool is shutting down.
            throw Self.unavailable("\(error)")
        } catch let error as PSQLError {
            // A statement PostgreSQL refused for another reason: the caller answers 500; the class says which.
            logger.error("the database refused a statement", metadata: ["sqlstate": .string(error.serverInfo?[.sqlState] ?? "?"),
                                                                        "code": .string("\(error.code)")])
            throw error
        }
    }

    /// `body`'s answer, or `PostgresStoreError.deadline` once `limit` has passed. A task group would wait for its
    /// children, and a query already on a connection does not stop when cancelled: one sent as PostgreSQL shuts down
    /// can wait until the HTTP connection's idle timeout (a minute) instead of answering 503 within the deadline. So the
    /// body runs in a task of its own, cancelled and left to finish on its own when the deadline wins.
    static func first<T: Sendable>(_ body: @escaping @Sendable () async throws -> T, within limit: Duration) async throws -> T {
        let work = Task { try await body() }
        let answer = FirstAnswer<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let timer = Task {
                    try await Task.sleep(for: limit)
                    work.cancel()
                    answer.give(.failure(PostgresStoreError.deadline))
                }
                answer.wait(continuation)
                Task {
                    let result = await work.result
                    timer.cancel()
                    answer.give(result)
                }
            }
        } onCancel: {
            work.cancel()
            answer.give(.failure(CancellationError()))
        }
    }

    /// A server error that is the database going away, not a bad statement: class 08 (connection exception) and 57
    /// (operator intervention: shut down, crashed, starting up), e.g. the connections a `pg_ctl stop` terminates.
    static func isOutage(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return state.hasPrefix("08") || state.hasPrefix("57")
    }

    static func unavailable(_ why: String) -> APIError {
        APIError(.serviceUnavailable, code: "database_unavailable",
                 "the database is not reachable right now (\(why)): retry shortly (a POST with the same Idempotency-Key, so it counts once)",
                 headers: [.retryAfter: "2"])
    }

    func query(_ q: PostgresQuery) async throws -> PostgresRowSequence {
        try await client.query(q, logger: logger)
    }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        try await run {
            do {
                return try await self.client.withTransaction(logger: self.logger) { conn in try await body(conn) }
            } catch let error as PostgresTransactionError {
                // PostgresNIO wraps whatever ended the transaction; unwrapped, a lost connection is a 503 and our own
                // errors (no such meal) keep their status. A failed rollback adds nothing a caller could act on.
                throw error.beginError ?? error.closureError ?? error.commitError ?? error
            }
        }
    }

    // MARK: - Accounts

    public func createToken(forUser name: String, now: Date) async throws -> (user: UserID, token: String) {
        try AccountStore.checkName(name)
        let token = "fm_" + AccountStore.randomToken(), digest = AccountStore.digest(token)
        let fresh = UUID().uuidString.lowercased(), t = now.timeIntervalSince1970
        let id = try await transaction { conn -> String in
            _ = try await conn.query("INSERT INTO users (id, name, created_at) VALUES (\(fresh), \(name), \(t)) ON CONFLICT (name) DO NOTHING",
                                     logger: self.logger)
            var id = fresh
            for try await v in try await conn.query("SELECT id FROM users WHERE name = \(name)", logger: self.logger).decode(String.self) { id = v }
            _ = try await conn.query("INSERT INTO api_tokens (token_sha256, user_id, created_at) VALUES (\(digest), \(id), \(t))",
                                     logger: self.logger)
            return id
        }
        return (UserID(rawValue: id), token)
    }

    public func session(_ user: UserID) async throws -> AccountStore.Session? {
        let id = user.rawValue
        return try await run {
            for try await tz in try await self.query("""
                SELECT p.time_zone FROM users u LEFT JOIN profiles p ON p.user_id = u.id WHERE u.id = \(id)
                """).decode(String?.self) { return AccountStore.Session(timeZone: tz) }
            return nil
        }
    }

    public func user(forToken token: String) async throws -> UserID? {
        guard token.hasPrefix("fm_"), token.count <= 128 else { return nil }
        let digest = AccountStore.digest(token)
        return try await run {
            for try await id in try await self.query("SELECT user_id FROM api_tokens WHERE token_sha256 = \(digest)").decode(String.self) {
                return UserID(rawValue: id)
            }
            return nil
        }
    }

    public func isReachable() async -> Bool {
        (try? await run {
            for try await one in try await self.query("SELECT 1").decode(Int.self) { return one == 1 }
            return false
        }) ?? false
    }

    public func appleUser(subject: String, now: Date) async throws -> (user: UserID, created: Bool) {
        let fresh = UUID().uuidString.lowercased(), t = now.timeIntervalSince1970, name = "apple-" + fresh
        return try await transaction { conn in
            var created = false
            for try await _ in try await conn.query("""
                INSERT INTO users (id, name, created_at, apple_sub) VALUES (\(fresh), \(name), \(t), \(subject))
                ON CONFLICT (apple_sub) DO NOTHING RETURNING id
                """, logger: self.logger).decode(String.self) { created = true }
            for try await id in try await conn.query("SELECT id FROM users WHERE apple_sub = \(subject)", logger: self.logger).decode(String.self) {
                return (UserID(rawValue: id), created)
            }
            throw PostgresStoreError.missing("the Apple account's user")
        }
    }

    public func createRefreshToken(for user: UserID, family: String?, lifetime: TimeInterval, now: Date) async throws -> String {
        let token = "fr_" + AccountStore.randomToken(), digest = AccountStore.digest(token), id = user.rawValue
        let family = family ?? UUID().uuidString.lowercased(), t = now.timeIntervalSince1970, expires = t + lifetime
        try await run {
            _ = try await self.query("""
                INSERT INTO refresh_tokens (token_sha256, user_id, family, created_at, expires_at)
                VALUES (\(digest), \(id), \(family), \(t), \(expires))
                """)
        }
        return token
    }

    /// The row is locked for the transaction: two instances handed the same token at once cannot both rotate it;
    /// the second sees it used and revokes the family.
    public func rotateRefreshToken(_ token: String, lifetime: TimeInterval, now: Date) async throws -> AccountStore.RefreshOutcome {
        guard token.hasPrefix("fr_"), token.count <= 128 else { return .unknown }
        let digest = AccountStore.digest(token), t = now.timeIntervalSince1970
        let next = "fr_" + AccountStore.randomToken(), nextDigest = AccountStore.digest(next)
        return try await transaction { conn in
            var found: (String, String, Double, Double?, Bool)?
            for try await row in try await conn.query("""
                SELECT user_id, family, expires_at, used_at, revoked FROM refresh_tokens WHERE token_sha256 = \(digest) FOR UPDATE
                """, logger: self.logger).decode((String, String, Double, Double?, Bool).self) { found = row }
            guard let (user, family, expires, used, revoked) = found else { return .unknown }
            if used != nil || revoked {
                _ = try await conn.query("UPDATE refresh_tokens SET revoked = true WHERE family = \(family)", logger: self.logger)
                return .reused
            }
            guard expires > t else { return .expired }
            _ = try await conn.query("UPDATE refresh_tokens SET used_at = \(t) WHERE token_sha256 = \(digest)", logger: self.logger)
            let expiresNext = t + lifetime
            _ = try await conn.query("""
                INSERT INTO refresh_tokens (token_sha256, user_id, family, created_at, expires_at)
                VALUES (\(nextDigest), \(user), \(family), \(t), \(expiresNext))
                """, logger: self.logger)
            return .rotated(user: UserID(rawValue: user), token: next)
        }
    }

    public func deleteUser(_ user: UserID) async throws {
        let id = user.rawValue
        try await transaction { conn in
            _ = try await conn.query("DELETE FROM users WHERE id = \(id)", logger: self.logger)
            _ = try await conn.query("DELETE FROM changes WHERE user_id = \(id)", logger: self.logger)
        }
    }

    public func profile(_ user: UserID) async throws -> (name: String, createdAt: Date, apple: Bool, profile: AccountStore.Profile)? {
        let id = user.rawValue
        return try await run {
            for try await (name, created, apple, display, tz, height) in try await self.query("""
                SELECT u.name, u.created_at, u.apple_sub IS NOT NULL, p.display_name, p.time_zone, p.height_cm
                FROM users u LEFT JOIN profiles p ON p.user_id = u.id WHERE u.id = \(id)
                """).decode((String, Double, Bool, String?, String?, Double?).self) {
                return (name, Date(timeIntervalSince1970: created), apple,
                        AccountStore.Profile(displayName: display, timeZone: tz, heightCm: height))
            }
            return nil
        }
    }

    public func setProfile(_ user: UserID, _ p: AccountStore.Profile, now: Date) async throws {
        let id = user.rawValue, t = now.timeIntervalSince1970
        try await run {
            _ = try await self.query("""
                INSERT INTO profiles (user_id, display_name, time_zone, height_cm, updated_at)
                VALUES (\(id), \(p.displayName), \(p.timeZone), \(p.heightCm), \(t))
                ON CONFLICT (user_id) DO UPDATE SET display_name = excluded.display_name, time_zone = excluded.time_zone,
                  height_cm = excluded.height_cm, updated_at = excluded.updated_at
                """)
        }
    }

    /// The (user, key) primary key decides which of two instances' requests with one key runs.
    public func beginIdempotent(_ user: UserID, key: String, fingerprint: String, now: Date) async throws -> AccountStore.IdempotencyStart {
        let id = user.rawValue, t = now.timeIntervalSince1970, old = t - 86_400
        return try await run {
            _ = try await self.query("DELETE FROM idempotency WHERE user_id = \(id) AND created_at < \(old)")
            for try await _ in try await self.query("""
                INSERT INTO idempotency (user_id, key, fingerprint, created_at) VALUES (\(id), \(key), \(fingerprint), \(t))
                ON CONFLICT (user_id, key) DO NOTHING RETURNING key
                """).decode(String.self) { return .started }
            for try await (stored, status, type, body) in try await self.query("""
                SELECT fingerprint, status, content_type, body FROM idempotency WHERE user_id = \(id) AND key = \(key)
                """).decode((String, Int?, String?, ByteBuffer?).self) {
                guard stored == fingerprint else { return .differentRequest }
                guard let status else { return .inProgress }
                return .replay(status: status, contentType: type, body: body.map { Array($0.readableBytesView) } ?? [])
            }
            // The first request failed and released the key between the two statements: this one may run.
            return .inProgress
        }
    }

    public func finishIdempotent(_ user: UserID, key: String, status: Int?, contentType: String?, body: [UInt8]) async throws {
        let id = user.rawValue
        try await run {
            if let status {
                let bytes = ByteBuffer(bytes: body)
                _ = try await self.query("""
                    UPDATE idempotency SET status = \(status), content_type = \(contentType), body = \(bytes)
                    WHERE user_id = \(id) AND key = \(key)
                    """)
            } else {
                _ = try await self.query("DELETE FROM idempotency WHERE user_id = \(id) AND key = \(key)")
            }
        }
    }

    public func diary(for user: UserID) async throws -> any Diary { PostgresDiary(store: self, user: user.rawValue) }
}

public enum PostgresStoreError: Error, CustomStringConvertible {
    case badURL(String)
    case deadline
    case missing(String)
    case undecodable(String)
    case unreachable(host: String, why: String)

    public var description: String {
        switch self {
        case .badURL(let text):
            "\(text) is not a PostgreSQL URL: give postgres://USER:PASSWORD@HOST:PORT/DATABASE (add ?sslmode=require for TLS)"
        case .deadline: "the database did not answer in time"
        case .missing(let what): "\(what) is missing"
        case .undecodable(let what): "a stored \(what) could not be read"
        case .unreachable(let host, let why): "PostgreSQL at \(host) could not be reached or migrated: \(why)"
        }
    }
}

/// One user's diary in PostgresStore: every statement is limited to `user_id = user`.
struct PostgresDiary: Diary {
    let store: PostgresStore
    let user: String

    static let encoder: JSONEncoder = {
        let e = DiaryExport.encoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }()

    static func decode(_ text: String) throws -> MealRecord {
        do { return try DiaryExport.decoder().decode(MealRecord.self, from: Data(text.utf8)) } catch {
            throw PostgresStoreError.undecodable("meal")
        }
    }

    static func ms(_ d: Date) -> Int64 { Int64((d.timeIntervalSince1970 * 1000).rounded()) }
    static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }

    /// Inserts or replaces a meal (inside the caller's transaction when `conn` is one).
    static func save(_ rec: MealRecord, user: String, _ conn: PostgresConnection, _ logger: Logger) async throws {
        let text = String(decoding: try encoder.encode(rec), as: UTF8.self)
        let protein = rec.foods.reduce(0) { $0 + $1.nutrients.proteinG }
        let t = ms(rec.time), updated = ms(rec.updatedAt)
        _ = try await conn.query("""
            INSERT INTO meals (user_id, id, time_ms, updated_ms, protein_g, record) VALUES (\(user), \(rec.id), \(t), \(updated), \(protein), \(text))
            ON CONFLICT (user_id, id) DO UPDATE SET time_ms = excluded.time_ms, updated_ms = excluded.updated_ms,
              protein_g = excluded.protein_g, record = excluded.record
            """, logger: logger)
    }

    func addMeal(time: Date, type: MealType, foods: [MealFood], title: String?, photos: [MealPhoto]) async throws -> MealRecord {
        for p in photos {
            if let other = try await meal(photoHash: p.hash) { throw MealStoreError.photoInAnotherMeal(hash: p.hash, meal: other.id) }
        }
        let rec = try DiaryRules.newMeal(time: time, type: type, foods: foods, title: title, photos: photos, now: Date())
        let user = self.user, logger = store.logger
        try await store.run { try await store.client.withConnection { try await Self.save(rec, user: user, $0, logger) } }
        return rec
    }

    func meals(from: Date, to: Date) async throws -> [MealRecord] {
        let user = self.user, a = Self.ms(from), b = Self.ms(to)
        return try await store.run {
            var out: [MealRecord] = []
            for try await text in try await store.query("""
                SELECT record FROM meals WHERE user_id = \(user) AND time_ms >= \(a) AND time_ms < \(b) ORDER BY time_ms, id
                """).decode(String.self) { out.append(try Self.decode(text)) }
            return out
        }
    }

    func meal(photoHash: String) async throws -> MealRecord? {
        let user = self.user
        let probe = #"{"photos": [{"hash": "\#(photoHash)"}]}"#
        return try await store.run {
            for try await text in try await store.query("""
                SELECT record FROM meals WHERE user_id = \(user) AND record::jsonb @> \(probe)::jsonb LIMIT 1
                """).decode(String.self) { return try Self.decode(text) }
            return nil
        }
    }

    func meal(id: String) async throws -> MealRecord? {
        let user = self.user
        return try await store.run {
            for try await text in try await store.query("SELECT record FROM meals WHERE user_id = \(user) AND id = \(id)").decode(String.self) {
                return try Self.decode(text)
            }
            return nil
        }
    }

    func edit(mealID: String, _ edits: [MealEdit]) async throws -> MealRecord {
        let user = self.user, logger = store.logger
        return try await store.transaction { conn in
            var before: MealRecord?
            for try await text in try await conn.query("""
                SELECT record FROM meals WHERE user_id = \(user) AND id = \(mealID) FOR UPDATE
                """, logger: logger).decode(String.self) { before = try Self.decode(text) }
            guard let before else { throw MealStoreError.noSuchMeal(mealID) }
            let out = try DiaryRules.apply(edits, to: before, now: Date())
            try await Self.save(out, user: user, conn, logger)
            return out
        }
    }

    func deleteMeal(id: String) async throws -> Bool {
        let user = self.user
        return try await store.run {
            for try await _ in try await store.query("DELETE FROM meals WHERE user_id = \(user) AND id = \(id) RETURNING id").decode(String.self) {
                return true
            }
            return false
        }
    }

    func addWater(milliliters: Double, at time: Date?) async throws -> WaterLog {
        let log = try DiaryRules.water(milliliters: milliliters, at: time ?? Date())
        try await insert(.water, id: log.id, time: log.time, value: log.milliliters)
        return log
    }

    func waterLogs(from: Date, to: Date) async throws -> [WaterLog] {
        try await logs(.water, from: from, to: to).map { WaterLog(id: $0.id, time: $0.time, milliliters: $0.value) }
    }

    /// The two log tables share their shape: id, time and one value.
    enum LogTable: String {
        case water, weight
        var column: String { self == .water ? "ml" : "kg" }
    }

    func insert(_ table: LogTable, id: String, time: Date, value: Double) async throws {
        let user = self.user, t = Self.ms(time), now = Self.ms(Date())
        let query: PostgresQuery = """
            INSERT INTO \(unescaped: table.rawValue) (user_id, id, time_ms, \(unescaped: table.column), updated_ms)
            VALUES (\(user), \(id), \(t), \(value), \(now))
            """
        try await store.run { _ = try await store.query(query) }
    }

    /// A log table's rows with `from ≤ time < to`, by time.
    func logs(_ table: LogTable, from: Date, to: Date) async throws -> [(id: String, time: Date, value: Double)] {
        let user = self.user, a = Self.ms(from), b = Self.ms(to)
        let query: PostgresQuery = """
            SELECT id, time_ms, \(unescaped: table.column) FROM \(unescaped: table.rawValue)
            WHERE user_id = \(user) AND time_ms >= \(a) AND time_ms < \(b) ORDER BY time_ms, id
            """
        return try await store.run {
            var out: [(id: String, time: Date, value: Double)] = []
            for try await (id, t, v) in try await store.query(query).decode((String, Int64, Double).self) { out.append((id, Self.date(t), v)) }
            return out
        }
    }

    func goals() async throws -> Goals {
        let user = self.user, logger = store.logger
        return try await store.run {
            try await store.client.withConnection { conn in try await Self.goalsRow(user: user, conn, logger)?.goals ?? Goals() }
        }
    }

    /// The user's goals and when they last changed; nil when never set.
    static func goalsRow(user: String, _ conn: PostgresConnection, _ logger: Logger) async throws -> (goals: Goals, updatedMs: Int64)? {
        for try await (k, p, c, f, w, tw, t) in try await conn.query("""
            SELECT daily_kcal, protein_g, carbs_g, fat_g, water_ml, target_weight_kg, updated_ms FROM goals WHERE user_id = \(user)
            """, logger: logger).decode((Double?, Double?, Double?, Double?, Double?, Double?, Int64).self) {
            return (Goals(dailyKcal: k, proteinG: p, carbsG: c, fatG: f, waterMl: w, targetWeightKg: tw), t)
        }
        return nil
    }

    func setGoals(_ g: Goals) async throws {
        try DiaryRules.check(g)
        let user = self.user, logger = store.logger, t = Self.ms(Date())
        try await store.run {
            try await store.client.withConnection { conn in try await Self.saveGoals(g, updatedMs: t, user: user, conn, logger) }
        }
    }

    /// `updatedMs` is when they changed: sync's conflict rule compares it (the later goals win).
    static func saveGoals(_ g: Goals, updatedMs t: Int64, user: String, _ conn: PostgresConnection, _ logger: Logger) async throws {
        _ = try await conn.query("""
            INSERT INTO goals (user_id, daily_kcal, protein_g, carbs_g, fat_g, water_ml, target_weight_kg, updated_ms)
            VALUES (\(user), \(g.dailyKcal), \(g.proteinG), \(g.carbsG), \(g.fatG), \(g.waterMl), \(g.targetWeightKg), \(t))
            ON CONFLICT (user_id) DO UPDATE SET daily_kcal = excluded.daily_kcal, protein_g = excluded.protein_g,
              carbs_g = excluded.carbs_g, fat_g = excluded.fat_g, water_ml = excluded.water_ml,
              target_weight_kg = excluded.target_weight_kg, updated_ms = excluded.updated_ms
            """, logger: logger)
    }

    func addWeight(kilograms: Double, at time: Date?) async throws -> WeightLog {
        let log = try DiaryRules.weight(kilograms: kilograms, at: time ?? Date())
        try await insert(.weight, id: log.id, time: log.time, value: log.kilograms)
        return log
    }

    func weightBefore(_ time: Date) async throws -> WeightLog? {
        let user = self.user, b = Self.ms(time)
        return try await store.run {
            for try await (id, t, kg) in try await store.query("""
                SELECT id, time_ms, kg FROM weight WHERE user_id = \(user) AND time_ms < \(b) ORDER BY time_ms DESC, id DESC LIMIT 1
                """).decode((String, Int64, Double).self) { return WeightLog(id: id, time: Self.date(t), kilograms: kg) }
            return nil
        }
    }

    func weightLogs(from: Date, to: Date) async throws -> [WeightLog] {
        try await logs(.weight, from: from, to: to).map { WeightLog(id: $0.id, time: $0.time, kilograms: $0.value) }
    }

    func loggedDays(timeZone: TimeZone) async throws -> Set<LocalDay> {
        let user = self.user
        return try await store.run {
            var out = Set<LocalDay>()
            for try await t in try await store.query("SELECT time_ms FROM meals WHERE user_id = \(user)").decode(Int64.self) {
                out.insert(LocalDay(Self.date(t), timeZone: timeZone))
            }
            return out
        }
    }

    func updateAchievements() async throws {
        let user = self.user, logger = store.logger
        let goals = try await goals()
        try await store.transaction { conn in
            var meals: [(time: Date, proteinG: Double)] = []
            for try await (t, p) in try await conn.query("SELECT time_ms, protein_g FROM meals WHERE user_id = \(user)", logger: logger)
                .decode((Int64, Double).self) { meals.append((Self.date(t), p)) }
            var water: [WaterLog] = []
            for try await (id, t, ml) in try await conn.query("SELECT id, time_ms, ml FROM water WHERE user_id = \(user)", logger: logger)
                .decode((String, Int64, Double).self) { water.append(WaterLog(id: id, time: Self.date(t), milliliters: ml)) }
            let earned = DiaryRules.achievements(meals: meals, water: water, goals: goals, timeZone: TimeZone(identifier: "UTC")!)
            for a in earned {
                let t = Self.ms(a.unlockedAt)
                _ = try await conn.query("""
                    INSERT INTO achievements (user_id, id, title, unlocked_ms) VALUES (\(user), \(a.id), \(a.title), \(t))
                    ON CONFLICT (user_id, id) DO NOTHING
                    """, logger: logger)
            }
        }
    }

    // MARK: - Sync

    func applySync(_ c: SyncChange) async throws -> SyncOutcome {
        let user = self.user, logger = store.logger, kind = c.kind.rawValue, id = c.id
        let table = c.kind == .meal ? "meals" : c.kind.rawValue
        return try await store.transaction { conn in
            // The feed trigger's lock, taken first: this transaction's reads and its numbered change stay in one order.
            try await PostgresStore.drain(conn.query("SELECT pg_advisory_xact_lock(hashtext('foodmoment-changes'), hashtext(\(user)))", logger: logger))
            var current: Int64?, lastOp: String?
            if c.kind == .goals {
                current = try await Self.goalsRow(user: user, conn, logger)?.updatedMs
            } else {
                for try await v in try await conn.query("SELECT updated_ms FROM \(unescaped: table) WHERE user_id = \(user) AND id = \(id)",
                                                        logger: logger).decode(Int64.self) { current = v }
            }
            for try await v in try await conn.query("SELECT op FROM changes WHERE user_id = \(user) AND kind = \(kind) AND entity_id = \(id)",
                                                    logger: logger).decode(String.self) { lastOp = v }
            let outcome = DiaryRules.resolve(c, currentMs: current, deleted: current == nil && lastOp == "delete")
            let changed = Self.ms(c.changedAt)
            if c.op == .delete, current == nil, lastOp != "delete" {
                // A tombstone for an entry this server never had, so a late edit from another device cannot revive it.
                _ = try await conn.query("""
                    INSERT INTO changes (user_id, kind, entity_id, op, seq, changed_ms)
                    VALUES (\(user), \(kind), \(id), 'delete', nextval('changes_seq'), \(changed))
                    ON CONFLICT (user_id, kind, entity_id) DO UPDATE SET op = excluded.op, seq = excluded.seq, changed_ms = excluded.changed_ms
                    """, logger: logger)
            }
            guard outcome == .applied else { return outcome }
            switch c.op {
            case .delete:
                guard c.kind != .goals else { break }   // refused by `DiaryRules.check`
                _ = try await conn.query("DELETE FROM \(unescaped: table) WHERE user_id = \(user) AND id = \(id)", logger: logger)
            case .upsert:
                if let g = c.goals {
                    try await Self.saveGoals(g, updatedMs: changed, user: user, conn, logger)
                } else if let m = c.meal {
                    try await Self.save(m, user: user, conn, logger)
                } else if let (t, v) = c.water.map({ (Self.ms($0.time), $0.milliliters) }) ?? c.weight.map({ (Self.ms($0.time), $0.kilograms) }) {
                    let column = c.kind == .water ? "ml" : "kg"
                    _ = try await conn.query("""
                        INSERT INTO \(unescaped: table) (user_id, id, time_ms, \(unescaped: column), updated_ms)
                        VALUES (\(user), \(id), \(t), \(v), \(changed))
                        ON CONFLICT (user_id, id) DO UPDATE SET time_ms = excluded.time_ms,
                          \(unescaped: column) = excluded.\(unescaped: column), updated_ms = excluded.updated_ms
                        """, logger: logger)
                }
            }
            return outcome
        }
    }

    func changes(after seq: Int64, limit: Int, kinds: Set<SyncKind>) async throws -> SyncPage {
        let user = self.user, n = max(1, limit), names = kinds.map(\.rawValue).sorted()
        return try await store.run {
            var out: [SyncChange] = []
            var rows = 0, last = seq
            for try await (s, kind, id, op, changed, record, wt, ml, gt, kg) in try await store.query("""
                SELECT c.seq, c.kind, c.entity_id, c.op, c.changed_ms, m.record, w.time_ms, w.ml, g.time_ms, g.kg FROM changes c
                LEFT JOIN meals m ON c.kind = 'meal' AND m.user_id = c.user_id AND m.id = c.entity_id
                LEFT JOIN water w ON c.kind = 'water' AND w.user_id = c.user_id AND w.id = c.entity_id
                LEFT JOIN weight g ON c.kind = 'weight' AND g.user_id = c.user_id AND g.id = c.entity_id
                WHERE c.user_id = \(user) AND c.seq > \(seq) AND c.kind = ANY(\(names)) ORDER BY c.seq LIMIT \(n + 1)
                """).decode((Int64, String, String, String, Int64, String?, Int64?, Double?, Int64?, Double?).self) {
                rows += 1
                guard rows <= n else { continue }    // the extra row only says another page follows
                last = s
                guard let k = SyncKind(rawValue: kind) else { continue }
                var c = SyncChange(kind: k, id: id, op: op == "delete" ? .delete : .upsert, changedAt: Self.date(changed), seq: s)
                if c.op == .upsert {
                    if let record { c.meal = try Self.decode(record); c.changedAt = c.meal!.updatedAt }
                    if let wt, let ml { c.water = WaterLog(id: id, time: Self.date(wt), milliliters: ml) }
                    if let gt, let kg { c.weight = WeightLog(id: id, time: Self.date(gt), kilograms: kg) }
                    guard c.meal != nil || c.water != nil || c.weight != nil || k == .goals else { continue }
                }
                out.append(c)
            }
            // The one goals entry, if on this page, read on its own rather than joined into every row.
            if let at = out.firstIndex(where: { $0.kind == .goals && $0.op == .upsert }) {
                let logger = store.logger
                let row = try await store.client.withConnection { conn in try await Self.goalsRow(user: user, conn, logger) }
                if let row { out[at].goals = row.goals; out[at].changedAt = Self.date(row.updatedMs) } else { out.remove(at: at) }
            }
            return SyncPage(changes: out, next: last, more: rows > n)
        }
    }

    func achievements() async throws -> [Achievement] {
        let user = self.user
        return try await store.run {
            var out: [Achievement] = []
            for try await (id, title, t) in try await store.query("""
                SELECT id, title, unlocked_ms FROM achievements WHERE user_id = \(user) ORDER BY unlocked_ms, id
                """).decode((String, String, Int64).self) { out.append(Achievement(id: id, title: title, unlockedAt: Self.date(t))) }
            return out
        }
    }
}

/// The first of several results to arrive resumes one continuation; the later ones are dropped. A result that comes
/// before the continuation is kept for it.
final class FirstAnswer<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var early: Result<T, any Error>?
    private var given = false

    func wait(_ c: CheckedContinuation<T, any Error>) {
        let ready: Result<T, any Error>? = lock.withLock {
            if let early, !given { given = true; return early }
            continuation = c
            return nil
        }
        if let ready { c.resume(with: ready) }
    }

    func give(_ result: Result<T, any Error>) {
        let c: CheckedContinuation<T, any Error>? = lock.withLock {
            guard !given else { return nil }
            guard let waiting = continuation else { early = early ?? result; return nil }
            given = true
            continuation = nil
            return waiting
        }
        c?.resume(with: result)
    }
}
