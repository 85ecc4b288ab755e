import ArgumentParser
import FoodMoment
import FoodServer
import Foundation
import Hummingbird
import Logging

/// `./foodmoment serve …` runs this binary with the arguments after `serve`.
@main
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "foodmoment serve",
        abstract: "The FoodMoment server: the CLI's pipeline, nutrition tables and barcodes behind /api/v1 over HTTP.",
        discussion: """
        Every /api/v1 route needs `Authorization: Bearer TOKEN`; create a personal token with `token create`. \
        GET /healthz and /readyz need none. Errors are JSON: {"error": {"code", "message"}}. SIGTERM or Ctrl-C \
        lets requests in flight finish, then stops.

        Examples:
          ./foodmoment serve --port 8080
          ./foodmoment serve token create --user alice
          curl -H "Authorization: Bearer $TOKEN" -H "Content-Type: image/jpeg" \\
               --data-binary @samples/banana.jpg http://127.0.0.1:8080/api/v1/food/analyze
        """,
        subcommands: [Run.self, Token.self],
        defaultSubcommand: Run.self
    )
}

struct DataOption: ParsableArguments {
    @Option(help: "The server's data folder (default: <your data folder>/server).") var data: String?

    var directory: String { data ?? ResourceLocator.userDataDirectory() + "/server" }
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Serve the API (the default).")

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on (0: any free port, printed at start).") var port = 8080
    @OptionGroup var data: DataOption
    @Option(help: "Largest request body in MB (a photo).") var maxBodyMb = 20
    @Option(help: "Photos analysed at once (each holds its own copy of the models, ~40 MB).") var analyzers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 4))
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel = "info"

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535, not \(port)") }
        guard (1...512).contains(maxBodyMb) else { throw ValidationError("--max-body-mb must be 1…512, not \(maxBodyMb)") }
        guard (1...64).contains(analyzers) else { throw ValidationError("--analyzers must be 1…64, not \(analyzers)") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level \(logLevel) is not one of trace, debug, info, notice, warning, error, critical") }
    }

    func run() async throws {
        var logger = Logger(label: "foodmoment.server")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        var config = ServerConfiguration(dataDirectory: data.directory)
        config.host = host
        config.port = port
        config.maxBodyBytes = maxBodyMb << 20
        config.analyzers = analyzers
        let host = self.host, directory = config.dataDirectory
        let app = try FoodServer.application(config, logger: logger) { bound in
            FileHandle.standardOutput.write(Data("foodmoment serve: listening on http://\(host):\(bound) (data: \(directory))\n".utf8))
        }
        try await app.runService()
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
            try FileManager.default.createDirectory(atPath: data.directory, withIntermediateDirectories: true)
            let store = try AccountStore(path: ServerConfiguration(dataDirectory: data.directory).accountsPath)
            do {
                let (_, token) = try store.createToken(forUser: user)
                print(token)
            } catch let error as AccountError {
                throw ValidationError(error.description)
            }
        }
    }
}
