import Foundation

/// Work spread over a fixed number of worker threads, each with state of its own (a recogniser: a network keeps its
/// activation buffers per instance and is not shared between threads). Worker `w` takes items `w`, `w + n`, `w + 2n`, …,
/// so worker `w` always uses its own state `w`, and a result never depends on thread timing: results come back in
/// input order. The one loop of the batch runner, the evaluators, the trainers and the benchmarks.
public enum WorkerPool {
    /// `body(index, worker)` for every index in `0..<count` on up to `workers` threads (never more than `count`).
    public static func forEach(_ count: Int, workers: Int, _ body: @Sendable (_ index: Int, _ worker: Int) -> Void) {
        let n = min(max(1, workers), count)
        guard n > 0 else { return }
        DispatchQueue.concurrentPerform(iterations: n) { w in
            var i = w
            while i < count { body(i, w); i += n }
        }
    }

    /// `body(index, worker)`'s results in input order (nil where it gave none). `progress(done, count)` is called
    /// after every item, from the worker that finished it.
    public static func map<T>(_ count: Int, workers: Int, progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil,
                              _ body: @Sendable (_ index: Int, _ worker: Int) -> T?) -> [T?] {
        let slots = Slots<T>(count: count)
        forEach(count, workers: workers) { i, w in
            let done = slots.set(i, body(i, w))
            progress?(done, count)
        }
        return slots.values
    }

    /// One slot per item, written from the workers under a lock (a pthread mutex, which ThreadSanitizer follows).
    private final class Slots<T>: @unchecked Sendable {
        private let lock = NSLock()
        private var storage: [T?]
        private var done = 0
        init(count: Int) { storage = Array(repeating: nil, count: count) }
        /// Stores item `i`'s result; returns how many items are done.
        func set(_ i: Int, _ value: T?) -> Int {
            lock.lock(); defer { lock.unlock() }
            storage[i] = value
            done += 1
            return done
        }
        var values: [T?] { lock.lock(); defer { lock.unlock() }; return storage }
    }
}
