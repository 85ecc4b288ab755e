import ArgumentParser
import CAllocator
import FoodMoment
import Foundation
import FoodVision

/// The `foodmoment` command: meal photos in, foods, grams, nutrition and a meal diary out.
struct FoodMomentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "foodmoment",
        abstract: "Turn meal photos into foods, grams and nutrition — offline, on this machine.",
        discussion: """
        Examples:
          foodmoment analyze samples/             foods, boxes, grams, kcal per photo
          foodmoment analyze ~/Photos --json      one JSON document on stdout
          foodmoment search 炒饭                   food search, English or Chinese
          foodmoment nutrition banana --portion "1 medium"
          foodmoment barcode 4006381333931        or a photo of a barcode
          foodmoment learn my_dumplings a.jpg b.jpg c.jpg

        Developer tools (training, evaluation, benchmarks, model and table building): foodmoment dev --help

        Exit codes: 0 success, 1 some input failed (the rest was processed), 2 usage error, 130 interrupted (Ctrl-C; the next run resumes).
        """,
        version: FoodMomentVersion.string,
        subcommands: registeredSubcommands
    )
}

/// Entry point: maps argument errors to exit code 2 (ArgumentParser's default is 64) and keeps
/// `--help`/`--version` at 0.
@main
enum Main {
    static func main() async {
        keepFreedMemoryForReuse()
        let arguments = DiaryGroupCommand.rewriting(Array(CommandLine.arguments.dropFirst()))
        if let hint = CommandSuggestion.message(arguments: arguments) {
            Output.error(hint)
            Foundation.exit(Exit.usage.rawValue)
        }
        if let asked = ProcessInfo.processInfo.environment["FOODMOMENT_PRECISION"], !asked.isEmpty,
           InferencePrecision(rawValue: asked) == nil {
            let choices = InferencePrecision.allCases.map(\.rawValue).joined(separator: ", ")
            Output.error("FOODMOMENT_PRECISION=\(asked) is not one of \(choices); unset it for the default (int8 where the CPU has AVX-512 VNNI and BF16)")
            Foundation.exit(Exit.usage.rawValue)
        }
        do {
            var command = try FoodMomentCommand.parseAsRoot(arguments)
            if var async = command as? any AsyncParsableCommand {
                try await async.run()
            } else {
                try command.run()
            }
            if let changed = (command as? any ChangesDiary)?.changedDiaryPath {
                await AutoSync.afterChange(diary: changed, enabled: ProcessSettings.autoSync)
            }
        } catch let exit as ExitCode {
            Foundation.exit(exit.rawValue)
        } catch {
            let code = FoodMomentCommand.exitCode(for: error)
            let message = FoodMomentCommand.fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { print(message) }
                Foundation.exit(0)
            }
            if !message.isEmpty { FileHandle.standardError.write(Data((message + "\n").utf8)) }
            // Usage problems (ArgumentParser reports them as EX_USAGE, 64) are 2; anything else that escaped a
            // command is a failure, 1.
            let usage = code == .validationFailure || error is ValidationError || isParserError(code)
            Foundation.exit((usage ? Exit.usage : Exit.failed).rawValue)
        }
    }

    /// ArgumentParser reports every parsing problem with EX_USAGE (64).
    static func isParserError(_ code: ExitCode) -> Bool { code.rawValue == 64 }
}

/// glibc serves every allocation over 128 KiB (rising as such blocks are freed) with its own `mmap` and gives it back on
/// `free`, so loading a model — hundreds of tensors of 0.1–5 MB, made, packed and dropped — and the first photos'
/// activation buffers fault in fresh zeroed pages again and again: ~20,700 page faults for a one-photo `analyze`. Served
/// from the heap and kept there, freed blocks are reused: ~13,600 faults, and 102–104 → 85–88 ms of CPU for that run
/// (`perf stat -e page-faults,task-clock`, five runs each); per photo, once warm, nothing changes. Blocks of 32 MiB or
/// more (a huge PNG's pixels) still get their own mapping and go back at once; the heap gives back its top when
/// 64 MiB of it is free. Peak RSS on the 1,000-photo folder: docs/benchmarks.md.
private func keepFreedMemoryForReuse() {
    // Best effort: where glibc refuses (or is not the C library), allocation works as before, only slower to start.
    _ = fm_allocator_keep_freed(32 << 20, 64 << 20)
}
