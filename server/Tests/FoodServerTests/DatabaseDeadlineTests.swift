@testable import FoodServer
import FoodCore
import Foundation
import MealStore
import PostgresNIO
import Testing
import _ConnectionPoolModule

/// A database that stops answering is a 503 within the deadline: even when the work under it ignores cancellation, as a
/// PostgreSQL query already on a connection does (the caller is answered when the deadline passes, not when the work
/// finally returns), and when the connection is lost inside a transaction (PostgresNIO wraps that error).
@Suite("The database deadline and a connection lost inside a transaction")
struct DatabaseDeadlineTests {
    /// Returns `value` after `seconds` on a dispatch timer, whatever happens to the task awaiting it.
    static func uncancellable<T: Sendable>(_ value: T, after seconds: Double) async -> T {
        await withCheckedContinuation { c in
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { c.resume(returning: value) }
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func theDeadlineAnswersWhileTheWorkIsStillRunning() async throws {
        let started = ContinuousClock.now
        await #expect(throws: PostgresStoreError.self) {
            try await PostgresStore.first({ await Self.uncancellable(1, after: 20) }, within: .milliseconds(200))
        }
        // The work takes 20 s; waiting for it (as a task group does) would take all of them.
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test func anAnswerOrAnErrorWithinTheDeadlinePassesThrough() async throws {
        #expect(try await PostgresStore.first({ await Self.uncancellable(7, after: 0.01) }, within: .seconds(30)) == 7)
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await PostgresStore.first({ () async throws -> Int in throw Refused() }, within: .seconds(30))
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func aCancelledCallerIsAnsweredAtOnce() async throws {
        let caller = Task { try await PostgresStore.first({ await Self.uncancellable(1, after: 20) }, within: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    @Test func thePostgresStoreAnswers503WhenTheDeadlinePasses() async throws {
        let client = PostgresClient(configuration: try PostgresStore.configuration(url: "postgres://u@127.0.0.1:1/x"),
                                    backgroundLogger: TestPostgres.logger)
        let store = PostgresStore(client: client, logger: TestPostgres.logger, deadline: .milliseconds(200))
        let started = ContinuousClock.now
        defer { #expect(ContinuousClock.now - started < .seconds(10)) }
        do {
            _ = try await store.run { await Self.uncancellable(1, after: 20) }
            Issue.record("no error")
        } catch let error as APIError {
            #expect(error.code == "database_unavailable" && error.message.contains("no answer within 0.2 s"), "\(error.message)")
        }
    }

    /// A query already on a connection ignores its task's cancellation, so without `statement_timeout` a statement
    /// whose caller was answered 503 ran on in PostgreSQL, holding a connection of the pool and its locks.
    @Test(.enabled(if: postgresAvailable), .timeLimit(.minutes(1)))
    func aStatementPastTheDeadlineIsStoppedByPostgreSQL() async throws {
        let database = try await TestPostgres.Database(deadline: .milliseconds(500))
        let logger = TestPostgres.logger
        /// Statements of the test database still running `pg_sleep`.
        func sleeping() async throws -> Int {
            try await TestPostgres.withClient(TestPostgres.url!) { admin in
                let rows = try await admin.query("""
                    SELECT count(*)::int FROM pg_stat_activity
                    WHERE datname = \(database.name) AND state = 'active' AND query LIKE 'SELECT pg_sleep%'
                    """, logger: logger)
                for try await n in rows.decode(Int.self) { return n }
                return 0
            }
        }
        do {
            let shown = try await database.store.transaction { conn -> String in
                for try await v in try await conn.query("SHOW statement_timeout", logger: logger).decode(String.self) { return v }
                return ""
            }
            #expect(shown == "500ms", "every connection carries the store's deadline")

            // The store's deadline and PostgreSQL's timeout race; either way a 503, and nothing runs on.
            let started = ContinuousClock.now
            do {
                _ = try await database.store.transaction { conn -> Int in
                    // Read to the end: a statement's error arrives with its rows.
                    for try await _ in try await conn.query("SELECT pg_sleep(30)", logger: logger) {}
                    return 1
                }
                Issue.record("pg_sleep(30) returned")
            } catch let error as APIError {
                #expect(error.status == .serviceUnavailable && error.code == "database_unavailable", "\(error)")
            }
            #expect(ContinuousClock.now - started < .seconds(5))
            var running = try await sleeping()
            for _ in 0..<30 where running > 0 {
                try await Task.sleep(for: .milliseconds(100))
                running = try await sleeping()
            }
            #expect(running == 0, "the statement still runs in PostgreSQL after its caller was answered")

            // A store whose own deadline is longer: PostgreSQL's timeout answers, and says so.
            let patient = PostgresStore(client: database.client, logger: logger, deadline: .seconds(30))
            do {
                _ = try await patient.transaction { conn -> Int in
                    // Read to the end: a statement's error arrives with its rows.
                    for try await _ in try await conn.query("SELECT pg_sleep(30)", logger: logger) {}
                    return 1
                }
                Issue.record("pg_sleep(30) returned")
            } catch let error as APIError {
                #expect(error.status == .serviceUnavailable && error.message.contains("statement_timeout"), "\(error)")
            }
            #expect(ContinuousClock.now - started < .seconds(10))
        } catch {
            await database.drop()
            throw error
        }
        await database.drop()
    }

    /// A lock wait that `statement_timeout` stops fails with the lock's SELECT, whose error arrives with its rows: read
    /// unconsumed, the wait failed unseen, the transaction was aborted, and the next statement's error was a 500.
    @Test(.enabled(if: postgresAvailable), .timeLimit(.minutes(1)))
    func aLockWaitStoppedByTheTimeoutIsA503() async throws {
        let database = try await TestPostgres.Database(deadline: .milliseconds(500))
        let logger = TestPostgres.logger
        do {
            let (user, _) = try await database.store.createToken(forUser: "locked", now: Date())
            let id = user.rawValue
            // Another session holds the user's feed lock for 3 s, as a slow push would.
            let holder = Task {
                try await TestPostgres.withClient(database.url) { client in
                    try await client.withTransaction(logger: logger) { conn in
                        for try await _ in try await conn.query(
                            "SELECT pg_advisory_xact_lock(hashtext('foodmoment-changes'), hashtext(\(id)))", logger: logger) {}
                        for try await _ in try await conn.query("SELECT pg_sleep(3)", logger: logger) {}
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(500))
            // A store whose own deadline is long: the wait is stopped by PostgreSQL at 0.5 s.
            let patient = PostgresStore(client: database.client, logger: logger, deadline: .seconds(30))
            let water = WaterLog(id: "w-locked", time: Date(timeIntervalSince1970: 1_795_000_000), milliliters: 250)
            do {
                _ = try await patient.diary(for: user).applySync(SyncChange(kind: .water, id: water.id, op: .upsert,
                                                                            changedAt: water.time, water: water))
                Issue.record("applied while another session held the lock")
            } catch let error as APIError {
                #expect(error.status == .serviceUnavailable && error.message.contains("statement_timeout"), "\(error)")
            } catch {
                Issue.record("not a 503: \(error)")
            }
            try await holder.value
        } catch {
            await database.drop()
            throw error
        }
        await database.drop()
    }

    @Test(.enabled(if: postgresAvailable))
    func aConnectionLostInsideATransactionIs503AndOurOwnErrorsKeepTheirMeaning() async throws {
        let database = try await TestPostgres.Database()
        do {
            // The backend ends its own session mid-transaction (FATAL 57P01), as a PostgreSQL shutting down does.
            do {
                _ = try await database.store.transaction { conn in
                    _ = try await conn.query("SELECT pg_terminate_backend(pg_backend_pid())", logger: TestPostgres.logger)
                    return 1
                }
                Issue.record("the transaction went through")
            } catch let error as APIError {
                #expect(error.status == .serviceUnavailable && error.code == "database_unavailable", "\(error)")
            }
            // The pool recovers by itself: a transaction goes through again (the first try may still meet the closed
            // connection, which is a 503 as well).
            var recovered = false
            for _ in 0..<50 where !recovered {
                recovered = (try? await database.store.transaction { conn in
                    for try await one in try await conn.query("SELECT 1", logger: TestPostgres.logger).decode(Int.self) { return one }
                    return 0
                }) == 1
                if !recovered { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(recovered, "a transaction succeeds again after the lost connection")
            struct Refused: Error {}
            await #expect(throws: Refused.self) { try await database.store.transaction { _ -> Int in throw Refused() } }
        } catch {
            await database.drop()
            throw error
        }
        await database.drop()
    }
}

/// What a lease throws when PostgreSQL has been unreachable for a while (the pool's circuit breaker) or the pool is
/// shutting down: a 503 that says retry, like a refused connection — not a 500 (a slow run of `anUnreachableDatabaseIsA503WithRetryAfterAndReadyzSaysSo` once met
/// the breaker before its request and answered 500). No database needed: nothing is sent.
@Suite("PostgreSQL store errors")
struct PostgresStoreErrorTests {
    @Test func poolErrorsAreA503() async throws {
        let client = PostgresClient(configuration: try PostgresStore.configuration(url: "postgres://foodmoment:x@127.0.0.1:1/nothing"),
                                    backgroundLogger: TestPostgres.logger)
        let store = PostgresStore(client: client, logger: TestPostgres.logger, deadline: .seconds(2))
        for poolError in [ConnectionPoolError.connectionCreationCircuitBreakerTripped, .poolShutdown, .requestCancelled] {
            do {
                _ = try await store.run { () async throws -> Int in throw poolError }
                Issue.record("\(poolError) was not thrown")
            } catch let error as APIError {
                #expect(error.status == .serviceUnavailable && error.code == "database_unavailable", "\(poolError): \(error)")
            }
        }
    }
}
