import ArgumentParser

/// Every subcommand of `foodmoment`, one line each (kept in one place so stages can add theirs).
let registeredSubcommands: [any ParsableCommand.Type] = [
    AnalyzeCommand.self,
    SearchCommand.self,
    NutritionCommand.self,
    NutritionDBCommand.self,
    BenchDecodeCommand.self,
    ModelCommand.self,
    BenchCommand.self,
    TrainCommand.self,
    TrainReferenceCommand.self,
    LearnCommand.self,
    EvalCommand.self,
    CalibrateCommand.self,
    EvalDetectCommand.self,
    BenchStagesCommand.self,
    BarcodeCommand.self,
    MergeResultsCommand.self,
    LLMCommand.self,
    ReportCommand.self,
    // The diary (issue 6): meal records, day timeline, stats, logs, goals, export/import.
    MealCommand.self,
    DiaryCommand.self,
    StatsCommand.self,
    WaterCommand.self,
    WeightCommand.self,
    GoalsCommand.self,
    AchievementsCommand.self,
    ExportCommand.self,
    ImportCommand.self,
    StoreWriterDebugCommand.self,
]
