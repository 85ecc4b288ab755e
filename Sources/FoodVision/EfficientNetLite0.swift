public import FoodCore
import Foundation

/// What the backbone says about one image.
public struct BackboneOutput: Sendable {
    /// The 1280-d globally pooled features (input of the ImageNet classifier); the embedding for food heads.
    public var embedding: [Float]
    /// The 1000 ImageNet logits (before softmax).
    public var logits: [Float]
    /// The last feature map (7 x 7 x 1280 at 224 x 224 input), when asked for (class activation maps).
    public var featureMap: FloatImage?
    /// The last MBConv block's output (7 x 7 x 320 at 224 x 224 input), the input of the head conv, when asked
    /// for (a fine-tuned top, `FoodTop`, runs its own head conv on it).
    public var blockOutput: FloatImage? = nil
    /// Other blocks' outputs, when asked for (`extraBlockOutputIndices`, in that order): finer maps of the same pass
    /// for the cell detector (`FusedCellMap`).
    public var extraBlockOutputs: [FloatImage] = []
}

/// One ranked class.
public struct ClassScore: Sendable, Equatable, Codable {
    public var index: Int
    public var label: String
    public var probability: Float
    public var logit: Float
}

/// EfficientNet-Lite0 (ImageNet-1k) on the FoodVision runtime — or Lite1 / Lite2, as `manifest.json` says
/// (`architecture`): BatchNorm folded at load, activations in a preallocated ping-pong arena reused across calls.
///
/// `forward` is serialised by a lock (the arena is shared); use one instance per thread for parallelism.
public final class EfficientNetLite0: @unchecked Sendable {
    public static let inputSize = 224
    /// The same for every Lite variant: `BackboneArchitecture` holds them.
    public static let embeddingSize = BackboneArchitecture.embeddingSize
    public static let classCount = BackboneArchitecture.classCount
    public static let stemChannels = BackboneArchitecture.stemChannels

    /// One row of the block table: channels in / expanded / out, depthwise kernel and stride, residual add.
    public struct BlockShape: Sendable, Codable, Equatable {
        public var inChannels: Int, midChannels: Int, outChannels: Int, kernel: Int, stride: Int, residual: Bool
    }

    /// Lite0's 16 MBConv blocks in order (`_blocks.0` … `_blocks.15`): the shipped backbone, which the food top's
    /// tail blocks and the training tools are built on.
    public static let blockShapes: [BlockShape] = BackboneArchitecture.lite0.blockShapes

    struct Block: Sendable {
        var expand: PointwiseConv2D?
        var depthwise: DepthwiseConv2D
        var project: PointwiseConv2D
        var residual: Bool
    }

    package let manifest: ModelManifest
    package let architecture: BackboneArchitecture
    /// The input size the weights were trained at (224 for Lite0, 240 Lite1, 260 Lite2).
    public var inputSize: Int { architecture.inputSize }
    public let labels: [String]
    private let chosenKernel: GemmKernel?
    /// The float GEMM kernel: the one named at load, else `GemmKernel.fastest` (measured when first asked, so a
    /// network whose 1×1 convolutions all run in BF16 or INT8 does not pay for the measurement).
    public var gemmKernel: GemmKernel { chosenKernel ?? .fastest }
    /// The arithmetic of the 1x1 convolutions and the classifier (`InferencePrecision`).
    public let precision: InferencePrecision
    /// Floats of expanded input rows per band of a large block (`InferenceOptions.bandFloats`).
    let bandFloats: Int
    let stem: Conv2D
    let blocks: [Block]
    let head: PointwiseConv2D
    let fc: FullyConnected
    /// The classifier weights, `[1000][1280]`, kept unpacked for class activation maps.
    let fcWeights: [Float]
    let lock = NSLock()
    /// Arenas by input shape (batch, height, width), so alternating shapes (the 224 pair and the 448
    /// localisation pass) reuse their buffers instead of reallocating on every call. At most a few shapes.
    var arenas: [[Int]: Arena] = [:]
    var arena: Arena?

    /// Another network over the same weights, with activation buffers of its own: `forward` holds the network's lock
    /// for a whole pass, so each worker thread needs its own, but the folded and packed layers never change after
    /// loading and are shared (a second worker costs no load, no checksum and no second copy of the weights).
    public func sharingWeights() -> EfficientNetLite0 { EfficientNetLite0(sharingWeightsOf: self) }

    private init(sharingWeightsOf o: EfficientNetLite0) {
        manifest = o.manifest; architecture = o.architecture; labels = o.labels; chosenKernel = o.chosenKernel
        precision = o.precision; bandFloats = o.bandFloats; stem = o.stem; blocks = o.blocks; head = o.head; fc = o.fc; fcWeights = o.fcWeights
    }

    /// Every tensor name of Lite0 with its PyTorch shape.
    public static func expectedTensorShapes() -> [String: [Int]] { BackboneArchitecture.lite0.expectedTensorShapes() }

    /// Loads a converted model directory (`manifest.json`, `weights.bin`, labels), checking the SHA-256,
    /// the weight file's size against the layer table and every tensor's shape.
    public convenience init(modelDirectory: String, options: InferenceOptions) throws(FoodVisionError) {
        try self.init(modelDirectory: modelDirectory, kernel: options.kernel, precision: options.precision, bandFloats: options.bandFloats)
    }

    public convenience init(modelDirectory: String, kernel: GemmKernel? = nil, precision: InferencePrecision = .preferred,
                            bandFloats: Int = InferenceOptions.defaultBandFloats) throws(FoodVisionError) {
        let (manifest, tensors, checksum) = try Self.readModel(directory: modelDirectory)
        defer { checksum.finish() }
        let manifestPath = (modelDirectory as NSString).appendingPathComponent(ModelConverter.manifestFileName)
        let labelsPath = (modelDirectory as NSString).appendingPathComponent(try checkedModelFileName(manifest.labelsFile, manifestPath: manifestPath))
        let labels = try readLabels(labelsPath)
        guard labels.count == manifest.classCount, labels.count == Self.classCount else {
            throw .manifestMismatch(path: labelsPath, reason: "\(labels.count) labels, expected \(Self.classCount)")
        }
        try self.init(manifest: manifest, tensors: tensors, labels: labels, kernel: kernel, precision: precision,
                      bandFloats: bandFloats)
        try checksum.verify()
    }

    /// Reads and verifies a model directory; returns the manifest and the tensors by name.
    /// The weights' SHA-256 is still being computed on its own thread when this returns (see `PendingChecksum`): callers
    /// build from the tensors meanwhile and call `verify()` before handing anything out.
    static func readModel(directory: String) throws(FoodVisionError) -> (ModelManifest, WeightTable, PendingChecksum) {
        let manifestPath = (directory as NSString).appendingPathComponent(ModelConverter.manifestFileName)
        guard FileManager.default.fileExists(atPath: manifestPath) else { throw .missingFile(path: manifestPath) }
        let manifestData = try readModelFile(manifestPath)
        let manifest: ModelManifest
        do {
            manifest = try JSONDecoder().decode(ModelManifest.self, from: manifestData)
        } catch {
            throw .invalidFormat(path: manifestPath, reason: "cannot decode manifest (\(error))")
        }
        guard manifest.format == ModelManifest.formatName, manifest.formatVersion == ModelManifest.currentFormatVersion else {
            throw .invalidFormat(path: manifestPath, reason: "format \(manifest.format) v\(manifest.formatVersion); this build reads \(ModelManifest.formatName) v\(ModelManifest.currentFormatVersion)")
        }
        let weightsPath = (directory as NSString).appendingPathComponent(try checkedModelFileName(manifest.weightsFile, manifestPath: manifestPath))
        guard FileManager.default.fileExists(atPath: weightsPath) else { throw .missingFile(path: weightsPath) }
        // The layer table must be self-consistent and cover the file exactly.
        var end = 0
        for t in manifest.tensors {
            guard t.dtype == "f32" else { throw .manifestMismatch(path: manifestPath, reason: "tensor \(t.name) has dtype \(t.dtype); only f32 is supported") }
            guard t.shape.allSatisfy({ $0 > 0 }), let values = checkedElementCount(t.shape) else {
                throw .manifestMismatch(path: manifestPath, reason: "tensor \(t.name): shape \(t.shape) has a non-positive dimension or too many values")
            }
            guard values == t.count else {
                throw .manifestMismatch(path: manifestPath, reason: "tensor \(t.name): shape \(t.shape) holds \(values) values but count is \(t.count)")
            }
            guard t.offset >= end else {
                throw .manifestMismatch(path: manifestPath, reason: "tensor \(t.name) at byte \(t.offset) overlaps the previous tensor (ends at \(end))")
            }
            let (bytes, o1) = t.count.multipliedReportingOverflow(by: 4)
            let (tensorEnd, o2) = t.offset.addingReportingOverflow(bytes)
            guard !o1, !o2 else {
                throw .manifestMismatch(path: manifestPath, reason: "tensor \(t.name) at byte \(t.offset) with \(t.count) values lies beyond any possible file")
            }
            end = tensorEnd
        }
        // An empty weights file is refused unread (Foundation leaks its read buffer on empty files; see `fileSize`).
        guard (fileSize(atPath: weightsPath) ?? 0) > 0 else { throw .truncatedWeights(path: weightsPath, expectedBytes: end, actualBytes: 0) }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: weightsPath)) } catch {
            throw .io(path: weightsPath, reason: "cannot read (\(error.localizedDescription))")
        }
        if data.count < end { throw .truncatedWeights(path: weightsPath, expectedBytes: end, actualBytes: data.count) }
        guard data.count == manifest.weightsBytes, end == manifest.weightsBytes else {
            throw .manifestMismatch(path: manifestPath, reason: "weights file has \(data.count) bytes, manifest says \(manifest.weightsBytes) and the layer table ends at \(end)")
        }
        guard let architecture = BackboneArchitecture.named(manifest.architecture) else {
            throw .manifestMismatch(path: manifestPath, reason: "architecture \(manifest.architecture); this build runs \(BackboneArchitecture.all.map(\.name).joined(separator: ", "))")
        }
        let expected = architecture.expectedTensorShapes()
        var entries = [String: (offset: Int, count: Int)]()
        for t in manifest.tensors {
            guard let shape = expected[t.name] else { continue }
            guard shape == t.shape else {
                throw .manifestMismatch(path: manifestPath, reason: "tensor \(t.name) has shape \(t.shape), the network needs \(shape)")
            }
            entries[t.name] = (t.offset, t.count)
        }
        for name in expected.keys.sorted() where entries[name] == nil {
            throw .manifestMismatch(path: manifestPath, reason: "tensor \(name) is missing from the layer table")
        }
        // Started last, so that nothing above can fail with the hashing thread still running.
        let checksum = PendingChecksum(of: data, path: weightsPath, expected: manifest.weightsSHA256)
        return (manifest, WeightTable(data: data, entries: entries), checksum)
    }

    /// Builds the network from unfolded tensors (PyTorch names and layouts), folding every BatchNorm.
    init(manifest: ModelManifest, tensors t: WeightTable, labels: [String], kernel: GemmKernel?,
         precision: InferencePrecision, bandFloats: Int = InferenceOptions.defaultBandFloats) throws(FoodVisionError) {
        self.bandFloats = max(1024, bandFloats)
        guard let architecture = BackboneArchitecture.named(manifest.architecture) else {
            throw .invalidInput(reason: "architecture \(manifest.architecture) is not one this build runs")
        }
        self.manifest = manifest
        self.architecture = architecture
        self.labels = labels
        self.chosenKernel = kernel
        self.precision = precision.available
        let eps = manifest.batchNormEpsilon
        func bn(_ p: String) -> BatchNorm {
            BatchNorm(gamma: t[p + ".weight"]!, beta: t[p + ".bias"]!, mean: t[p + ".running_mean"]!,
                      variance: t[p + ".running_var"]!, epsilon: eps)
        }
        let stemFolded = bn("_bn0").fold(weights: t["_conv_stem.weight"]!, outChannels: Self.stemChannels)
        stem = Conv2D(weightsOIHW: stemFolded.weights, bias: stemFolded.bias, inChannels: 3, outChannels: Self.stemChannels,
                      kernel: 3, stride: 2, activation: .relu6)
        var blocks = [Block]()
        for (index, shape) in architecture.blockShapes.enumerated() {
            let p = "_blocks.\(index)."
            var expand: PointwiseConv2D?
            if shape.midChannels != shape.inChannels {
                let f = bn(p + "_bn0").fold(weights: t[p + "_expand_conv.weight"]!, outChannels: shape.midChannels)
                expand = PointwiseConv2D(weightsOI: f.weights, bias: f.bias, inChannels: shape.inChannels, outChannels: shape.midChannels,
                                         activation: .relu6, kernel: kernel, precision: precision)
            }
            let d = bn(p + "_bn1").fold(weights: t[p + "_depthwise_conv.weight"]!, outChannels: shape.midChannels)
            let depthwise = DepthwiseConv2D(weightsCKK: d.weights, bias: d.bias, channels: shape.midChannels, kernel: shape.kernel,
                                            stride: shape.stride, activation: .relu6)
            let pr = bn(p + "_bn2").fold(weights: t[p + "_project_conv.weight"]!, outChannels: shape.outChannels)
            let project = PointwiseConv2D(weightsOI: pr.weights, bias: pr.bias, inChannels: shape.midChannels, outChannels: shape.outChannels,
                                          activation: .none, kernel: kernel, precision: precision)
            blocks.append(Block(expand: expand, depthwise: depthwise, project: project, residual: shape.residual))
        }
        self.blocks = blocks
        let h = bn("_bn1").fold(weights: t["_conv_head.weight"]!, outChannels: Self.embeddingSize)
        head = PointwiseConv2D(weightsOI: h.weights, bias: h.bias, inChannels: architecture.lastChannels, outChannels: Self.embeddingSize,
                               activation: .relu6, kernel: kernel, precision: precision)
        let fcW = t["_fc.weight"]!
        fc = FullyConnected(weightsOI: fcW, bias: t["_fc.bias"]!, inFeatures: Self.embeddingSize,
                            outFeatures: Self.classCount, kernel: kernel, precision: precision)
        fcWeights = fcW
    }

    /// Activation buffers for one input shape and its transpose (a portrait photo's 352 x 448 pass after a landscape
    /// one's 448 x 352: one arena, not two), reused until the shape changes.
    final class Arena {
        let batch: Int, height: Int, width: Int
        let blockA: FloatBuffer, blockB: FloatBuffer, expanded: FloatBuffer, depthwise: FloatBuffer
        let pooled: FloatBuffer, logits: FloatBuffer, padded: FloatBuffer, band: FloatBuffer, depthwiseBand: FloatBuffer

        init(batch: Int, height: Int, width: Int, network: EfficientNetLite0) {
            self.batch = batch; self.height = height; self.width = width
            var blockMax = 0, expandMax = 0, dwMax = 0, paddedMax = 0, bandMax = 0, dwBandMax = 0
            for (inH, inW) in [(height, width), (width, height)] {
                var h = samePadding(inputSize: inH, kernel: 3, stride: 2).output
                var w = samePadding(inputSize: inW, kernel: 3, stride: 2).output
                // Fused with the first block, the stem's output exists only band by band, in `band`.
                if !network.fusesStem(height: h) { blockMax = max(blockMax, h * w * EfficientNetLite0.stemChannels) }
                for b in network.blocks {
                    let mid = b.depthwise.channels
                    let (oh, ow) = b.depthwise.outputSize(height: h, width: w)
                    if EfficientNetLite0.runsInBands(b, height: h) {
                        // The expanded and depthwise rows live in the band buffers; `expanded` and `depthwise` are
                        // not used (on the first blocks of a 448 pass they would be the largest buffers).
                        let rows = network.bandOutputRows(b, width: w)
                        bandMax = max(bandMax, ((rows - 1) * b.depthwise.stride + b.depthwise.kernel) * w * mid)
                        dwBandMax = max(dwBandMax, rows * ow * mid)
                    } else {
                        expandMax = max(expandMax, h * w * mid)
                        dwMax = max(dwMax, oh * ow * mid)
                    }
                    paddedMax = max(paddedMax, b.depthwise.paddedScratchCount(height: h, width: w))
                    (h, w) = (oh, ow)
                    blockMax = max(blockMax, h * w * b.project.outChannels)
                }
                expandMax = max(expandMax, h * w * EfficientNetLite0.embeddingSize)
            }
            blockA = FloatBuffer(count: batch * blockMax)
            blockB = FloatBuffer(count: batch * blockMax)
            expanded = FloatBuffer(count: batch * expandMax)
            depthwise = FloatBuffer(count: batch * dwMax)
            pooled = FloatBuffer(count: batch * EfficientNetLite0.embeddingSize)
            logits = FloatBuffer(count: batch * EfficientNetLite0.classCount)
            padded = FloatBuffer(count: paddedMax)
            band = FloatBuffer(count: bandMax)
            depthwiseBand = FloatBuffer(count: dwBandMax)
        }

        func serves(batch n: Int, height h: Int, width w: Int) -> Bool {
            n == batch && ((h, w) == (height, width) || (h, w) == (width, height))
        }
    }

    /// Whether the stem runs band by band inside the first block (`runStemAndFirstBlock`), for a stem output of
    /// `height` rows: when that block runs in bands and reads the stem's output directly (no expansion, no residual).
    func fusesStem(height: Int) -> Bool {
        guard let b = blocks.first else { return false }
        return b.expand == nil && !b.residual && b.depthwise.channels == stem.outChannels && Self.runsInBands(b, height: height)
    }

    /// The stem and the first block together, band by band: each band's stem rows go to the band buffer and are read
    /// from there by the depthwise layer, instead of the whole stem output (5 MB at 448 x 352) being written to memory
    /// and read back. The same arithmetic on the same values as the stem followed by `runBlock`.
    func runStemAndFirstBlock(input: UnsafePointer<Float>, batch n: Int, height inH: Int, width inW: Int,
                              output: UnsafeMutablePointer<Float>, arena a: Arena) {
        let (h, w) = stem.outputSize(height: inH, width: inW)
        runInBands(blocks[0], batch: n, height: h, width: w, output: output, arena: a, residualInput: nil) { img, r0, r1 in
            stem.run(input: input + img * inH * inW * stem.inChannels, batch: 1, height: inH, width: inW,
                     output: a.band.pointer, rows: r0..<r1)
            return UnsafePointer(a.band.pointer)
        }
    }

    /// Blocks on large maps (more rows than the depthwise padded-copy threshold) run band by band: the
    /// expanded rows a band of depthwise outputs needs go to an L2-sized buffer, the depthwise rows to
    /// another, and the projection writes the block output, instead of writing and re-reading each whole
    /// tensor (the expanded map is 4.8 MB at 112 x 112 x 96). Same arithmetic, less memory traffic.
    static func runsInBands(_ b: Block, height: Int) -> Bool {
        !b.depthwise.usesPaddedCopy(height: height)
    }

    /// Output rows per band: enough that the band's input rows fill about 512 KB (`bandFloats`: 64 K was slower,
    /// 192 K and 256 K within noise of 128 K, `bench --layers --per-layer`).
    func bandOutputRows(_ b: Block, width: Int) -> Int {
        let rowsIn = max(b.depthwise.kernel, bandFloats / max(1, width * b.depthwise.channels))
        return max(1, (rowsIn - b.depthwise.kernel) / b.depthwise.stride + 1)
    }

    /// One inverted-residual block: `input` (N x h x w x in) to `output` (N x oh x ow x out).
    func runBlock(_ b: Block, input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, batch n: Int,
                  height h: Int, width w: Int, arena a: Arena) {
        let (oh, ow) = b.depthwise.outputSize(height: h, width: w)
        guard Self.runsInBands(b, height: h) else {
            var source = input
            if let expand = b.expand {
                expand.run(input: input, pixels: n * h * w, residual: nil, output: a.expanded.pointer)
                source = UnsafePointer(a.expanded.pointer)
            }
            b.depthwise.run(input: source, batch: n, height: h, width: w, output: a.depthwise.pointer, scratch: a.padded.pointer)
            b.project.run(input: a.depthwise.pointer, pixels: n * oh * ow, residual: b.residual ? input : nil, output: output)
            return
        }
        let cin = b.expand?.inChannels ?? b.depthwise.channels
        runInBands(b, batch: n, height: h, width: w, output: output, arena: a, residualInput: b.residual ? input : nil) { img, r0, r1 in
            let rows = input + (img * h + r0) * w * cin
            guard let expand = b.expand else { return rows }
            expand.run(input: rows, pixels: (r1 - r0) * w, residual: nil, output: a.band.pointer)
            return UnsafePointer(a.band.pointer)
        }
    }

    /// Block `b` band by band (see `runsInBands`): `bandInput(img, r0, r1)` gives the depthwise layer's input rows
    /// `r0..<r1` of image `img` — the block input's rows, their expansion in `band`, or the stem's rows in `band` — and
    /// the depthwise rows and the projection follow. `residualInput`: the block input, added by the projection.
    func runInBands(_ b: Block, batch n: Int, height h: Int, width w: Int, output: UnsafeMutablePointer<Float>, arena a: Arena,
                    residualInput: UnsafePointer<Float>?, bandInput: (_ img: Int, _ r0: Int, _ r1: Int) -> UnsafePointer<Float>) {
        let (oh, ow) = b.depthwise.outputSize(height: h, width: w)
        let rowsPerBand = bandOutputRows(b, width: w), cout = b.project.outChannels
        for img in 0..<n {
            let outImage = output + img * oh * ow * cout
            var oy0 = 0
            while oy0 < oh {
                let oy1 = min(oh, oy0 + rowsPerBand)
                let (r0, r1) = b.depthwise.inputRows(outputRows: oy0, oy1, height: h)
                b.depthwise.runBand(band: bandInput(img, r0, r1), bandRows: r1 - r0, firstRow: r0, height: h, width: w,
                                    outputRows: oy0, oy1, output: a.depthwiseBand.pointer)
                // A residual block keeps its size and channels, so its input rows line up with the output's.
                let first = oy0 * ow
                b.project.run(input: a.depthwiseBand.pointer, pixels: (oy1 - oy0) * ow,
                              residual: residualInput.map { $0 + img * oh * ow * cout + first * cout }, output: outImage + first * cout)
                oy0 = oy1
            }
        }
    }

    /// Runs a batch of preprocessed images (HWC, 3 channels, all the same size; 224 x 224 for the
    /// ImageNet-calibrated features) and returns one output per image, in order.
    public func forward(_ batch: [FloatImage], includeFeatureMap: Bool = false,
                        includeBlockOutput: Bool = false, blockOutputIndex: Int? = nil,
                        stopAtBlockOutput: Bool = false, extraBlockOutputIndices: [Int] = []) throws(FoodVisionError) -> [BackboneOutput] {
        // One image becomes a tensor sharing its storage (copy-on-write, nothing is written), instead of a
        // stacked copy in a fresh 600 KB buffer per call.
        if batch.count == 1, let only = batch.first, only.width >= 0, only.height >= 0, only.channels >= 0,
           only.values.count == only.width * only.height * only.channels {
            return try forward(Tensor(batch: 1, height: only.height, width: only.width, channels: only.channels, values: only.values),
                               includeFeatureMap: includeFeatureMap, includeBlockOutput: includeBlockOutput,
                               blockOutputIndex: blockOutputIndex, stopAtBlockOutput: stopAtBlockOutput,
                               extraBlockOutputIndices: extraBlockOutputIndices)
        }
        return try forward(Tensor(stacking: batch), includeFeatureMap: includeFeatureMap, includeBlockOutput: includeBlockOutput,
                           blockOutputIndex: blockOutputIndex, stopAtBlockOutput: stopAtBlockOutput,
                           extraBlockOutputIndices: extraBlockOutputIndices)
    }

    /// `blockOutputIndex` chooses the MBConv block whose output `blockOutput` holds (nil: the last one).
    /// `stopAtBlockOutput` ends the pass there: the outputs then hold only `blockOutput` (empty embedding and logits,
    /// no feature map) — for a `FoodTop` that replaces the rest of the network. `extraBlockOutputIndices` also keep
    /// those blocks' outputs (`extraBlockOutputs`).
    public func forward(_ input: Tensor, includeFeatureMap: Bool = false,
                        includeBlockOutput: Bool = false, blockOutputIndex: Int? = nil,
                        stopAtBlockOutput: Bool = false, extraBlockOutputIndices: [Int] = []) throws(FoodVisionError) -> [BackboneOutput] {
        guard input.channels == 3 else { throw .invalidInput(reason: "images have \(input.channels) channels; the network takes RGB (3)") }
        let tap = blockOutputIndex ?? blocks.count - 1
        guard blocks.indices.contains(tap) else { throw .invalidInput(reason: "no block \(tap); the network has \(blocks.count)") }
        for extra in extraBlockOutputIndices where !blocks.indices.contains(extra) || (stopAtBlockOutput && extra > tap) {
            throw .invalidInput(reason: "no block \(extra) in this pass; the network has \(blocks.count)")
        }
        guard input.batch >= 1, input.height >= 1, input.width >= 1 else { throw .invalidInput(reason: "empty input tensor") }
        lock.lock()
        defer { lock.unlock() }
        if arena?.serves(batch: input.batch, height: input.height, width: input.width) != true {
            let key = [input.batch, min(input.height, input.width), max(input.height, input.width)]
            if let cached = arenas[key] {
                arena = cached
            } else {
                if arenas.count >= 3 { arenas.removeAll() }
                arena = nil
                let fresh = Arena(batch: input.batch, height: input.height, width: input.width, network: self)
                arenas[key] = fresh
                arena = fresh
            }
        }
        let a = arena!
        let n = input.batch
        var (h, w) = stem.outputSize(height: input.height, width: input.width)
        let fused = fusesStem(height: h)
        input.values.withUnsafeBufferPointer { x in
            if fused {
                runStemAndFirstBlock(input: x.baseAddress!, batch: n, height: input.height, width: input.width,
                                     output: a.blockA.pointer, arena: a)
            } else {
                stem.run(input: x.baseAddress!, batch: n, height: input.height, width: input.width, output: a.blockA.pointer)
            }
        }
        var current = a.blockA, spare = a.blockB
        var tapped: [FloatImage] = []
        var extras = [[FloatImage]](repeating: [], count: extraBlockOutputIndices.count)
        /// Copies of the current block output, one per image.
        func copies(_ buffer: UnsafeMutablePointer<Float>, height h: Int, width w: Int, channels ch: Int) -> [FloatImage] {
            let size = h * w * ch
            return (0..<n).map { img in
                FloatImage(width: w, height: h, channels: ch, values: Array(UnsafeBufferPointer(start: buffer + img * size, count: size)))
            }
        }
        for (i, b) in blocks.enumerated() {
            if !(fused && i == 0) {
                runBlock(b, input: current.pointer, output: spare.pointer, batch: n, height: h, width: w, arena: a)
                swap(&current, &spare)
            }
            (h, w) = b.depthwise.outputSize(height: h, width: w)
            for (k, extra) in extraBlockOutputIndices.enumerated() where extra == i {
                extras[k] = copies(current.pointer, height: h, width: w, channels: b.project.outChannels)
            }
            if includeBlockOutput && i == tap {
                tapped = copies(current.pointer, height: h, width: w, channels: b.project.outChannels)
                if stopAtBlockOutput {
                    return tapped.indices.map { img in
                        BackboneOutput(embedding: [], logits: [], featureMap: nil, blockOutput: tapped[img],
                                       extraBlockOutputs: extras.map { $0[img] })
                    }
                }
            }
        }
        head.run(input: current.pointer, pixels: n * h * w, residual: nil, output: a.expanded.pointer)
        globalAveragePool(input: a.expanded.pointer, batch: n, pixels: h * w, channels: Self.embeddingSize, output: a.pooled.pointer)
        fc.run(input: a.pooled.pointer, batch: n, output: a.logits.pointer)
        let e = Self.embeddingSize, c = Self.classCount
        return (0..<n).map { i in
            let mapSize = h * w * e
            return BackboneOutput(
                embedding: Array(UnsafeBufferPointer(start: a.pooled.pointer + i * e, count: e)),
                logits: Array(UnsafeBufferPointer(start: a.logits.pointer + i * c, count: c)),
                featureMap: includeFeatureMap
                    ? FloatImage(width: w, height: h, channels: e,
                                 values: Array(UnsafeBufferPointer(start: a.expanded.pointer + i * mapSize, count: mapSize)))
                    : nil,
                blockOutput: includeBlockOutput ? tapped[i] : nil,
                extraBlockOutputs: extras.map { $0[i] })
        }
    }

    /// The ImageNet classifier (the final fully connected layer) on a 1280-d embedding.
    public func imageNetLogits(embedding: [Float]) throws(FoodVisionError) -> [Float] {
        guard embedding.count == Self.embeddingSize else {
            throw .invalidInput(reason: "embedding has \(embedding.count) values, the classifier reads \(Self.embeddingSize)")
        }
        return fc([embedding])[0]
    }

    /// Preprocesses RGB images (`preprocess`) and runs them as one batch.
    public func forward(rgb images: [RGBImage], includeFeatureMap: Bool = false) throws(FoodVisionError) -> [BackboneOutput] {
        var batch = [FloatImage]()
        batch.reserveCapacity(images.count)
        for image in images { batch.append(try Self.preprocess(image)) }
        return try forward(batch, includeFeatureMap: includeFeatureMap)
    }

    /// Class activation map of ImageNet class `classIndex` over a feature map (`featureMap.height x width`
    /// values, row-major): the classifier's weights for that class applied at every position, so the map's
    /// mean plus the class bias is the class logit. High values show where the class is in the image.
    public func classActivationMap(featureMap: FloatImage, classIndex: Int) throws(FoodVisionError) -> [Float] {
        guard featureMap.channels == Self.embeddingSize else {
            throw .invalidInput(reason: "feature map has \(featureMap.channels) channels, the classifier reads \(Self.embeddingSize)")
        }
        guard (0..<Self.classCount).contains(classIndex) else {
            throw .invalidInput(reason: "class index \(classIndex) is outside 0..<\(Self.classCount)")
        }
        let row = Array(fcWeights[(classIndex * Self.embeddingSize)..<((classIndex + 1) * Self.embeddingSize)])
        return activationMap(featureMap, weights: row)
    }

    /// The `k` most probable ImageNet classes for some logits (softmax over all classes).
    public func topClasses(logits: [Float], k: Int = 5) -> [ClassScore] {
        let probabilities = softmax(logits)
        return logits.indices.sorted { logits[$0] > logits[$1] || (logits[$0] == logits[$1] && $0 < $1) }
            .prefix(k)
            .map { ClassScore(index: $0, label: $0 < labels.count ? labels[$0] : "class \($0)",
                              probability: probabilities[$0], logit: logits[$0]) }
    }

    /// The fixture preprocessing of the reference (see `manifest.preprocessing`): centre square crop,
    /// bilinear resize with half-pixel centres (no antialiasing, computed in Double), `(v - 127) / 128`.
    public static func preprocess(_ image: RGBImage, size: Int = inputSize) throws(FoodVisionError) -> FloatImage {
        guard image.width > 0, image.height > 0 else { throw .invalidInput(reason: "empty image (\(image.width)x\(image.height))") }
        let side = min(image.width, image.height)
        let left = (image.width - side) / 2, top = (image.height - side) / 2
        let scale = Double(side) / Double(size)
        func taps(_ d: Int) -> (Int, Int, Double) {
            let src = min(max((Double(d) + 0.5) * scale - 0.5, 0), Double(side - 1))
            let i0 = Int(src.rounded(.down))
            return (i0, min(i0 + 1, side - 1), src - Double(i0))
        }
        let xTaps = (0..<size).map(taps), yTaps = (0..<size).map(taps)
        var values = [Float](repeating: 0, count: size * size * 3)
        image.pixels.withUnsafeBufferPointer { px in
            // Rows first (vertical blend of two source rows), then columns, all in Double.
            var row = [Double](repeating: 0, count: side * 3)
            for y in 0..<size {
                let (y0, y1, fy) = yTaps[y]
                let r0 = (top + y0) * image.width, r1 = (top + y1) * image.width
                for x in 0..<side {
                    for ch in 0..<3 {
                        let a = Double(px[(r0 + left + x) * 3 + ch]), b = Double(px[(r1 + left + x) * 3 + ch])
                        row[x * 3 + ch] = a + (b - a) * fy
                    }
                }
                for x in 0..<size {
                    let (x0, x1, fx) = xTaps[x]
                    for ch in 0..<3 {
                        let a = row[x0 * 3 + ch], b = row[x1 * 3 + ch]
                        values[(y * size + x) * 3 + ch] = Float((a + (b - a) * fx - 127) / 128)
                    }
                }
            }
        }
        return FloatImage(width: size, height: size, channels: 3, values: values)
    }
}

/// `sum_c weights[c] * map[p, c]` at every position p of an HWC map.
func activationMap(_ map: FloatImage, weights: [Float]) -> [Float] {
    let c = map.channels
    return map.values.withUnsafeBufferPointer { v in
        weights.withUnsafeBufferPointer { w in
            (0..<(map.width * map.height)).map { p in
                var acc: Float = 0
                for j in 0..<c { acc += v[p * c + j] * w[j] }
                return acc
            }
        }
    }
}

/// Numerically stable softmax.
public func softmax(_ logits: [Float]) -> [Float] {
    guard let m = logits.max() else { return [] }
    let e = logits.map { Foundation.exp(Double($0 - m)) }
    let s = e.reduce(0, +)
    return e.map { Float($0 / s) }
}

/// Time spent in one kind of layer during `EfficientNetLite0.profile`.
public struct LayerProfile: Sendable, Codable, Equatable {
    public var kind: String
    public var milliseconds: Double
    public var multiplyAdds: Int
    /// Achieved rate, counting a multiply-add as two operations.
    public var gflops: Double { milliseconds > 0 ? Double(multiplyAdds) * 2 / (milliseconds * 1e6) : 0 }
}

extension EfficientNetLite0 {
    /// Runs the network on one 224 x 224 input `runs` times and reports, per kind of layer (stem, expand 1x1,
    /// depthwise, project 1x1, head 1x1, pool + fc, blocks run in bands) or per layer, the fastest run's
    /// time: where a forward pass spends its time.
    public func profile(_ image: FloatImage, runs: Int = 20, perLayer: Bool = false) throws(FoodVisionError) -> [LayerProfile] {
        _ = try forward([image])  // sizes the arena
        lock.lock()
        defer { lock.unlock() }
        let a = arena!
        // Per run, the time and work of each kind; the report keeps each kind's fastest run (the least
        // disturbed by other processes on a shared machine).
        var run: [String: (UInt64, Int)] = [:]
        var best: [String: (UInt64, Int)] = [:]
        func timed(_ kind: String, _ macs: Int, _ body: () -> Void) {
            let t0 = monotonicNanoseconds()
            body()
            let dt = monotonicNanoseconds() - t0
            let old = run[kind] ?? (0, 0)
            run[kind] = (old.0 + dt, old.1 + macs)
        }
        for _ in 0..<runs {
            run = [:]
            defer {
                for (kind, value) in run where value.0 < (best[kind]?.0 ?? .max) { best[kind] = value }
            }
            var (h, w) = stem.outputSize(height: image.height, width: image.width)
            let fused = fusesStem(height: h)
            image.values.withUnsafeBufferPointer { x in
                if fused {
                    let b = blocks[0], (oh, ow) = b.depthwise.outputSize(height: h, width: w)
                    let macs = h * w * 27 * Self.stemChannels
                        + oh * ow * b.depthwise.channels * (b.depthwise.kernel * b.depthwise.kernel + b.project.outChannels)
                    timed(perLayer ? "stem 3x3 + block in bands \(h)x\(w)x\(b.depthwise.channels) k\(b.depthwise.kernel)s\(b.depthwise.stride)"
                          : "stem 3x3 + first block", macs) {
                        runStemAndFirstBlock(input: x.baseAddress!, batch: 1, height: image.height, width: image.width,
                                             output: a.blockA.pointer, arena: a)
                    }
                } else {
                    timed("stem 3x3", h * w * 27 * Self.stemChannels) {
                        stem.run(input: x.baseAddress!, batch: 1, height: image.height, width: image.width, output: a.blockA.pointer)
                    }
                }
            }
            if fused { (h, w) = blocks[0].depthwise.outputSize(height: h, width: w) }
            var current = a.blockA, spare = a.blockB
            for b in blocks.dropFirst(fused ? 1 : 0) {
                var source = UnsafePointer(current.pointer)
                if Self.runsInBands(b, height: h) {
                    let (oh, ow) = b.depthwise.outputSize(height: h, width: w)
                    let macs = h * w * (b.expand.map { $0.inChannels * $0.outChannels } ?? 0)
                        + oh * ow * b.depthwise.channels * (b.depthwise.kernel * b.depthwise.kernel + b.project.outChannels)
                    let src = source, hh = h, ww = w, out = spare
                    timed(perLayer ? "block in bands \(h)x\(w)x\(b.depthwise.channels) k\(b.depthwise.kernel)s\(b.depthwise.stride)" : "blocks in bands", macs) {
                        runBlock(b, input: src, output: out.pointer, batch: 1, height: hh, width: ww, arena: a)
                    }
                    (h, w) = (oh, ow)
                    swap(&current, &spare)
                    continue
                }
                if let expand = b.expand {
                    let src = source
                    timed(perLayer ? "expand \(h)x\(w)x\(expand.inChannels)->\(expand.outChannels)" : "expand 1x1", h * w * expand.inChannels * expand.outChannels) {
                        expand.run(input: src, pixels: h * w, residual: nil, output: a.expanded.pointer)
                    }
                    source = UnsafePointer(a.expanded.pointer)
                }
                let (oh, ow) = b.depthwise.outputSize(height: h, width: w)
                let src = source, hh = h, ww = w
                timed(perLayer ? "dw k\(b.depthwise.kernel)s\(b.depthwise.stride) \(h)x\(w)x\(b.depthwise.channels)" : "depthwise k\(b.depthwise.kernel)", oh * ow * b.depthwise.channels * b.depthwise.kernel * b.depthwise.kernel) {
                    b.depthwise.run(input: src, batch: 1, height: hh, width: ww, output: a.depthwise.pointer, scratch: a.padded.pointer)
                }
                (h, w) = (oh, ow)
                let cur = current
                timed(perLayer ? "project \(oh)x\(ow)x\(b.project.inChannels)->\(b.project.outChannels)" : "project 1x1", h * w * b.project.inChannels * b.project.outChannels) {
                    b.project.run(input: a.depthwise.pointer, pixels: oh * ow,
                                  residual: b.residual ? UnsafePointer(cur.pointer) : nil, output: spare.pointer)
                }
                swap(&current, &spare)
            }
            let cur = current, hh = h, ww = w
            timed("head 1x1", h * w * architecture.lastChannels * Self.embeddingSize) {
                head.run(input: cur.pointer, pixels: hh * ww, residual: nil, output: a.expanded.pointer)
            }
            timed("pool + fc", Self.embeddingSize * Self.classCount) {
                globalAveragePool(input: a.expanded.pointer, batch: 1, pixels: hh * ww, channels: Self.embeddingSize, output: a.pooled.pointer)
                fc.run(input: a.pooled.pointer, batch: 1, output: a.logits.pointer)
            }
        }
        return best.map { LayerProfile(kind: $0.key, milliseconds: Double($0.value.0) / 1e6, multiplyAdds: $0.value.1) }
            .sorted { $0.milliseconds > $1.milliseconds }
    }
}
