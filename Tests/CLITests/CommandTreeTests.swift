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
                         "foodmoment dev nutrition-db build", "foodmoment analyze"] {
            #expect(names.contains(expected), "\(expected) not in the tree")
        }
    }
}
