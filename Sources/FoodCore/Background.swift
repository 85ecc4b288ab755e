import Foundation

/// A value computed on a thread of its own, started at once; `value` waits for it. For work that a command can overlap
/// with its own start-up on an idle core (hashing the weights while the network is built, the batch settings key while
/// the model loads). A dedicated thread, not a dispatch queue, because the callers may themselves be dispatch workers
/// that block on the result.
public final class Background<Value: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    /// Written by the thread before it signals `done`; read only after waiting on it.
    private var result: Value?

    public init(name: String, _ work: @escaping @Sendable () -> Value) {
        let thread = Thread { [self] in
            result = work()
            done.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Waits for the thread's result (once; later calls return the same value at once).
    public var value: Value {
        done.wait()
        done.signal()
        return result!
    }
}
