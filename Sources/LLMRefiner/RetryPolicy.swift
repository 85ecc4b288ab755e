public import Foundation

/// When to try again: retryable failures (408/409/429/5xx, timeouts, dropped connections) wait what the server
/// asked for (`retry-after-ms`, `Retry-After` seconds or HTTP date, Gemini `RetryInfo`) when it asked, else an
/// exponential backoff with full jitter; a server asking for more than `maxServerWait` is not retried.
public struct RetryPolicy: Sendable {
    /// Attempts in total, the first included.
    public var maxAttempts: Int
    public var baseDelay: Duration
    public var maxBackoff: Duration
    /// The longest server-requested wait we honour; longer means "give up on this photo now".
    public var maxServerWait: Duration
    /// Returns a number in 0..<1; injected so tests are deterministic.
    public var random: @Sendable () -> Double

    public init(maxAttempts: Int = 4, baseDelay: Duration = .milliseconds(500), maxBackoff: Duration = .seconds(20),
                maxServerWait: Duration = .seconds(60), random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.maxAttempts = maxAttempts; self.baseDelay = baseDelay; self.maxBackoff = maxBackoff
        self.maxServerWait = maxServerWait; self.random = random
    }

    public enum Decision: Sendable, Equatable {
        case retry(after: Duration)
        case giveUp
        /// The server asked for a wait longer than `maxServerWait`.
        case waitTooLong(Duration)
    }

    /// After failed attempt number `attempt` (1-based): retry (and when), or stop.
    public func decide(attempt: Int, retryable: Bool, serverWait: Duration?) -> Decision {
        guard retryable, attempt < maxAttempts else { return .giveUp }
        if let wait = serverWait {
            return wait > maxServerWait ? .waitTooLong(wait) : .retry(after: max(wait, .zero))
        }
        // Full jitter: uniform in [0, min(cap, base·2^(attempt-1))], never below 10 % of the step.
        let step = min(maxBackoff, baseDelay * (1 << min(attempt - 1, 20)))
        let fraction = 0.1 + 0.9 * min(max(random(), 0), 1)
        let stepMs = Double(step.components.seconds) * 1000 + Double(step.components.attoseconds) / 1e15
        return .retry(after: .milliseconds(Int64((stepMs * fraction).rounded())))
    }

    /// The wait a response asks for: `retry-after-ms` (OpenAI, Azure), then `Retry-After` (seconds or an HTTP date,
    /// relative to `now`), then a Gemini `RetryInfo.retryDelay` ("37s", "1.5s") in the error body.
    public static func serverWait(headers: [String: String], body: [String: Any]?, now: Date) -> Duration? {
        if let ms = headers["retry-after-ms"].flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }), ms.isFinite, ms >= 0 {
            return clampedMilliseconds(ms)
        }
        if let value = headers["retry-after"]?.trimmingCharacters(in: .whitespaces) {
            if let seconds = Double(value), seconds.isFinite, seconds >= 0 { return clampedMilliseconds(seconds * 1000) }
            if let date = httpDate(value) { return clampedMilliseconds(max(0, date.timeIntervalSince(now) * 1000)) }
        }
        if let details = (body?["error"] as? [String: Any])?["details"] as? [Any] {
            for case let d as [String: Any] in details {
                guard (d["@type"] as? String)?.hasSuffix("google.rpc.RetryInfo") == true, let delay = d["retryDelay"] as? String,
                      delay.hasSuffix("s"), let s = Double(delay.dropLast()), s.isFinite, s >= 0 else { continue }
                return clampedMilliseconds(s * 1000)
            }
        }
        return nil
    }

    /// A server's wait as a Duration, capped at a year: `Int64(1e308)` traps, and a hostile or broken server sent
    /// `retry-after-ms: 1e308` (found by the llm-openai fuzz target). Anything that long is "too long" anyway.
    static func clampedMilliseconds(_ ms: Double) -> Duration {
        let cap = 365.0 * 24 * 3600 * 1000
        return .milliseconds(Int64(min(max(ms, 0), cap).rounded(.up)))
    }

    /// RFC 9110 IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), plus the obsolete RFC 850 and asctime forms.
    static func httpDate(_ s: String) -> Date? {
        // Foundation's DateFormatter traps on some non-ASCII input ("Incorrect range CFRange" — found by the
        // llm-openai fuzz target); an HTTP date is short printable ASCII, so anything else is not one.
        guard s.utf8.count <= 64, s.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            let f = DateFormatter()
            f.locale = Locale(identifier: "en_US_POSIX")
            f.timeZone = TimeZone(identifier: "GMT")
            f.dateFormat = format
            if let d = f.date(from: s) { return d }
        }
        return nil
    }
}
