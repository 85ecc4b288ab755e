import ArgumentParser

/// The user's commands, in the order `foodmoment --help` lists them.
let registeredSubcommands: [any ParsableCommand.Type] = [
    AnalyzeCommand.self,
    SearchCommand.self,
    NutritionCommand.self,
    BarcodeCommand.self,
    LearnCommand.self,
    MealCommand.self,
    DiaryGroupCommand.self,
    StatsCommand.self,
    WaterCommand.self,
    WeightCommand.self,
    GoalsCommand.self,
    AchievementsCommand.self,
    SyncCommand.self,
    MergeResultsCommand.self,
    LLMCommand.self,
    DevCommand.self,
]

/// `foodmoment dev …`: the tools that build, measure and inspect the models and tables (they read
/// `../shared/data` and write model files); a user analysing photos never needs them.
struct DevCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract: "Developer tools: train and evaluate the models, benchmark the stages, build the nutrition tables.",
        discussion: """
        Examples:
          foodmoment dev eval --data ../shared/data/images/dev
          foodmoment dev bench --runs 50
          foodmoment dev bench-stages ../shared/data/bench --runs 10
          foodmoment dev nutrition-db build --from ../shared/data/nutrition --out nutrition-db
        """,
        subcommands: [
            TrainCommand.self,
            FineTuneCommand.self,
            TrainCellsCommand.self,
            TrainPlateCommand.self,
            TrainReferenceCommand.self,
            FitPhotoPortionsCommand.self,
            CalibrateCommand.self,
            EvalCommand.self,
            EvalDetectCommand.self,
            EvalGateCommand.self,
            CompareBackbonesCommand.self,
            BenchCommand.self,
            BenchStagesCommand.self,
            BenchDecodeCommand.self,
            ModelCommand.self,
            NutritionDBCommand.self,
            StoreWriterDebugCommand.self,
        ]
    )
}
