import FoodCore
import Foundation
import FoodMomentTestSupport
import Testing
@testable import FoodVision
@testable import FoodTraining

/// A tiny top + head: `cin` → `cout` conv, mean over `cells`, `k` classes. Half of the conv's channels get a
/// bias of +3 (never clipped by ReLU6 for inputs in [-1, 1]), half -3 (always 0), so finite differences never
/// cross a kink while both sides of the mask are exercised.
private func tinyModel(cin: Int, cout: Int, k: Int, seed: UInt64) -> (FoodTop, SoftmaxHead) {
    var r = TestRandom(seed: seed)
    let w = r.floats(cout * cin).map { $0 * 0.3 }
    let b = (0..<cout).map { $0 % 2 == 0 ? Float(3) : Float(-3) }
    let top = try! FoodTop(weights: w, bias: b, inChannels: cin, outChannels: cout)
    let head = SoftmaxHead(classes: (0..<k).map { "c\($0)" }, dimension: cout, weights: r.floats(k * cout),
                           bias: r.floats(k), featureMean: r.floats(cout).map { $0 + 3 },
                           featureScale: r.floats(cout).map { 0.5 + abs($0) }, report: nil)
    return (top, head)
}

/// Mean loss and gradients (times 1/n) of `n` views through `TopFineTuner.run`.
private func lossAndGradients(_ p: TopFineTuner.Parameters, x: [Float], labels: [Int], n: Int, cells: Int, cin: Int, cout: Int,
                              head: SoftmaxHead, smoothing: Float) -> (Float, TopFineTuner.Workspace) {
    let ws = TopFineTuner.Workspace(views: n, cells: cells, cin: cin, cout: cout, classes: head.classes.count)
    for i in x.indices { ws.x[i] = x[i] }
    let sw = TopFineTuner.StepWeights(p, shapes: [], cin: cin, cout: cout, kernel: .fastest, backward: true)
    TopFineTuner.run(ws: ws, n: n, labels: ArraySlice(labels), cells: cells, cin: cin, cout: cout, classes: head.classes.count,
                     weights: sw, p: p, mean: head.featureMean, scale: head.featureScale, smoothing: smoothing,
                     gradScale: 1 / Float(n))
    return (Float(ws.loss) / Float(n), ws)
}

/// Two tiny tail blocks before the head conv: 3 → 4 (expand 8, 3×3, no residual), then 4 → 4 (expand 6, 3×3,
/// residual). Biases keep every ReLU6 away from its kinks for the inputs used (half the channels always on,
/// half always off), so finite differences are exact up to rounding.
private func tinyBlocks(seed: UInt64) -> [TailBlock] {
    var r = TestRandom(seed: seed)
    func shape(_ i: Int, _ m: Int, _ o: Int, residual: Bool) -> EfficientNetLite0.BlockShape {
        .init(inChannels: i, midChannels: m, outChannels: o, kernel: 3, stride: 1, residual: residual)
    }
    func onOff(_ n: Int, on: Float) -> [Float] { (0..<n).map { $0 % 2 == 0 ? on : -on } }
    return [shape(3, 8, 4, residual: false), shape(4, 6, 4, residual: true)].map { s in
        try! TailBlock(shape: s, arrays: [
            r.floats(s.midChannels * s.inChannels).map { $0 * 0.1 }, onOff(s.midChannels, on: 3),
            r.floats(9 * s.midChannels).map { $0 * 0.02 }, onOff(s.midChannels, on: 3).map { $0 + 0 },
            r.floats(s.outChannels * s.midChannels).map { $0 * 0.1 }, r.floats(s.outChannels).map { $0 * 0.5 },
        ])
    }
}

@Suite struct FineTuneTests {
    @Test(arguments: [Float(0), 0.1])
    func gradientsMatchFiniteDifferences(smoothing: Float) throws {
        let cin = 5, cout = 6, k = 3, cells = 4, n = 3
        let (top, head) = tinyModel(cin: cin, cout: cout, k: k, seed: 7)
        var r = TestRandom(seed: 11)
        let x = r.floats(n * cells * cin)
        let labels = [0, 2, 1]
        let p = TopFineTuner.Parameters(w: top.weights, b: top.bias, hw: head.weights, hb: head.bias)
        let (_, ws) = lossAndGradients(p, x: x, labels: labels, n: n, cells: cells, cin: cin, cout: cout, head: head, smoothing: smoothing)
        let eps: Float = 1e-2
        func numeric(_ edit: (inout TopFineTuner.Parameters, Float) -> Void) -> Float {
            var plus = p, minus = p
            edit(&plus, eps); edit(&minus, -eps)
            let lp = lossAndGradients(plus, x: x, labels: labels, n: n, cells: cells, cin: cin, cout: cout, head: head, smoothing: smoothing).0
            let lm = lossAndGradients(minus, x: x, labels: labels, n: n, cells: cells, cin: cin, cout: cout, head: head, smoothing: smoothing).0
            return (lp - lm) / (2 * eps)
        }
        func close(_ a: Float, _ b: Float) -> Bool { abs(a - b) <= 2e-3 + 0.03 * max(abs(a), abs(b)) }
        var nonZeroConv = 0
        for i in 0..<(cout * cin) {
            let g = numeric { $0.w[i] += $1 }
            #expect(close(ws.gW[i], g), "dL/dW[\(i)]: analytic \(ws.gW[i]), numeric \(g)")
            if abs(g) > 1e-3 { nonZeroConv += 1 }
        }
        for j in 0..<cout {
            let g = numeric { $0.b[j] += $1 }
            #expect(close(ws.gB[j], g), "dL/db[\(j)]: analytic \(ws.gB[j]), numeric \(g)")
        }
        for i in 0..<(k * cout) {
            let g = numeric { $0.hw[i] += $1 }
            #expect(close(ws.gHW[i], g), "dL/dWh[\(i)]: analytic \(ws.gHW[i]), numeric \(g)")
        }
        for c in 0..<k {
            let g = numeric { $0.hb[c] += $1 }
            #expect(close(ws.gHB[c], g), "dL/dbh[\(c)]: analytic \(ws.gHB[c]), numeric \(g)")
        }
        // The clipped half of the channels has no gradient, the other half does.
        #expect(nonZeroConv >= cout * cin / 2 - 2)
        for j in stride(from: 1, to: cout, by: 2) { #expect(ws.gB[j] == 0) }
    }

    @Test func blockGradientsMatchFiniteDifferences() throws {
        let cout = 6, k = 3, n = 2, grid = 3, cells = grid * grid
        let blocks = tinyBlocks(seed: 21)
        let shapes = blocks.map(\.shape)
        let cin = shapes.last!.outChannels
        let (top, head) = tinyModel(cin: cin, cout: cout, k: k, seed: 8)
        var r = TestRandom(seed: 12)
        let x = r.floats(n * cells * shapes[0].inChannels)
        let labels = [2, 0]
        let p = TopFineTuner.Parameters(w: top.weights, b: top.bias, hw: head.weights, hb: head.bias, blocks: blocks.flatMap(\.arrays))
        func lossAndGrads(_ p: TopFineTuner.Parameters) -> (Float, TopFineTuner.Workspace) {
            let ws = TopFineTuner.Workspace(views: n, cells: cells, cin: cin, cout: cout, classes: k, shapes: shapes)
            for i in x.indices { ws.x[i] = x[i] }
            let sw = TopFineTuner.StepWeights(p, shapes: shapes, cin: cin, cout: cout, kernel: .fastest, backward: true)
            TopFineTuner.run(ws: ws, n: n, labels: ArraySlice(labels), cells: cells, cin: cin, cout: cout, classes: k, weights: sw,
                             p: p, shapes: shapes, mean: head.featureMean, scale: head.featureScale, smoothing: 0,
                             gradScale: 1 / Float(n), gridWidth: grid)
            return (Float(ws.loss) / Float(n), ws)
        }
        let (_, ws) = lossAndGrads(p)
        let eps: Float = 1e-2
        func close(_ a: Float, _ b: Float) -> Bool { abs(a - b) <= 2e-3 + 0.03 * max(abs(a), abs(b)) }
        var checked = 0, nonZero = 0
        for a in p.blocks.indices {
            let g = ws.blocks[a / 6].grads[a % 6]
            // Every parameter of the small arrays, a stride through the bigger ones.
            for i in stride(from: 0, to: p.blocks[a].count, by: p.blocks[a].count > 40 ? 3 : 1) {
                var plus = p, minus = p
                plus.blocks[a][i] += eps; minus.blocks[a][i] -= eps
                let numeric = (lossAndGrads(plus).0 - lossAndGrads(minus).0) / (2 * eps)
                #expect(close(g[i], numeric), "block \(a / 6) array \(a % 6) [\(i)]: analytic \(g[i]), numeric \(numeric)")
                checked += 1
                if abs(numeric) > 1e-4 { nonZero += 1 }
            }
        }
        #expect(checked > 100 && nonZero > checked / 4, "\(nonZero) of \(checked) block gradients are non-zero")
        // The public path (runtime layers) gives the same embedding as the training forward pass (FP32, as training is).
        let trained = try FoodTop(weights: top.weights, bias: top.bias, inChannels: cin, outChannels: cout, blocks: blocks,
                                  precision: .fp32)
        let map = FloatImage(width: grid, height: grid, channels: shapes[0].inChannels, values: Array(x[0..<(cells * shapes[0].inChannels)]))
        let e = try trained.embedding(blockOutput: map)
        var manual = [Float](repeating: 0, count: cout)
        for c in 0..<cells { for j in 0..<cout { manual[j] += ws.a[c * cout + j] / Float(cells) } }
        #expect(maxAbsDiff(e, manual) < 1e-4)
    }

    @Test func fineTuningSeparatesATinyGeneratedDataset() throws {
        // Three classes; a class shows as a pattern in one of four cells (which one varies), plus noise. The
        // starting top is random and the head knows nothing.
        let cin = 8, cout = 16, cells = 4, k = 3, perClass = 60
        var r = TestRandom(seed: 3)
        let patterns = (0..<k).map { _ in r.floats(cin) }
        let set = BlockOutputSet(count: k * perClass, cells: cells, channels: cin)
        for i in 0..<set.count {
            let label = i % k
            var v = r.floats(cells * cin).map { $0 * 0.5 }
            let cell = Int(r.next() % UInt64(cells))
            for j in 0..<cin { v[cell * cin + j] += 2 * patterns[label][j] }
            set.set(i, v, label: label)
        }
        let top = try FoodTop(weights: r.floats(cout * cin).map { $0 * 0.3 }, bias: [Float](repeating: 0.5, count: cout),
                              inChannels: cin, outChannels: cout)
        let head = SoftmaxHead(classes: ["a", "b", "c"], dimension: cout, weights: [Float](repeating: 0, count: k * cout),
                               bias: [0, 0, 0], featureMean: [Float](repeating: 0, count: cout),
                               featureScale: [Float](repeating: 1, count: cout), report: nil)
        var options = TopFineTuneOptions()
        options.maxEpochs = 40
        options.batchSize = 16
        options.learningRate = 3e-3
        options.headLearningRate = 1e-2
        options.weightDecay = 0
        options.headL2 = 0
        options.labelSmoothing = 0
        options.patience = 40
        options.mirrorCells = false
        let train = Array(0..<(set.count * 3 / 4)), hold = Array((set.count * 3 / 4)..<set.count)
        let (tuned, tunedHead, report) = try TopFineTuner.train(set: set, gridWidth: 2, train: train, holdOut: hold, top: top,
                                                                head: head, options: options)
        #expect(report.trainLoss.last! < report.trainLoss.first! * 0.5, "train loss \(report.trainLoss)")
        #expect(report.holdOutLoss < report.initialHoldOutLoss)
        #expect(report.holdOutAccuracy >= 0.9, "held-out accuracy \(report.holdOutAccuracy)")
        #expect(tuned.weights != top.weights)
        // The returned top and head classify the held-out views on their own (through the public path).
        var right = 0
        for i in hold {
            let view = Array(set.values[(i * set.viewSize)..<((i + 1) * set.viewSize)])
            let e = try tuned.embedding(blockOutput: FloatImage(width: 2, height: 2, channels: cin, values: view))
            if try tunedHead.predict(e).first?.label == tunedHead.classes[set.labels[i]] { right += 1 }
        }
        #expect(Float(right) / Float(hold.count) >= 0.9)
    }

    @Test func blockCacheRoundTrips() throws {
        let set = BlockOutputSet(count: 3, cells: 4, channels: 2)
        var r = TestRandom(seed: 5)
        for i in 0..<3 { set.set(i, r.floats(8), label: i == 1 ? -1 : i) }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("blocks-\(UUID().uuidString).bin").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try set.write(to: path)
        let back = try #require(BlockOutputSet.read(from: path))
        #expect(back.labels == set.labels)
        #expect(Array(back.values) == Array(set.values))
        let h = try #require(FileHandle(forWritingAtPath: path))
        try h.truncate(atOffset: 40)
        try h.close()
        #expect(BlockOutputSet.read(from: path) == nil)
    }

    @Test func imageNetTopReproducesTheBackboneEmbedding() throws {
        let net = try EfficientNetLite0(modelDirectory: TestPaths.model.path)
        let top = try FoodTop.imageNet(modelDirectory: TestPaths.model.path)
        var r = TestRandom(seed: 9)
        let image = FloatImage(width: 224, height: 224, channels: 3, values: r.floats(224 * 224 * 3))
        let out = try net.forward([image], includeFeatureMap: true, includeBlockOutput: true)[0]
        let block = try #require(out.blockOutput)
        #expect(block.width == 7 && block.height == 7 && block.channels == 320)
        #expect(maxAbsDiff(try top.embedding(blockOutput: block), out.embedding) < 1e-4)
        #expect(maxAbsDiff(try top.featureMap(blockOutput: block).values, try #require(out.featureMap).values) < 1e-4)
        // With the last four blocks in the top, it reads block 11's output and still reproduces the network.
        let deep = try FoodTop.imageNet(modelDirectory: TestPaths.model.path, blocks: 4)
        #expect(deep.tapBlock == 11 && deep.inputChannels == 192)
        let tapped = try net.forward([image], includeBlockOutput: true, blockOutputIndex: deep.tapBlock)[0]
        let tap = try #require(tapped.blockOutput)
        #expect(tap.width == 7 && tap.channels == 192)
        #expect(maxAbsDiff(try deep.embedding(blockOutput: tap), out.embedding) < 1e-3)
        // A pass that stops at the tap gives the same block output and nothing after it.
        let stopped = try net.forward([image], includeBlockOutput: true, blockOutputIndex: deep.tapBlock, stopAtBlockOutput: true)[0]
        #expect(stopped.blockOutput?.values == tap.values)
        #expect(stopped.embedding.isEmpty && stopped.logits.isEmpty && stopped.featureMap == nil)
        // The classifier on the embedding is the network's own last layer.
        #expect(maxAbsDiff(try net.imageNetLogits(embedding: out.embedding), out.logits) < 1e-4)
    }
}

@Suite struct FoodTopLoaderTests {
    private func savedTop() throws -> (String, FoodTop) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("food-top-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var r = TestRandom(seed: 1)
        let top = try FoodTop(weights: r.floats(6 * 4), bias: r.floats(6), inChannels: 4, outChannels: 6)
        try top.save(directory: dir, note: "test")
        return (dir, top)
    }

    private func load(_ dir: String) -> Result<FoodTop, FoodVisionError> {
        do throws(FoodVisionError) { return .success(try FoodTop.load(directory: dir)) } catch { return .failure(error) }
    }

    @Test func roundTrips() throws {
        let (dir, top) = try savedTop()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let back = try FoodTop.load(directory: dir)
        #expect(back.weights == top.weights && back.bias == top.bias)
        #expect(FoodTop.exists(in: dir))
    }

    @Test func changedByteIsAChecksumMismatch() throws {
        let (dir, _) = try savedTop()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let bin = dir + "/" + FoodTop.weightsFileName
        var data = try Data(contentsOf: URL(fileURLWithPath: bin))
        data[5] ^= 0x40
        try data.write(to: URL(fileURLWithPath: bin))
        guard case .failure(.checksumMismatch(let path, _, _)) = load(dir) else { Issue.record("expected a checksum mismatch"); return }
        #expect(path == bin)
    }

    @Test func wrongManifestShaIsAChecksumMismatch() throws {
        let (dir, _) = try savedTop()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let json = dir + "/" + FoodTop.manifestFileName
        var manifest = try JSONDecoder().decode(FoodTop.Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
        manifest.sha256 = String(repeating: "0", count: 64)
        try JSONEncoder().encode(manifest).write(to: URL(fileURLWithPath: json))
        guard case .failure(let e) = load(dir), case .checksumMismatch = e else { Issue.record("expected a checksum mismatch"); return }
        #expect(e.description.contains("corrupt"))
    }

    @Test func truncatedFileIsReported() throws {
        let (dir, _) = try savedTop()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let bin = dir + "/" + FoodTop.weightsFileName
        let data = try Data(contentsOf: URL(fileURLWithPath: bin))
        try data.prefix(data.count - 8).write(to: URL(fileURLWithPath: bin))
        guard case .failure(.truncatedWeights(_, let expected, let actual)) = load(dir) else { Issue.record("expected truncation"); return }
        #expect(expected == 120 && actual == 112)
    }

    @Test func weightsFileOutsideTheFolderIsRefused() throws {
        let (dir, _) = try savedTop()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let json = dir + "/" + FoodTop.manifestFileName
        var manifest = try JSONDecoder().decode(FoodTop.Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
        manifest.weightsFile = "../" + FoodTop.weightsFileName
        try JSONEncoder().encode(manifest).write(to: URL(fileURLWithPath: json))
        guard case .failure(.manifestMismatch) = load(dir) else { Issue.record("expected a manifest mismatch"); return }
    }

    @Test func shapeThatDoesNotFitTheBytesIsAManifestMismatch() throws {
        let (dir, _) = try savedTop()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let json = dir + "/" + FoodTop.manifestFileName
        var manifest = try JSONDecoder().decode(FoodTop.Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
        manifest.inChannels = 5
        try JSONEncoder().encode(manifest).write(to: URL(fileURLWithPath: json))
        guard case .failure(.manifestMismatch) = load(dir) else { Issue.record("expected a manifest mismatch"); return }
    }

    @Test func topWithBlocksRoundTripsAndRejectsForeignBlockShapes() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("food-top-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let top = try FoodTop.imageNet(modelDirectory: TestPaths.model.path, blocks: 2)
        try top.save(directory: dir, note: "test")
        let back = try FoodTop.load(directory: dir)
        #expect(back.blocks == top.blocks && back.weights == top.weights && back.tapBlock == 13)
        let json = dir + "/" + FoodTop.manifestFileName
        var manifest = try JSONDecoder().decode(FoodTop.Manifest.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
        #expect(manifest.format == FoodTop.formatNameWithBlocks && manifest.tapBlock == 13)
        // Blocks that are not the backbone's last ones (here: swapped kernels) are refused before any weight is read.
        manifest.blocks = manifest.blocks!.map { var b = $0; b.kernel = b.kernel == 3 ? 5 : 3; return b }
        try JSONEncoder().encode(manifest).write(to: URL(fileURLWithPath: json))
        guard case .failure(.manifestMismatch) = load(dir) else { Issue.record("expected a manifest mismatch"); return }
    }
}
