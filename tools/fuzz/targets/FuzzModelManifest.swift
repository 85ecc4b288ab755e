import Foundation
import FoodCore
import FoodVision

/// libFuzzer entry: FoodVision's model files. The first byte chooses the file:
/// - even: a model directory — the bytes up to the first NUL are `manifest.json`, the rest `weights.bin`. When the
///   manifest is a JSON object the harness sets its `weightsSHA256` to the real digest of the weights half of the
///   time, so the fuzzer gets past the checksum into the layer-table checks.
/// - odd: a `.safetensors` file (what `model convert` reads), every F32 tensor then read.
/// Loading must succeed or throw `FoodVisionError`; never trap, read out of bounds or allocate without bound.
let modelDir: String = {
    let dir = NSTemporaryDirectory() + "fm-fuzz-model-\(getpid())"
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzModelManifest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if data[0] & 1 == 1 {
        let path = modelDir + "/model.safetensors"
        try? Data(bytes).write(to: URL(fileURLWithPath: path))
        if let file = try? SafetensorsFile(path: path) {
            for entry in file.entries.prefix(16) { _ = try? file.floats(entry) }
        }
        return 0
    }
    let split = bytes.firstIndex(of: 0) ?? bytes.count
    var manifest = Data(bytes[..<split])
    let weights = Data(bytes[min(split + 1, bytes.count)...])
    if data[0] & 2 == 2, var object = (try? JSONSerialization.jsonObject(with: manifest)) as? [String: Any] {
        object["weightsSHA256"] = sha256Hex(weights)
        if let patched = try? JSONSerialization.data(withJSONObject: object) { manifest = patched }
    }
    try? manifest.write(to: URL(fileURLWithPath: modelDir + "/manifest.json"))
    try? weights.write(to: URL(fileURLWithPath: modelDir + "/weights.bin"))
    try? Data("a\nb\nc\n".utf8).write(to: URL(fileURLWithPath: modelDir + "/labels.txt"))
    _ = try? EfficientNetLite0(modelDirectory: modelDir)
    return 0
}

/// SHA-256 as lowercase hex, with FoodVision's own hasher (the loader's reference).
func sha256Hex(_ data: Data) -> String {
    var hasher = SHA256()
    data.withUnsafeBytes { raw in hasher.update(raw.bindMemory(to: UInt8.self)) }
    return hasher.finalizeHex()
}
