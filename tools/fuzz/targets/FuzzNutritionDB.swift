import Foundation
import Nutrition

/// libFuzzer entry: arbitrary bytes as `nutrition.fmdb`, or as the packed `nutrition.fmdb.gz` when they start with
/// gzip's magic (with the real labels.json beside it). Loading must either succeed or throw `NutritionError`; a
/// successful load is then searched and read.
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
    let packed = size >= 2 && data[0] == 0x1F && data[1] == 0x8B
    try? FileManager.default.removeItem(atPath: fuzzDir + (packed ? "/nutrition.fmdb" : "/nutrition.fmdb.gz"))
    try? bytes.write(to: URL(fileURLWithPath: fuzzDir + (packed ? "/nutrition.fmdb.gz" : "/nutrition.fmdb")))
    let cache = URL(fileURLWithPath: fuzzDir + "/cache")
    if let db = try? NutritionDatabase.load(directory: URL(fileURLWithPath: fuzzDir), cacheDirectory: cache) {
        _ = db.search("apple", limit: 3)
        _ = db.search("苹果", limit: 3)
        _ = db.product(gtin14: "03017620422003")
        _ = db.food(forLabel: "banana")
    }
    return 0
}
