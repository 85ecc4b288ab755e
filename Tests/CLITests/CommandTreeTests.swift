import ArgumentParser
import Testing
@testable import foodmoment

@Suite("the command tree")
struct CommandTreeTests {
    /// A command without `commandName` gets its name from `String(describing:)` of its type, and the runtime's
    /// conformance lookups for that cost every invocation (`--version` included) about 2.5 ms on a 2-core machine.
    @Test func everyCommandNamesItself() {
        var missing: [String] = []
        var names: [String] = []
        func visit(_ command: any ParsableCommand.Type, path: String) {
            let configuration = command.configuration
            guard let name = configuration.commandName else {
                missing.append("\(path) > \(String(reflecting: command))")
                return
            }
            let full = path.isEmpty ? name : path + " " + name
            names.append(full)
            for sub in configuration.subcommands { visit(sub, path: full) }
        }
        visit(FoodMomentCommand.self, path: "")
        #expect(missing.isEmpty, "commands without commandName: \(missing)")
        // The names users type, for a few commands whose type name is generic (Add, List, Build).
        for expected in ["foodmoment water add", "foodmoment meal list", "foodmoment weight delete", "foodmoment goals set",
                         "foodmoment dev nutrition-db build", "foodmoment analyze", "foodmoment diary export", "foodmoment diary show"] {
            #expect(names.contains(expected), "\(expected) not in the tree")
        }
    }

    /// At most 16 commands at the top (issue 38); the ones that moved under `diary` still run by their old names.
    @Test func theTopLevelStaysShort() {
        let shown = FoodMomentCommand.configuration.subcommands.filter { $0.configuration.shouldDisplay }
        #expect(shown.count <= 16, "\(shown.map { CommandSuggestion.name(of: $0) })")
        #expect(DiaryGroupCommand.rewriting(["export", "--format", "csv"]) == ["diary", "export", "--format", "csv"])
        #expect(DiaryGroupCommand.rewriting(["analyze", "export"]) == ["analyze", "export"], "only a command in first place moves")
        #expect(CommandSuggestion.message(arguments: ["expor"])?.contains("'diary export'") == true)
    }
}
