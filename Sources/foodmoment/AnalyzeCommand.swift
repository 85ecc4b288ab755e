import ArgumentParser

struct AnalyzeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "analyze", abstract: "Analyse meal photos (files and folders).")
    @Argument(help: "Photos or folders (walked recursively).") var paths: [String]
    func run() async throws {}
}
