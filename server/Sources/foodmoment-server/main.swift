import ArgumentParser
import CurlTransport
import FoodMoment
import FoodServer
import Foundation
import Hummingbird
import LLMRefiner
import Logging
import Metrics
import Prometheus

/// `./foodmoment serve …` runs this binary with the arguments after `serve`.
@main
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "foodmoment serve",
        abstract: "The FoodMoment server: the CLI's pipeline, nutrition tables and barcodes behind /api/v1 over HTTP.",
        discussion: """
        Every /api/v1 route needs `Authorization: Bearer TOKEN`: a personal token from `token create`, or the access \
        token POST /api/v1/auth/apple gives for a Sign in with Apple identity token (with --apple-bundle-id). \
        GET /healthz, /readyz and /metrics need none. `refine=true` on analyze uses the CLI's LLM settings \
        (FOODMOMENT_LLM_PROVIDER, FOODMOMENT_LLM_MODEL, … or llm.json); without them it is a 400. Errors are JSON: {"error": {"code", "message"}}. SIGTERM or \
        Ctrl-C lets requests in flight finish, then stops.

        Every option can also come from the environment: FOODMOMENT_SERVER_<OPTION> (e.g. FOODMOMENT_SERVER_PORT=8080, \
        FOODMOMENT_SERVER_APPLE_BUNDLE_ID=com.example.app); a flag wins over the environment. The access tokens' \
        secret comes from FOODMOMENT_JWT_SECRET (32+ bytes, the same on every instance), else DATA/jwt-secret.

        Examples:
          ./foodmoment serve --port 8080
          ./foodmoment serve token create --user alice
          curl -H "Authorization: Bearer $TOKEN" -H "Content-Type: image/jpeg" \\
               --data-binary @samples/banana.jpg http://127.0.0.1:8080/api/v1/food/analyze
        """,
        version: FoodMomentVersion.string,
        subcommands: [Run.self, Token.self, Backup.self, Restore.self],
        defaultSubcommand: Run.self
    )
}

struct DataOption: ParsableArguments {
    @Option(help: "The server's data folder (default: <your data folder>/server).") var data: String?
    @Option(help: ArgumentHelp("PostgreSQL for accounts and diaries, shared by every instance: postgres://USER:PASSWORD@HOST:PORT/DATABASE (add ?sslmode=require for TLS). Default: SQLite files in the data folder (one instance).", valueName: "url"))
    var database: String?

    var directory: String { data ?? Environment.value("data") ?? ResourceLocator.userDataDirectory(environment: ProcessInfo.processInfo.environment) + "/server" }

    @Option(help: "With --database: longest a request waits for PostgreSQL (a connection included) before a 503 with Retry-After, seconds (default 5).")
    var databaseTimeout: Double?

    var databaseURL: String? { database ?? Environment.value("database") }

    func validate() throws {
        if let url = databaseURL {
            do { _ = try PostgresStore.configuration(url: url) } catch { throw ValidationError("\(error)") }
        }
        _ = try timeout()
    }

    /// `--database-timeout` (or its variable), seconds.
    func timeout() throws -> Double {
        let t = try databaseTimeout ?? Environment.number("database-timeout", 5.0)
        guard t >= 0.1, t <= 300 else { throw ValidationError("--database-timeout must be 0.1…300 s, not \(t)") }
        return t
    }

    /// Runs `body` with the store the options name: PostgreSQL (connected and migrated) or the data folder's SQLite.
    func withStore<T: Sendable>(logger: Logger, _ body: (any ServerStore) async throws -> T) async throws -> T {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard let url = databaseURL else { return try await body(try LocalStore(dataDirectory: directory)) }
        do {
            return try await PostgresStore.with(url: url, logger: logger, deadline: .milliseconds(Int64(try timeout() * 1000))) { try await body($0) }
        } catch let error as PostgresStoreError {
            throw ValidationError(error.description)
        }
    }
}

/// `FOODMOMENT_SERVER_<NAME>`: the environment's value for an option left out on the command line.
enum Environment {
    static func value(_ option: String) -> String? {
        let key = "FOODMOMENT_SERVER_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
        return ProcessInfo.processInfo.environment[key].flatMap { $0.isEmpty ? nil : $0 }
    }

    static func number<T: LosslessStringConvertible>(_ option: String, _ fallback: T) throws -> T {
        guard let text = value(option) else { return fallback }
        guard let v = T(text) else { throw ValidationError("FOODMOMENT_SERVER_\(option.uppercased().replacingOccurrences(of: "-", with: "_"))=\(text) is not a number") }
        return v
    }
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Serve the API (the default).")

    @Option(help: "Address to listen on (default 127.0.0.1).") var host: String?
    @Option(help: "Port to listen on (0: any free port, printed at start; default 8080).") var port: Int?
    @OptionGroup var data: DataOption
    @Option(help: "Largest request body in MB (a photo; default 20).") var maxBodyMb: Int?
    @Option(help: "Photos analysed at once (each holds its own copy of the models, ~40 MB; default: cores, at most 4).") var analyzers: Int?
    @Option(help: "Longest an analysis may wait and run, seconds, before a 503 with Retry-After (default 60).") var analyzeTimeout: Double?
    @Option(help: "Photos one user may analyse per minute, per instance (default 30); more get 429 with Retry-After.") var analyzePerMinute: Int?
    @Option(help: "Sign in with Apple: the app's bundle id (the identity token's audience). Without it /auth/apple is off.") var appleBundleId: String?
    @Option(help: "Where Apple's signing keys are published (JWKS).") var appleJwksUrl: String?
    @Option(help: "Sign in with Apple in the web app: its Services ID (the web token's audience); needs --apple-bundle-id.") var appleWebClientId: String?
    @Option(help: "Where the web app sends a person to sign in with Apple (default Apple's).") var appleAuthorizeUrl: String?
    @Option(help: "Lifetime of an access token, minutes (default 15).") var accessTokenMinutes: Double?
    @Option(help: "Lifetime of a refresh token, days (default 60).") var refreshTokenDays: Double?
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical (default info).") var logLevel: String?
    @Option(help: ArgumentHelp("The web app's folder, served at / (default: web/ beside the binary or the checkout, or FOODMOMENT_WEB).", valueName: "dir")) var web: String?

    func configuration() throws -> (ServerConfiguration, Logger.Level) {
        var c = ServerConfiguration(dataDirectory: data.directory)
        c.environment = ProcessInfo.processInfo.environment
        c.webDirectory = web ?? ResourceLocator.directory(named: "web", environmentVariable: "FOODMOMENT_WEB", containing: "index.html",
                                                          environment: c.environment)
        c.host = host ?? Environment.value("host") ?? c.host
        c.port = try port ?? Environment.number("port", c.port)
        c.maxBodyBytes = (try maxBodyMb ?? Environment.number("max-body-mb", 20)) << 20
        c.analyzers = try analyzers ?? Environment.number("analyzers", c.analyzers)
        c.analyzeTimeout = try analyzeTimeout ?? Environment.number("analyze-timeout", c.analyzeTimeout)
        c.analyzePerMinute = try analyzePerMinute ?? Environment.number("analyze-per-minute", c.analyzePerMinute)
        c.appleBundleID = appleBundleId ?? Environment.value("apple-bundle-id")
        if let text = appleJwksUrl ?? Environment.value("apple-jwks-url") {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? "") else {
                throw ValidationError("--apple-jwks-url \(text) is not an http(s) URL")
            }
            c.appleKeySetURL = url
        }
        c.appleWebClientID = appleWebClientId ?? Environment.value("apple-web-client-id")
        if c.appleWebClientID != nil, c.appleBundleID == nil {
            throw ValidationError("--apple-web-client-id needs --apple-bundle-id (the app's bundle id; Apple's keys and accounts are shared)")
        }
        if let text = appleAuthorizeUrl ?? Environment.value("apple-authorize-url") {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? "") else {
                throw ValidationError("--apple-authorize-url \(text) is not an http(s) URL")
            }
            c.appleAuthorizeURL = url
        }
        c.accessTokenLifetime = (try accessTokenMinutes ?? Environment.number("access-token-minutes", 15)) * 60
        c.refreshTokenLifetime = (try refreshTokenDays ?? Environment.number("refresh-token-days", 60)) * 86_400
        c.jwtSecret = ProcessInfo.processInfo.environment["FOODMOMENT_JWT_SECRET"]
        let level = logLevel ?? Environment.value("log-level") ?? "info"
        guard (0...65535).contains(c.port) else { throw ValidationError("--port must be 0…65535, not \(c.port)") }
        guard (1...512).contains(c.maxBodyBytes >> 20) else { throw ValidationError("--max-body-mb must be 1…512, not \(c.maxBodyBytes >> 20)") }
        guard (1...64).contains(c.analyzers) else { throw ValidationError("--analyzers must be 1…64, not \(c.analyzers)") }
        guard c.analyzeTimeout >= 1, c.analyzeTimeout <= 3600 else { throw ValidationError("--analyze-timeout must be 1…3600 s, not \(c.analyzeTimeout)") }
        guard (1...100_000).contains(c.analyzePerMinute) else { throw ValidationError("--analyze-per-minute must be 1…100000, not \(c.analyzePerMinute)") }
        guard c.accessTokenLifetime >= 60, c.accessTokenLifetime <= 86_400 else { throw ValidationError("--access-token-minutes must be 1…1440") }
        guard c.refreshTokenLifetime >= 3600, c.refreshTokenLifetime <= 400 * 86_400 else { throw ValidationError("--refresh-token-days must be 0.05…400") }
        if let secret = c.jwtSecret, !secret.isEmpty, secret.utf8.count < 32 { throw ValidationError("FOODMOMENT_JWT_SECRET must be at least 32 bytes") }
        guard let parsed = Logger.Level(rawValue: level) else { throw ValidationError("--log-level \(level) is not one of trace, debug, info, notice, warning, error, critical") }
        return (c, parsed)
    }

    func validate() throws { _ = try configuration() }

    /// The URL without its password, for the log.
    static func redacted(_ url: String) -> String {
        guard var c = URLComponents(string: url) else { return "(unparsable URL)" }
        if c.password != nil { c.password = "***" }
        return c.string ?? "(unparsable URL)"
    }

    func run() async throws {
        let (configured, level) = try configuration()
        var config = configured
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        config.metrics = registry
        config.keySetFetcher = URLSessionKeySetFetcher()
        let logger = Logger(label: "foodmoment.server")
        // The CLI's LLM settings (FOODMOMENT_LLM_* or llm.json); only `refine=true` requests use them.
        let llm: LLMConfiguration?
        do {
            llm = try LLMConfiguration.load(environment: ProcessInfo.processInfo.environment, userDataDirectory: ResourceLocator.userDataDirectory(environment: ProcessInfo.processInfo.environment))
        } catch {
            throw ValidationError("the LLM settings are wrong: \(error.description)")
        }
        if let llm {
            let llmLogger = logger
            config.llm = LLMClient(configuration: llm, transport: CurlHTTPTransport(userAgent: "FoodMoment-server (self-hosted meal analysis)"),
                                   clock: ContinuousClock(), note: { llmLogger.notice("\($0)") })
            config.llmMaxSide = llm.maxSide
            logger.notice("refine=true uses \(llm.provider.rawValue) \(llm.model) (\(llm.isLocal ? "local" : "photos leave this machine"))")
        }
        let host = config.host, directory = config.dataDirectory
        let where_ = data.databaseURL.map { "PostgreSQL " + Self.redacted($0) + ", photos: " + directory } ?? "data: " + directory
        try await data.withStore(logger: logger) { store in
            var config = config
            config.store = store
            let app = try await FoodServer.application(config, logger: logger) { bound in
                FileHandle.standardOutput.write(Data("foodmoment serve: listening on http://\(host):\(bound) (\(where_))\n".utf8))
            }
            try await app.runService()
        }
    }
}

struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "token", abstract: "Personal API tokens.",
                                                    subcommands: [Create.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Create a user (if new) and print a new personal API token for them on stdout (stored hashed).",
            discussion: """
            Example:
              TOKEN=$(./foodmoment serve token create --user alice)
            """
        )

        @Option(help: "User name: 1–64 letters, digits, '.', '_' or '-'.") var user: String
        @OptionGroup var data: DataOption

        func run() async throws {
            let token = try await data.withStore(logger: Logger(label: "foodmoment.server")) { store in
                do { return try await store.createToken(forUser: user, now: Date()).token } catch let error as AccountError {
                    throw ValidationError(error.description)
                }
            }
            print(token)
        }
    }
}

struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Back up the server's data folder into one file, while it runs (SQLite online backup of accounts and every diary, plus photos).",
        discussion: """
        Every SQLite database goes in as a consistent snapshot (SQLite's backup API), every other file (kept photos, \
        taught foods, the token secret) as it is: a write acknowledged before the backup started is in it. With \
        --database (PostgreSQL) the accounts and diaries are in PostgreSQL: back them up with
          pg_dump --format=custom --file=foodmoment.dump "$FOODMOMENT_SERVER_DATABASE"
        and this file holds the photos and taught foods. Restore with `restore` into a new folder.

        Examples:
          ./foodmoment serve backup --to /backups/foodmoment-$(date +%F).tar
          ./foodmoment serve backup --data /var/lib/foodmoment --to /backups/foodmoment.tar
        """
    )

    @Option(help: ArgumentHelp("The backup file to write (a POSIX tar; replaced if it exists).", valueName: "file")) var to: String
    @OptionGroup var data: DataOption

    func run() async throws {
        let summary: ServerBackup.Summary
        do { summary = try ServerBackup.write(dataDirectory: data.directory, to: to) } catch let error as ServerBackup.Failure {
            throw ValidationError(error.description)
        }
        if data.databaseURL != nil {
            FileHandle.standardError.write(Data("foodmoment serve backup: accounts and diaries are in PostgreSQL: back them up with pg_dump (see --help)\n".utf8))
        }
        print("foodmoment serve backup: \(to): \(summary.databases) databases, \(summary.files) files, \(summary.bytes / 1024) KB")
    }
}

struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Unpack a backup into a new (or empty) data folder; then start the server on it.",
        discussion: """
        Example:
          ./foodmoment serve restore --from /backups/foodmoment-2026-12-06.tar --data /var/lib/foodmoment-restored
          ./foodmoment serve --data /var/lib/foodmoment-restored
        """
    )

    @Option(help: ArgumentHelp("The backup file `backup` wrote.", valueName: "file")) var from: String
    @Option(help: ArgumentHelp("The data folder to create (must be new or empty).", valueName: "dir")) var data: String

    func run() async throws {
        let summary: ServerBackup.Summary
        do { summary = try ServerBackup.restore(from: from, into: data) } catch let error as ServerBackup.Failure {
            throw ValidationError(error.description)
        }
        print("foodmoment serve restore: \(data): \(summary.databases) databases, \(summary.files) files, \(summary.bytes / 1024) KB")
    }
}
