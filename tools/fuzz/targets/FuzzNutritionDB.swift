import Foundation
import Nutrition

/// libFuzzer entry: arbitrary bytes as `nutrition.fmdb` (with the real labels.json beside it). Loading must either
/// succeed or throw `NutritionError`; a successful load is then searched and read.
nonisolated(unsafe) let fuzzDir: String = {
    let dir = NSTemporaryDirectory() + "fm-fuzz-nutrition-\(getpid())"
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    let labels = ProcessInfo.processInfo.environment["FOODMOMENT_LABELS_JSON"] ?? "nutrition-db/labels.json"
    try? FileManager.default.removeItem(atPath: dir + "/labels.json")
    try? FileManager.default.copyItem(atPath: labels, toPath: dir + "/labels.json")
    return dir
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNutritionDB(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    try? bytes.write(to: URL(fileURLWithPath: fuzzDir + "/nutrition.fmdb"))
    if let db = try? NutritionDatabase.load(directory: URL(fileURLWithPath: fuzzDir)) {
        _ = db.search("apple", limit: 3)
        _ = db.search("苹果", limit: 3)
        _ = db.product(gtin14: "03017620422003")
        _ = db.food(forLabel: "banana")
    }
    return 0
}
