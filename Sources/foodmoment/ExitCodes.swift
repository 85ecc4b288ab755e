import ArgumentParser

/// Every exit status `foodmoment` uses, in one place (the root command's help lists them).
enum Exit {
    /// Some input failed (a photo that could not be read or decoded, a bad line, a look-up that found nothing) —
    /// the rest was processed and reported.
    static let failed = ExitCode(1)
    /// The command line is wrong (unknown option, bad value, missing file argument): nothing was done.
    static let usage = ExitCode(2)
    /// Stopped by Ctrl-C (SIGINT) after the work in flight was saved; the next run resumes.
    static let interrupted = ExitCode(130)
}
