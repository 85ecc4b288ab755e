public import FoodCore
import Foundation

/// A fine-tuned copy of the backbone's head conv (320 → 1280 1×1, BatchNorm folded, ReLU6) for food features.
///
/// It runs on the last MBConv block's output (`BackboneOutput.blockOutput`) and gives the food embedding (the mean
/// of its cells) and the per-cell food feature map; the ImageNet logits keep coming from the original head conv.
/// Stored as `food-top.bin` (the weights `[out][in]`, then the bias, little-endian f32) and `food-top.json`
/// (shape, byte count and SHA-256 that `load` checks).
public struct FoodTop: Sendable {
    public struct Manifest: Sendable, Codable, Equatable {
        public var format: String
        public var inChannels: Int
        public var outChannels: Int
        public var weightsFile: String
        public var bytes: Int
        public var sha256: String
        /// How the weights were made (free text: the command and its held-out figures).
        public var note: String
    }

    public static let formatName = "foodmoment-food-top-v1"
    public static let manifestFileName = "food-top.json"
    public static let weightsFileName = "food-top.bin"

    public let inChannels: Int
    public let outChannels: Int
    /// `[outChannels][inChannels]`, BatchNorm folded.
    public let weights: [Float]
    public let bias: [Float]
    let conv: PointwiseConv2D

    public init(weights: [Float], bias: [Float], inChannels: Int, outChannels: Int) throws(FoodVisionError) {
        guard inChannels > 0, outChannels > 0, weights.count == inChannels * outChannels, bias.count == outChannels else {
            throw .invalidInput(reason: "food top needs \(outChannels)x\(inChannels) weights and \(outChannels) biases, got \(weights.count) and \(bias.count)")
        }
        self.inChannels = inChannels; self.outChannels = outChannels
        self.weights = weights; self.bias = bias
        conv = PointwiseConv2D(weightsOI: weights, bias: bias, inChannels: inChannels, outChannels: outChannels, activation: .relu6)
    }

    /// The ImageNet head conv of a converted EfficientNet-Lite0 (BatchNorm `_bn1` folded into `_conv_head`): the
    /// starting point of fine-tuning.
    public static func imageNet(modelDirectory: String) throws(FoodVisionError) -> FoodTop {
        let (manifest, t) = try EfficientNetLite0.readModel(directory: modelDirectory)
        let bn = BatchNorm(gamma: t["_bn1.weight"]!, beta: t["_bn1.bias"]!, mean: t["_bn1.running_mean"]!,
                           variance: t["_bn1.running_var"]!, epsilon: manifest.batchNormEpsilon)
        let folded = bn.fold(weights: t["_conv_head.weight"]!, outChannels: EfficientNetLite0.embeddingSize)
        return try FoodTop(weights: folded.weights, bias: folded.bias, inChannels: 320, outChannels: EfficientNetLite0.embeddingSize)
    }

    /// The food feature map (h × w × outChannels, after ReLU6) of a block output.
    public func featureMap(blockOutput x: FloatImage) throws(FoodVisionError) -> FloatImage {
        guard x.channels == inChannels else {
            throw .invalidInput(reason: "block output has \(x.channels) channels, the food top reads \(inChannels)")
        }
        let out = conv(Tensor(batch: 1, height: x.height, width: x.width, channels: x.channels, values: x.values))
        return FloatImage(width: x.width, height: x.height, channels: outChannels, values: out.values)
    }

    /// The food embedding: the mean over the cells of `featureMap`.
    public func embedding(blockOutput x: FloatImage) throws(FoodVisionError) -> [Float] {
        Self.meanOfCells(try featureMap(blockOutput: x))
    }

    static func meanOfCells(_ map: FloatImage) -> [Float] {
        let c = map.channels, cells = map.width * map.height
        var e = [Float](repeating: 0, count: c)
        map.values.withUnsafeBufferPointer { v in
            for p in 0..<cells { for j in 0..<c { e[j] += v[p * c + j] } }
        }
        let s = 1 / Float(max(cells, 1))
        for j in 0..<c { e[j] *= s }
        return e
    }

    /// Writes `food-top.bin` and `food-top.json` into `directory`.
    public func save(directory: String, note: String) throws(FoodVisionError) {
        var data = Data(capacity: (weights.count + bias.count) * 4)
        for v in weights + bias { withUnsafeBytes(of: v.bitPattern.littleEndian) { data.append(contentsOf: $0) } }
        let manifest = Manifest(format: Self.formatName, inChannels: inChannels, outChannels: outChannels,
                                weightsFile: Self.weightsFileName, bytes: data.count, sha256: sha256Hex(of: data), note: note)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        let json: Data
        do { json = try encoder.encode(manifest) } catch { throw .io(path: directory, reason: "cannot encode the food-top manifest (\(error))") }
        try ModelConverter.write(data, to: (directory as NSString).appendingPathComponent(Self.weightsFileName))
        try ModelConverter.write(json, to: (directory as NSString).appendingPathComponent(Self.manifestFileName))
    }

    /// True when `directory` holds a food-top manifest (the recogniser then uses it).
    public static func exists(in directory: String) -> Bool {
        FileManager.default.fileExists(atPath: (directory as NSString).appendingPathComponent(manifestFileName))
    }

    /// Reads `food-top.json` and its weight file, checking format, shape, byte count and SHA-256.
    public static func load(directory: String) throws(FoodVisionError) -> FoodTop {
        let manifestPath = (directory as NSString).appendingPathComponent(manifestFileName)
        guard FileManager.default.fileExists(atPath: manifestPath) else { throw .missingFile(path: manifestPath) }
        let manifestData = try readModelFile(manifestPath)
        let manifest: Manifest
        do { manifest = try JSONDecoder().decode(Manifest.self, from: manifestData) } catch {
            throw .invalidFormat(path: manifestPath, reason: "not a food-top manifest (\(error))")
        }
        guard manifest.format == formatName else {
            throw .invalidFormat(path: manifestPath, reason: "format \(manifest.format); this build reads \(formatName)")
        }
        let (n, o1) = manifest.inChannels.multipliedReportingOverflow(by: manifest.outChannels)
        let (values, o2) = n.addingReportingOverflow(manifest.outChannels)
        guard manifest.inChannels > 0, manifest.outChannels > 0, !o1, !o2, values <= Int.max / 4, manifest.bytes == values * 4 else {
            throw .manifestMismatch(path: manifestPath, reason: "\(manifest.bytes) bytes do not hold \(manifest.outChannels)x\(manifest.inChannels) weights + \(manifest.outChannels) biases as f32")
        }
        let weightsPath = (directory as NSString).appendingPathComponent(manifest.weightsFile)
        guard FileManager.default.fileExists(atPath: weightsPath) else { throw .missingFile(path: weightsPath) }
        let data = fileSize(weightsPath) > 0 ? try readModelFile(weightsPath) : Data()
        guard data.count >= manifest.bytes else {
            throw .truncatedWeights(path: weightsPath, expectedBytes: manifest.bytes, actualBytes: data.count)
        }
        guard data.count == manifest.bytes else {
            throw .manifestMismatch(path: manifestPath, reason: "weight file has \(data.count) bytes, the manifest says \(manifest.bytes)")
        }
        let actual = sha256Hex(of: data)
        guard actual == manifest.sha256.lowercased() else {
            throw .checksumMismatch(path: weightsPath, expected: manifest.sha256, actual: actual)
        }
        let all = littleEndianFloats(data, from: data.startIndex, count: values)
        return try FoodTop(weights: Array(all[0..<n]), bias: Array(all[n...]), inChannels: manifest.inChannels,
                           outChannels: manifest.outChannels)
    }
}
