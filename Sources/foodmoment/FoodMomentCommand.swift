import ArgumentParser

/// The `foodmoment` command: meal photos in, foods, grams, nutrition and a meal diary out.
@main
struct FoodMomentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "foodmoment",
        abstract: "Turn meal photos into foods, grams and nutrition — offline, on this machine.",
        discussion: """
        Examples:
          foodmoment analyze samples/                 analyse every photo under samples/
          foodmoment analyze meal.jpg --json          one JSON document on stdout
          foodmoment analyze ~/Photos/2026 > out.txt  progress on stderr, results on stdout

        Exit codes: 0 all files succeeded, 1 some files failed (the rest were processed), 2 usage error.
        """,
        version: FoodMomentVersion.string,
        subcommands: registeredSubcommands
    )
}

enum FoodMomentVersion {
    static let string = "0.1.0"
}
