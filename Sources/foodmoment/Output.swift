import Foundation

/// stdout for results, stderr for everything else (progress, notes, logs).
enum Output {
    static let stderrIsTerminal = isatty(STDERR_FILENO) == 1
    static let useColor = stderrIsTerminal && ProcessInfo.processInfo.environment["NO_COLOR"] == nil

    static func note(_ s: String) {
        FileHandle.standardError.write(Data((s + "\n").utf8))
    }

    /// The one way a command reports an error: `error: MESSAGE` on stderr (the exit code says the rest).
    static func error(_ message: String) {
        note("error: " + message)
    }

    /// `s` with its control characters written out (`\n`, `\t`, `\u{1B}`): a file name may hold a newline or a
    /// terminal escape sequence, which printed as is would break a line of the table or drive the user's terminal.
    static func visible(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return s }
        var out = ""
        for u in s.unicodeScalars {
            guard u.properties.generalCategory == .control else { out.unicodeScalars.append(u); continue }
            switch u {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default: out += "\\u{" + String(u.value, radix: 16, uppercase: true) + "}"
            }
        }
        return out
    }

    static func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : s + String(repeating: " ", count: width - s.count)
    }

    static func padLeft(_ s: String, _ width: Int) -> String {
        s.count >= width ? s : String(repeating: " ", count: width - s.count) + s
    }
}

/// A one-line progress indicator on stderr, only when stderr is a terminal. Safe to advance from any thread.
final class ProgressLine: @unchecked Sendable {
    private let lock = NSLock()
    private let total: Int
    private var done = 0
    private let start = ContinuousClock.now
    private let enabled: Bool

    init(total: Int) {
        self.total = total
        self.enabled = Output.stderrIsTerminal && total > 1
    }

    func advance(_ label: String) {
        lock.lock()
        defer { lock.unlock() }
        done += 1
        guard enabled else { return }
        let elapsed = ContinuousClock.now - start
        let secs = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = secs > 0 ? Double(done) / secs : 0
        let eta = rate > 0 ? Double(total - done) / rate : 0
        let width = 24
        let filled = total > 0 ? width * done / total : width
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let name = label.count > 40 ? "…" + label.suffix(39) : label
        let line = String(format: "\r\u{1B}[2K%@ %d/%d  %.1f img/s  ETA %.0fs  %@", bar, done, total, rate, eta, name)
        FileHandle.standardError.write(Data(line.utf8))
    }

    func finish() {
        guard enabled else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
    }
}
