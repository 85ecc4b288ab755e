import Foundation
import FoodVision

/// libFuzzer entry: arbitrary bytes as a food head file, loaded both as a `SoftmaxHead` (`head.json`) and as a
/// `PrototypeMatcher` (`learned.json`). Loading must succeed or throw `FoodVisionError`; whatever loads is then
/// used on an embedding of its own dimension (prediction and matching must not trap either).
nonisolated(unsafe) let headPath: String = NSTemporaryDirectory() + "fm-fuzz-head-\(getpid()).json"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFoodHead(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    try? Data(bytes: data, count: size).write(to: URL(fileURLWithPath: headPath))
    if let head = try? SoftmaxHead.load(from: headPath), head.dimension <= 1 << 16 {
        let embedding = (0..<head.dimension).map { Float($0 % 7) - 3 }
        _ = try? head.predict(embedding)
        _ = try? head.predict([1, 2, 3])
    }
    if let matcher = try? PrototypeMatcher.load(from: headPath) {
        if matcher.dimension > 0, matcher.dimension <= 1 << 16 {
            _ = try? matcher.match((0..<matcher.dimension).map { Float($0 % 5) })
        }
        _ = try? matcher.match([0.5, 0.25])
        _ = matcher.labels
    }
    return 0
}
