public import FoodCore
import Foundation

/// A fine-tuned copy of the backbone's top for food features: optionally its last MBConv blocks (`blocks`, run on
/// the output of backbone block `tapBlock`), then the head conv (320 → 1280 1×1, BatchNorm folded, ReLU6).
///
/// It runs on a block output (`BackboneOutput.blockOutput`, asked for at `tapBlock`) and gives the food embedding
/// (the mean of its cells) and the per-cell food feature map; the ImageNet logits keep coming from the original
/// network. Stored as `food-top.bin` (each block's six arrays — see `TailBlock` — then the head conv's weights
/// `[out][in]` and bias, little-endian f32) and `food-top.json` (shapes, byte count and SHA-256 that `load` checks).
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
        /// v2: the fine-tuned backbone blocks before the head conv (absent or empty: none) and the backbone block
        /// whose output they read.
        public var blocks: [EfficientNetLite0.BlockShape]?
        public var tapBlock: Int?
    }

    /// Head conv only.
    public static let formatName = "foodmoment-food-top-v1"
    /// Blocks + head conv.
    public static let formatNameWithBlocks = "foodmoment-food-top-v2"
    public static let manifestFileName = "food-top.json"
    public static let weightsFileName = "food-top.bin"

    public let inChannels: Int
    public let outChannels: Int
    /// `[outChannels][inChannels]`, BatchNorm folded.
    public let weights: [Float]
    public let bias: [Float]
    /// Fine-tuned backbone blocks run before the head conv (empty: the head conv reads the last block's output).
    package let blocks: [TailBlock]
    package let conv: PointwiseConv2D
    let blockLayers: [TailBlock.Layers]

    /// The backbone block whose output this top reads (15, the last, without blocks).
    public var tapBlock: Int { EfficientNetLite0.blockShapes.count - 1 - blocks.count }
    /// Channels of that block output.
    public var inputChannels: Int { blocks.first?.shape.inChannels ?? inChannels }

    /// `precision`: the arithmetic of its 1x1 convolutions (`InferencePrecision`).
    package init(weights: [Float], bias: [Float], inChannels: Int, outChannels: Int, blocks: [TailBlock] = [],
                precision: InferencePrecision = .preferred) throws(FoodVisionError) {
        guard inChannels > 0, outChannels > 0, weights.count == inChannels * outChannels, bias.count == outChannels else {
            throw .invalidInput(reason: "food top needs \(outChannels)x\(inChannels) weights and \(outChannels) biases, got \(weights.count) and \(bias.count)")
        }
        guard blocks.count < EfficientNetLite0.blockShapes.count else { throw .invalidInput(reason: "\(blocks.count) blocks is more than the backbone has") }
        for (i, b) in blocks.enumerated() {
            let next = i + 1 < blocks.count ? blocks[i + 1].shape.inChannels : inChannels
            guard b.shape.outChannels == next else {
                throw .invalidInput(reason: "tail block \(i) gives \(b.shape.outChannels) channels, the next layer reads \(next)")
            }
        }
        self.inChannels = inChannels; self.outChannels = outChannels
        self.weights = weights; self.bias = bias; self.blocks = blocks
        conv = PointwiseConv2D(weightsOI: weights, bias: bias, inChannels: inChannels, outChannels: outChannels, activation: .relu6,
                               precision: precision)
        blockLayers = blocks.map { $0.layers(precision: precision) }
    }

    /// The ImageNet head conv of a converted EfficientNet-Lite0 (BatchNorm `_bn1` folded into `_conv_head`): the
    /// starting point of fine-tuning.
    /// With `blocks` > 0, the backbone's last `blocks` MBConv blocks (they must be stride 1: at most 4) come first.
    public static func imageNet(modelDirectory: String, blocks count: Int = 0) throws(FoodVisionError) -> FoodTop {
        let (manifest, t, checksum) = try EfficientNetLite0.readModel(directory: modelDirectory)
        try checksum.verify()
        let bn = BatchNorm(gamma: t["_bn1.weight"]!, beta: t["_bn1.bias"]!, mean: t["_bn1.running_mean"]!,
                           variance: t["_bn1.running_var"]!, epsilon: manifest.batchNormEpsilon)
        let folded = bn.fold(weights: t["_conv_head.weight"]!, outChannels: EfficientNetLite0.embeddingSize)
        let total = EfficientNetLite0.blockShapes.count
        guard (0..<total).contains(count) else { throw .invalidInput(reason: "cannot take \(count) of \(total) blocks") }
        var blocks = [TailBlock]()
        for index in (total - count)..<total {
            blocks.append(try TailBlock.imageNet(index: index, tensors: t, epsilon: manifest.batchNormEpsilon))
        }
        return try FoodTop(weights: folded.weights, bias: folded.bias, inChannels: 320, outChannels: EfficientNetLite0.embeddingSize,
                           blocks: blocks)
    }

    /// The food feature map (h × w × outChannels, after ReLU6) of a block output (block `tapBlock`'s).
    public func featureMap(blockOutput x: FloatImage) throws(FoodVisionError) -> FloatImage {
        guard x.channels == inputChannels else {
            throw .invalidInput(reason: "block output has \(x.channels) channels, the food top reads \(inputChannels)")
        }
        var t = Tensor(batch: 1, height: x.height, width: x.width, channels: x.channels, values: x.values)
        for layer in blockLayers { t = layer(t) }
        let out = conv(t)
        return FloatImage(width: x.width, height: x.height, channels: outChannels, values: out.values)
    }

    /// The food embedding: the mean over the cells of `featureMap`.
    public func embedding(blockOutput x: FloatImage) throws(FoodVisionError) -> [Float] {
        Self.meanOfCells(try featureMap(blockOutput: x))
    }

    /// The food embedding of a backbone pass that kept this top's tap block output (`forward(_:on:)`, or any pass
    /// asked for `blockOutputIndex: tapBlock`).
    public func embedding(of output: BackboneOutput) throws(FoodVisionError) -> [Float] {
        guard let block = output.blockOutput else { throw .invalidInput(reason: "backbone returned no block output for the food top") }
        return try embedding(blockOutput: block)
    }

    /// The backbone pass this top reads: up to its tap block's output, and no further when it has blocks of its own
    /// (their output replaces the network's tail; the ImageNet logits are then not computed).
    public func forward(_ inputs: [FloatImage], on network: EfficientNetLite0) throws(FoodVisionError) -> [BackboneOutput] {
        try network.forward(inputs, includeBlockOutput: true, blockOutputIndex: tapBlock, stopAtBlockOutput: !blocks.isEmpty)
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
        let arrays = blocks.flatMap(\.arrays) + [weights, bias]
        var data = Data(capacity: arrays.reduce(0) { $0 + $1.count } * 4)
        for a in arrays { appendLittleEndian(a, to: &data) }
        let manifest = Manifest(format: blocks.isEmpty ? Self.formatName : Self.formatNameWithBlocks, inChannels: inChannels,
                                outChannels: outChannels, weightsFile: Self.weightsFileName, bytes: data.count,
                                sha256: sha256Hex(of: data), note: note, blocks: blocks.isEmpty ? nil : blocks.map(\.shape),
                                tapBlock: blocks.isEmpty ? nil : tapBlock)
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
    public static func load(directory: String, precision: InferencePrecision = .preferred) throws(FoodVisionError) -> FoodTop {
        let manifestPath = (directory as NSString).appendingPathComponent(manifestFileName)
        guard FileManager.default.fileExists(atPath: manifestPath) else { throw .missingFile(path: manifestPath) }
        let manifestData = try readModelFile(manifestPath)
        let manifest: Manifest
        do { manifest = try JSONDecoder().decode(Manifest.self, from: manifestData) } catch {
            throw .invalidFormat(path: manifestPath, reason: "not a food-top manifest (\(error))")
        }
        guard manifest.format == formatName || manifest.format == formatNameWithBlocks else {
            throw .invalidFormat(path: manifestPath, reason: "format \(manifest.format); this build reads \(formatName) and \(formatNameWithBlocks)")
        }
        // Block shapes must be the backbone's own last blocks (the tap and the channels follow from them).
        let shapes = manifest.blocks ?? []
        let all = EfficientNetLite0.blockShapes
        guard shapes.count < all.count, shapes == Array(all.suffix(shapes.count)),
              manifest.tapBlock == nil || manifest.tapBlock == all.count - 1 - shapes.count,
              shapes.allSatisfy({ $0.stride == 1 }) else {
            throw .manifestMismatch(path: manifestPath, reason: "blocks \(shapes) are not the backbone's last stride-1 blocks (tap \(manifest.tapBlock.map(String.init) ?? "none"))")
        }
        // Small, known shapes: no overflow possible in the block counts; the head conv's come from the manifest.
        let blockCounts = shapes.flatMap(TailBlock.arrayCounts)
        let (n, o1) = manifest.inChannels.multipliedReportingOverflow(by: manifest.outChannels)
        let (headValues, o2) = n.addingReportingOverflow(manifest.outChannels)
        let (values, o3) = headValues.addingReportingOverflow(blockCounts.reduce(0, +))
        guard manifest.inChannels > 0, manifest.outChannels > 0, !o1, !o2, !o3, values <= Int.max / 4, manifest.bytes == values * 4 else {
            throw .manifestMismatch(path: manifestPath, reason: "\(manifest.bytes) bytes do not hold \(shapes.count) blocks + \(manifest.outChannels)x\(manifest.inChannels) weights + \(manifest.outChannels) biases as f32")
        }
        let data = try readCheckedWeights(named: manifest.weightsFile, manifestPath: manifestPath, bytes: manifest.bytes,
                                          sha256: manifest.sha256)
        let floats = littleEndianFloats(data, from: data.startIndex, count: values)
        var offset = 0
        func take(_ count: Int) -> [Float] { defer { offset += count }; return Array(floats[offset..<(offset + count)]) }
        var blocks = [TailBlock]()
        for s in shapes { blocks.append(try TailBlock(shape: s, arrays: TailBlock.arrayCounts(s).map { take($0) })) }
        let w = take(n), b = take(manifest.outChannels)
        return try FoodTop(weights: w, bias: b, inChannels: manifest.inChannels, outChannels: manifest.outChannels, blocks: blocks,
                           precision: precision)
    }
}
