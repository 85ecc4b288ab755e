import ArgumentParser

/// "did you mean analyze?" for a mistyped command (`foodmoment analyse`), at any level that has subcommands
/// (`foodmoment dev evl`, `foodmoment meal lst`). ArgumentParser alone says only "Unexpected argument".
enum CommandSuggestion {
    /// The message for the first argument that should name a subcommand but names none, when one is close to it
    /// (at most two edits, and fewer than half its letters); nil when the arguments are fine or nothing is close.
    static func message(arguments: [String], root: any ParsableCommand.Type = FoodMomentCommand.self) -> String? {
        var command = root
        var path = [name(of: root)]
        for argument in arguments {
            let subcommands = command.configuration.subcommands
            if subcommands.isEmpty || argument.hasPrefix("-") || argument == "help" { return nil }
            if let next = subcommands.first(where: { name(of: $0) == argument || $0.configuration.aliases.contains(argument) }) {
                command = next
                path.append(argument)
                continue
            }
            // At the top, the commands that moved under `diary` are suggested where they live now.
            let moved = command == root ? DiaryGroupCommand.moved.sorted().map { "diary " + $0 } : []
            let scored = (subcommands.map { name(of: $0) } + moved).map { ($0, distance(argument.lowercased(), String($0.split(separator: " ").last ?? ""))) }
            guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= 2, best.1 * 2 < max(argument.count, 2) else { return nil }
            return "unknown command '\(argument)' for '\(path.joined(separator: " "))': did you mean '\(best.0)'? "
                + "(see \(path.joined(separator: " ")) --help)"
        }
        return nil
    }

    static func name(of command: any ParsableCommand.Type) -> String {
        command.configuration.commandName ?? String(describing: command).lowercased()
    }

    /// Levenshtein distance over characters.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
