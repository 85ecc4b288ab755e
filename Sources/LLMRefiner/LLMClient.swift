public import FoodCore
public import Foundation

/// A failed refinement with what it cost.
public struct LLMFailure: Error, Sendable, Equatable {
    public var error: LLMError
    public var attempts: Int
    public var waited: Duration
}

/// Sends refinement requests for one provider: cache, concurrency limit, retries with an injected clock,
/// validation. After a terminal failure (bad key, no quota, bad request) it sends nothing more and fails fast.
public final class LLMClient: @unchecked Sendable {
    public let provider: any LLMProvider
    let transport: any HTTPTransport
    let clock: any Clock<Duration>
    public let policy: RetryPolicy
    public let cache: LLMCache?
    let limiter: ConcurrencyLimiter
    let timeout: Duration
    let maxAnswerBytes: Int
    let now: @Sendable () -> Date
    let note: @Sendable (String) -> Void
    let secret: String?
    private let lock = NSLock()
    private var terminal: LLMError?

    public init(provider: any LLMProvider, transport: any HTTPTransport, clock: any Clock<Duration>, policy: RetryPolicy = .init(),
                cache: LLMCache? = nil, concurrency: Int = 2, timeout: Duration = .seconds(90), maxAnswerBytes: Int = 2 << 20,
                apiKey: LLMSecret? = nil, now: @escaping @Sendable () -> Date = { Date() }, note: @escaping @Sendable (String) -> Void = { _ in }) {
        self.provider = provider; self.transport = transport; self.clock = clock; self.policy = policy; self.cache = cache
        self.limiter = ConcurrencyLimiter(limit: max(1, concurrency)); self.timeout = timeout; self.maxAnswerBytes = maxAnswerBytes
        self.now = now; self.note = note; self.secret = apiKey?.value
    }

    public convenience init(configuration c: LLMConfiguration, transport: any HTTPTransport, clock: any Clock<Duration>,
                            policy: RetryPolicy = .init(), useCache: Bool = true, note: @escaping @Sendable (String) -> Void = { _ in }) {
        self.init(provider: c.makeProvider(), transport: transport, clock: clock, policy: policy,
                  cache: useCache ? c.cacheDirectory.map(LLMCache.init(directory:)) : nil, concurrency: c.concurrency,
                  timeout: c.timeout, apiKey: c.apiKey, note: note)
    }

    /// The validated foods for `input`, from the cache or the provider.
    public func refine(_ input: LLMInput) async -> Result<LLMOutcome, LLMFailure> {
        let p = provider
        let imageHash = LLMCache.imageHash(input.jpeg)
        let key = LLMCache.key(imageSHA256: imageHash, provider: p.kind.rawValue, model: p.model, promptVersion: input.promptVersion)
        if let foods = cache?.load(key: key) {
            return .success(LLMOutcome(foods: foods, provider: p.kind.rawValue, model: p.model, promptVersion: input.promptVersion,
                                       cached: true, attempts: 0, waited: .zero))
        }
        if let stop = stopped() { return .failure(LLMFailure(error: stop, attempts: 0, waited: .zero)) }
        await limiter.acquire()
        let result = await send(input)
        await limiter.release()
        switch result {
        case .success(let outcome):
            cache?.store(key: key, foods: outcome.foods, provider: p.kind.rawValue, model: p.model, promptVersion: input.promptVersion,
                         imageSHA256: imageHash)
            return .success(outcome)
        case .failure(let failure):
            if failure.error.isTerminal { lock.withLock { if terminal == nil { terminal = failure.error } } }
            return .failure(failure)
        }
    }

    private func stopped() -> LLMError? { lock.withLock { terminal } }

    private func send(_ input: LLMInput) async -> Result<LLMOutcome, LLMFailure> {
        let p = provider
        return await send(p.request(for: input, timeout: timeout, maxAnswerBytes: maxAnswerBytes)) { text, attempt, waited throws(LLMError) in
            LLMOutcome(foods: try AnswerValidator.foods(fromAnswer: text), provider: p.kind.rawValue, model: p.model,
                       promptVersion: input.promptVersion, cached: false, attempts: attempt, waited: waited)
        }
    }

    /// Free text for a text-only prompt (no photo, no cache), with the same retries, limits and key redaction as
    /// refinement. What the text may say is the caller's to check.
    public func write(system: String, user: String, maxTokens: Int = 400) async -> Result<String, LLMFailure> {
        if let stop = stopped() { return .failure(LLMFailure(error: stop, attempts: 0, waited: .zero)) }
        await limiter.acquire()
        let result = await send(provider.textRequest(system: system, user: user, maxTokens: maxTokens, timeout: timeout,
                                                     maxAnswerBytes: maxAnswerBytes)) { text, _, _ throws(LLMError) in text }
        await limiter.release()
        if case .failure(let failure) = result, failure.error.isTerminal { lock.withLock { if terminal == nil { terminal = failure.error } } }
        return result
    }

    private func send<T>(_ request: HTTPRequest, parse: (String, Int, Duration) throws(LLMError) -> T) async -> Result<T, LLMFailure> {
        let p = provider
        var waited = Duration.zero
        var attempt = 0
        while true {
            attempt += 1
            if let stop = stopped() { return .failure(LLMFailure(error: stop, attempts: attempt - 1, waited: waited)) }
            let failure: ProviderFailure
            do {
                let response = try await transport.send(request)
                if (200...299).contains(response.status) {
                    do {
                        return .success(try parse(try p.answerText(from: response), attempt, waited))
                    } catch {
                        return .failure(LLMFailure(error: redact(error), attempts: attempt, waited: waited))
                    }
                }
                failure = p.classify(response, now: now())
            } catch {
                failure = Self.transportFailure(error, provider: p.kind.rawValue)
            }
            let error = redact(failure.error)
            switch policy.decide(attempt: attempt, retryable: failure.retryable, serverWait: failure.serverWait) {
            case .giveUp:
                return .failure(LLMFailure(error: error, attempts: attempt, waited: waited))
            case .waitTooLong(let wait):
                return .failure(LLMFailure(error: .rateLimited(provider: p.kind.rawValue, message: "the server asks to wait \(Self.seconds(wait)), over the \(Self.seconds(policy.maxServerWait)) cap"),
                                           attempts: attempt, waited: waited))
            case .retry(let wait):
                note("llm: \(error.kind) from \(p.kind.rawValue) (\(Self.short(error))); retry \(attempt + 1)/\(policy.maxAttempts) in \(Self.seconds(wait))")
                do { try await clock.sleep(for: wait, tolerance: nil) } catch {
                    return .failure(LLMFailure(error: .cancelled, attempts: attempt, waited: waited))
                }
                waited += wait
            }
        }
    }

    /// Does the provider answer (model list / model info, no photo)? Latency measured on the continuous clock.
    public func check() async -> (ok: Bool, status: Int?, latency: Duration, message: String) {
        let start = ContinuousClock.now
        do {
            let response = try await transport.send(provider.checkRequest(timeout: .seconds(20)))
            let latency = ContinuousClock.now - start
            if (200...299).contains(response.status) {
                var message = "HTTP \(response.status)"
                if provider.kind == .ollama, let models = JSON.object(response.body)?["models"] as? [Any] {
                    let names = models.compactMap { ($0 as? [String: Any])?["name"] as? String }
                    let wanted = provider.model.contains(":") ? provider.model : provider.model + ":latest"
                    message += names.contains(wanted) || names.contains(provider.model) ? ", model \(provider.model) is pulled"
                        : ", model \(provider.model) is NOT pulled (run `ollama pull \(provider.model)`)"
                }
                return (true, response.status, latency, message)
            }
            return (false, response.status, latency, redact(provider.classify(response, now: now()).error).description)
        } catch {
            return (false, nil, ContinuousClock.now - start, redact(Self.transportFailure(error, provider: provider.kind.rawValue).error).description)
        }
    }

    static func transportFailure(_ error: HTTPTransportError, provider: String) -> ProviderFailure {
        switch error {
        case .timedOut(let m): ProviderFailure(error: .timedOut(provider: provider, message: m), retryable: true, serverWait: nil)
        case .network(let m): ProviderFailure(error: .network(provider: provider, message: m), retryable: true, serverWait: nil)
        case .tooLarge(let limit): ProviderFailure(error: .tooLarge(limit: limit), retryable: false, serverWait: nil)
        case .cancelled: ProviderFailure(error: .cancelled, retryable: false, serverWait: nil)
        }
    }

    /// Any echo of the key in a server message (some APIs quote part of it) becomes `<redacted>`.
    func redact(_ e: LLMError) -> LLMError {
        guard let secret, !secret.isEmpty else { return e }
        func r(_ s: String) -> String { s.replacingOccurrences(of: secret, with: "<redacted>") }
        switch e {
        case .configuration(let m): return .configuration(r(m))
        case .unauthorized(let p, let m): return .unauthorized(provider: p, message: r(m))
        case .quotaExhausted(let p, let m): return .quotaExhausted(provider: p, message: r(m))
        case .rateLimited(let p, let m): return .rateLimited(provider: p, message: r(m))
        case .badRequest(let s, let p, let m): return .badRequest(status: s, provider: p, message: r(m))
        case .server(let s, let p, let m): return .server(status: s, provider: p, message: r(m))
        case .network(let p, let m): return .network(provider: p, message: r(m))
        case .timedOut(let p, let m): return .timedOut(provider: p, message: r(m))
        case .refused(let m): return .refused(r(m))
        case .truncated(let m): return .truncated(r(m))
        case .malformedJSON(let m): return .malformedJSON(r(m))
        case .schemaViolation(let m): return .schemaViolation(r(m))
        case .tooLarge, .cancelled: return e
        }
    }

    static func seconds(_ d: Duration) -> String {
        let s = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        return String(format: "%.1f s", s)
    }

    static func short(_ e: LLMError) -> String {
        let d = e.description
        return d.count > 100 ? String(d.prefix(100)) + "…" : d
    }
}

/// At most `limit` requests in flight; the rest wait in order.
actor ConcurrencyLimiter {
    let limit: Int
    var running = 0
    var waiters: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) { self.limit = limit }

    func acquire() async {
        if running < limit { running += 1; return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty { running -= 1 } else { waiters.removeFirst().resume() }
    }
}
