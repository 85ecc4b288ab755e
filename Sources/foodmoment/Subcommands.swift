import ArgumentParser

/// Every subcommand of `foodmoment`, one line each (kept in one place so stages can add theirs).
let registeredSubcommands: [any ParsableCommand.Type] = [
    AnalyzeCommand.self,
    BarcodeCommand.self,
]
