import FoodServer
import Foundation
import Logging
import PostgresNIO
import Testing

/// The PostgreSQL the tests use: `./run-tests` and `.ci/run` start one from Debian (`server/postgres-for-tests`: its
/// own data folder, loopback, a free port) and set FOODMOMENT_TEST_POSTGRES_URL. With FOODMOMENT_TEST_STORE=postgres
/// every LiveServer keeps its accounts and diaries there: `./run-tests` runs the server suite once per store.
enum TestPostgres {
    static var url: String? { ProcessInfo.processInfo.environment["FOODMOMENT_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 } }
    static var everyServer: Bool { ProcessInfo.processInfo.environment["FOODMOMENT_TEST_STORE"] == "postgres" }
    /// Set by ./run-tests: a missing database is then a failure, not a skipped test.
    static var required: Bool { ProcessInfo.processInfo.environment["FOODMOMENT_REQUIRE_POSTGRES"] == "1" }

    static var logger: Logger { var l = Logger(label: "test.postgres"); l.logLevel = .warning; return l }

    /// `url` with another database name.
    static func url(_ base: String, database: String) -> String {
        var c = URLComponents(string: base)!
        c.path = "/" + database
        return c.string!
    }

    /// Runs `body` with a connected client on `url`.
    static func withClient<T: Sendable>(_ url: String, _ body: (PostgresClient) async throws -> T) async throws -> T {
        let client = PostgresClient(configuration: try PostgresStore.configuration(url: url), backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    /// A new empty database of its own on the test server, with a migrated store on it (one pool of connections; every
    /// server given it shares it, as instances share a database). `drop()` closes the pool and removes the database.
    final class Database: @unchecked Sendable {
        let url: String
        let name: String
        let client: PostgresClient
        let store: PostgresStore
        private let task: Task<Void, Never>

        /// `deadline`: the store's deadline for a call, and its connections' `statement_timeout`.
        init(deadline: Duration = .seconds(5)) async throws {
            guard let base = TestPostgres.url else {
                throw TestPostgresMissing()
            }
            name = "fm_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
            let name = self.name
            try await withClient(base) { admin in
                _ = try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: TestPostgres.logger)
            }
            url = TestPostgres.url(base, database: name)
            let client = PostgresClient(configuration: try PostgresStore.configuration(url: url, deadline: deadline),
                                        backgroundLogger: TestPostgres.logger)
            self.client = client
            task = Task { await client.run() }
            store = PostgresStore(client: client, logger: TestPostgres.logger, deadline: deadline)
            try await store.migrate()
        }

        func drop() async {
            task.cancel()
            _ = await task.result
            guard let base = TestPostgres.url else { return }
            let name = self.name
            _ = try? await withClient(base) { admin in
                try await admin.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: TestPostgres.logger)
            }
        }
    }
}

struct TestPostgresMissing: Error, CustomStringConvertible {
    var description: String {
        "FOODMOMENT_TEST_POSTGRES_URL is not set: run the tests through ./run-tests (it starts PostgreSQL from Debian), or point it at a PostgreSQL you may create databases on"
    }
}

/// Tests that need PostgreSQL run when it is there, and fail (not skip) when ./run-tests promised it.
let postgresAvailable = TestPostgres.url != nil || TestPostgres.required
