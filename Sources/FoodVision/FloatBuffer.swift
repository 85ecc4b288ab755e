/// A fixed-size, 64-byte aligned, zero-initialised Float array that kernels read through raw pointers.
///
/// Immutable after the layer that owns it is built (weights), or owned by one arena that is used under a
/// lock (activations), which is why it may be marked `@unchecked Sendable`.
final class FloatBuffer: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Float>
    let count: Int

    init(count: Int) {
        self.count = count
        let raw = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1) * MemoryLayout<Float>.stride, alignment: 64)
        pointer = raw.bindMemory(to: Float.self, capacity: max(count, 1))
        pointer.initialize(repeating: 0, count: max(count, 1))
    }

    convenience init(_ values: [Float]) {
        self.init(count: values.count)
        values.withUnsafeBufferPointer { src in
            if let base = src.baseAddress { pointer.update(from: base, count: values.count) }
        }
    }

    /// `count` floats starting with `values` (nil: all zero), the rest zero: a bias padded to whole panels.
    convenience init(count: Int, prefix values: [Float]?) {
        self.init(count: count)
        if let values { for (j, v) in values.prefix(count).enumerated() { pointer[j] = v } }
    }

    var array: [Float] { Array(UnsafeBufferPointer(start: pointer, count: count)) }

    deinit { UnsafeMutableRawPointer(pointer).deallocate() }
}
