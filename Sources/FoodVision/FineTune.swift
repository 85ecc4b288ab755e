import FoodCore
import Foundation

/// Options of `TopFineTuner.train`.
public struct TopFineTuneOptions: Sendable, Codable, Equatable {
    public var maxEpochs = 12
    /// Views per Adam step (split between the threads).
    public var batchSize = 64
    /// Adam step size of the head conv (320 → 1280).
    public var learningRate: Float = 3e-5
    /// Adam step size of the softmax head.
    public var headLearningRate: Float = 1e-4
    /// L2 pull of the head conv toward its initial (ImageNet) weights: `weightDecay * (W - W0)` in the gradient.
    public var weightDecay: Float = 1e-3
    /// L2 on the softmax head's weights (toward zero, as `SoftmaxHead.train`).
    public var headL2: Float = 0.01
    /// Cross-entropy against `(1 - s) * one-hot + s / classes`.
    public var labelSmoothing: Float = 0.1
    /// Stop after this many epochs without a better held-out loss (the best epoch's weights are kept).
    public var patience = 3
    /// Mirror a view's cells left-right at random each time it is used (cheap extra augmentation).
    public var mirrorCells = true
    /// When below the grid's side, each view is pooled over a random square-ish window of at least this many
    /// cells per side (7 = the whole 7 × 7 grid, no cropping): a crop augmentation at the cell level.
    public var minWindowCells = 7
    public var threads = 2
    public var seed: UInt64 = 1

    public init() {}
}

/// What fine-tuning did, epoch by epoch.
public struct TopFineTuneReport: Sendable, Codable, Equatable {
    public var trainViews: Int
    public var holdOutViews: Int
    /// Held-out accuracy / loss of the starting point (ImageNet conv + the linear head).
    public var initialHoldOutAccuracy: Float
    public var initialHoldOutLoss: Float
    public var epochs: Int
    public var bestEpoch: Int
    public var holdOutAccuracy: Float
    public var holdOutLoss: Float
    public var trainLoss: [Float]
    public var trainAccuracy: [Float]
    public var holdOutAccuracyByEpoch: [Float]
    public var holdOutLossByEpoch: [Float]
    public var secondsPerEpoch: [Double]
    public var options: TopFineTuneOptions
}

/// Block outputs of many views, contiguous: `count` views × `cells` × `channels` floats, with a label per view.
/// Owns its memory (1.5 GB for 23.5k views at 7 × 7 × 320).
public final class BlockOutputSet: @unchecked Sendable {
    public let count: Int
    public let cells: Int
    public let channels: Int
    public let values: UnsafeMutableBufferPointer<Float>
    public var labels: [Int]

    public init(count: Int, cells: Int, channels: Int) {
        self.count = count; self.cells = cells; self.channels = channels
        values = .allocate(capacity: max(1, count * cells * channels))
        values.initialize(repeating: 0)
        labels = [Int](repeating: -1, count: count)
    }

    deinit { values.deallocate() }

    public var viewSize: Int { cells * channels }

    /// Stores view `i` (its `cells * channels` values).
    public func set(_ i: Int, _ view: [Float], label: Int) {
        precondition(view.count == viewSize, "BlockOutputSet: view has \(view.count) values, expected \(viewSize)")
        view.withUnsafeBufferPointer { src in
            (values.baseAddress! + i * viewSize).update(from: src.baseAddress!, count: viewSize)
        }
        labels[i] = label
    }

    /// Writes `[u32 count][u32 cells][u32 channels][labels as i32][values f32]` (little-endian hosts only).
    public func write(to path: String) throws(FoodVisionError) {
        guard let fh = FileHandle(forWritingAtPath: path) ?? {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            return FileHandle(forWritingAtPath: path)
        }() else { throw .io(path: path, reason: "cannot open for writing") }
        defer { try? fh.close() }
        do {
            try fh.truncate(atOffset: 0)
            var header = [UInt32(count), UInt32(cells), UInt32(channels)]
            try fh.write(contentsOf: Data(bytes: &header, count: 12))
            var l = labels.map { Int32($0) }
            try fh.write(contentsOf: Data(bytes: &l, count: l.count * 4))
            let chunk = 1 << 24
            var offset = 0
            let total = count * viewSize
            while offset < total {
                let n = min(chunk, total - offset)
                try fh.write(contentsOf: Data(bytesNoCopy: values.baseAddress! + offset, count: n * 4, deallocator: .none))
                offset += n
            }
        } catch {
            throw .io(path: path, reason: "cannot write the block cache (\(error.localizedDescription))")
        }
    }

    /// Reads a file written by `write`; nil when it is missing or does not have the size its header says.
    public static func read(from path: String) -> BlockOutputSet? {
        guard let fh = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? fh.close() }
        guard let head = try? fh.read(upToCount: 12), head.count == 12 else { return nil }
        let h = head.withUnsafeBytes { raw in (0..<3).map { Int(raw.load(fromByteOffset: $0 * 4, as: UInt32.self)) } }
        let set = BlockOutputSet(count: h[0], cells: h[1], channels: h[2])
        guard let l = try? fh.read(upToCount: h[0] * 4), l.count == h[0] * 4 else { return nil }
        set.labels = l.withUnsafeBytes { raw in (0..<h[0]).map { Int(raw.load(fromByteOffset: $0 * 4, as: Int32.self)) } }
        let total = h[0] * h[1] * h[2]
        var offset = 0
        while offset < total {
            let n = min(1 << 24, total - offset)
            guard let d = try? fh.read(upToCount: n * 4), d.count == n * 4 else { return nil }
            d.withUnsafeBytes { raw in
                (set.values.baseAddress! + offset).update(from: raw.bindMemory(to: Float.self).baseAddress!, count: n)
            }
            offset += n
        }
        return set
    }
}

/// Fine-tunes the food top (head conv + ReLU6 + global average pool) jointly with the softmax head on cached
/// block outputs: mini-batch Adam, backprop written out (two GEMMs per step on the runtime's packed kernel),
/// the batch split over threads, early stopping on held-out views.
///
/// The softmax head keeps its feature standardisation (mean and scale) fixed; its weights and bias are trained.
public enum TopFineTuner {
    /// Parameters being trained.
    struct Parameters {
        var w: [Float], b: [Float], hw: [Float], hb: [Float]
    }

    /// Per-thread buffers for one part of a batch.
    final class Workspace: @unchecked Sendable {
        let x: UnsafeMutablePointer<Float>, a: UnsafeMutablePointer<Float>, dzT: UnsafeMutablePointer<Float>
        var xT: [Float]
        var gW: [Float], gB: [Float], gHW: [Float], gHB: [Float]
        var loss: Double = 0, correct = 0
        let capacity: Int

        init(views: Int, cells: Int, cin: Int, cout: Int, classes: Int) {
            capacity = views
            let p = views * cells
            x = .allocate(capacity: p * cin); a = .allocate(capacity: p * cout); dzT = .allocate(capacity: p * cout)
            xT = [Float](repeating: 0, count: p * cin)
            gW = [Float](repeating: 0, count: cout * cin); gB = [Float](repeating: 0, count: cout)
            gHW = [Float](repeating: 0, count: classes * cout); gHB = [Float](repeating: 0, count: classes)
        }

        deinit { x.deallocate(); a.deallocate(); dzT.deallocate() }
    }

    /// The cells of a view that are pooled (a window of the grid); nil = all.
    struct CellWindow: Sendable {
        var y0: Int, x0: Int, h: Int, w: Int
        func contains(_ cell: Int, gridWidth: Int) -> Bool {
            let y = cell / gridWidth, x = cell % gridWidth
            return y >= y0 && y < y0 + h && x >= x0 && x < x0 + w
        }
    }

    /// Loss (cross-entropy with `smoothing`) and, when `gradScale` is non-nil, the gradients (times `gradScale`)
    /// of `n` views already gathered into `ws.x` (`n * cells * cin`). Writes `ws.loss` (sum), `ws.correct` and,
    /// when asked, `ws.gW`, `gB`, `gHW`, `gHB` (overwritten, not accumulated).
    static func run(ws: Workspace, n: Int, labels: ArraySlice<Int>, cells: Int, cin: Int, cout: Int, classes k: Int,
                    packed: PackedGemmWeights, p: Parameters, mean: [Float], scale: [Float], smoothing: Float,
                    gradScale: Float?, windows: ArraySlice<CellWindow>? = nil, gridWidth: Int = 1) {
        let rows = n * cells
        gemm(m: rows, a: ws.x, lda: cin, weights: packed, c: ws.a, ldc: cout, relu6: true, residual: nil, ldr: cout)
        var loss = 0.0, correct = 0
        var e = [Float](repeating: 0, count: cout), xs = e, de = e
        var logits = [Float](repeating: 0, count: k)
        let grads = gradScale != nil
        if grads {
            for i in ws.gHW.indices { ws.gHW[i] = 0 }
            for i in ws.gHB.indices { ws.gHB[i] = 0 }
            for i in ws.gB.indices { ws.gB[i] = 0 }
        }
        for v in 0..<n {
            let av = ws.a + v * cells * cout
            let window = windows.map { $0[$0.startIndex + v] }
            let pooled = window.map { $0.h * $0.w } ?? cells
            let inv = 1 / Float(pooled)
            for j in 0..<cout { e[j] = 0 }
            for c in 0..<cells where window?.contains(c, gridWidth: gridWidth) ?? true {
                for j in 0..<cout { e[j] += av[c * cout + j] }
            }
            for j in 0..<cout { xs[j] = (e[j] * inv - mean[j]) * scale[j] }
            var best = 0
            p.hw.withUnsafeBufferPointer { hw in
                for c in 0..<k {
                    var acc = p.hb[c]
                    for j in 0..<cout { acc += hw[c * cout + j] * xs[j] }
                    logits[c] = acc
                    if acc > logits[best] { best = c }
                }
            }
            let label = labels[labels.startIndex + v]
            if best == label { correct += 1 }
            let m = logits[best]
            var s: Float = 0
            for c in 0..<k { logits[c] = expf(logits[c] - m); s += logits[c] }
            var l: Float = 0
            for c in 0..<k {
                logits[c] /= s
                let target = (c == label ? 1 - smoothing : 0) + smoothing / Float(k)
                if target > 0 { l -= target * logf(max(logits[c], 1e-12)) }
            }
            loss += Double(l)
            guard let gs = gradScale else { continue }
            // dL/dlogit = p - target; head gradients; dL/dxs = Wh^T g.
            for j in 0..<cout { de[j] = 0 }
            p.hw.withUnsafeBufferPointer { hw in
                for c in 0..<k {
                    let g = (logits[c] - ((c == label ? 1 - smoothing : 0) + smoothing / Float(k))) * gs
                    ws.gHB[c] += g
                    for j in 0..<cout {
                        ws.gHW[c * cout + j] += g * xs[j]
                        de[j] += g * hw[c * cout + j]
                    }
                }
            }
            // Through the standardisation and the mean over cells, then ReLU6's mask: dZ (transposed, [cout][rows]).
            for j in 0..<cout { de[j] *= scale[j] * inv }
            for c in 0..<cells {
                let r = v * cells + c
                let inside = window?.contains(c, gridWidth: gridWidth) ?? true
                for j in 0..<cout {
                    let a = av[c * cout + j]
                    let g = inside && a > 0 && a < 6 ? de[j] : 0
                    ws.dzT[j * rows + r] = g
                    ws.gB[j] += g
                }
            }
        }
        ws.loss = loss
        ws.correct = correct
        guard grads else { return }
        // dW[o][i] = sum_r dZ[r][o] X[r][i]: A = dZ^T (cout x rows), "weights" [cin][rows] = X^T.
        if ws.xT.count != rows * cin { ws.xT = [Float](repeating: 0, count: rows * cin) }
        ws.xT.withUnsafeMutableBufferPointer { t in
            for r in 0..<rows { for i in 0..<cin { t[i * rows + r] = ws.x[r * cin + i] } }
        }
        let packedX = PackedGemmWeights(weightsOI: ws.xT, bias: nil, inChannels: rows, outChannels: cin, kernel: packed.kernel)
        ws.gW.withUnsafeMutableBufferPointer { g in
            gemm(m: cout, a: ws.dzT, lda: rows, weights: packedX, c: g.baseAddress!, ldc: cin, relu6: false, residual: nil, ldr: cin)
        }
    }

    /// Copies views `indices` into `ws.x`, mirroring each one's cells left-right when `mirror[i]`.
    static func gather(_ set: BlockOutputSet, indices: ArraySlice<Int>, mirror: ArraySlice<Bool>?, width: Int, into ws: Workspace) {
        let size = set.viewSize, ch = set.channels
        for (k, v) in indices.enumerated() {
            let src = set.values.baseAddress! + v * size, dst = ws.x + k * size
            if let mirror, mirror[mirror.startIndex + k], width > 1 {
                let height = set.cells / width
                for y in 0..<height {
                    for x in 0..<width {
                        (dst + (y * width + x) * ch).update(from: src + (y * width + (width - 1 - x)) * ch, count: ch)
                    }
                }
            } else {
                dst.update(from: src, count: size)
            }
        }
    }

    struct Adam {
        var m: [Float], v: [Float]
        init(_ n: Int) { m = [Float](repeating: 0, count: n); v = m }
        mutating func step(_ x: inout [Float], grad: [Float], lr: Float, l2: Float, anchor: [Float]?, t: Int) {
            let b1: Float = 0.9, b2: Float = 0.999
            let c1 = 1 - powf(b1, Float(t)), c2 = 1 - powf(b2, Float(t))
            for i in x.indices {
                let g = grad[i] + l2 * (x[i] - (anchor?[i] ?? 0))
                m[i] = b1 * m[i] + (1 - b1) * g
                v[i] = b2 * v[i] + (1 - b2) * g * g
                x[i] -= lr * (m[i] / c1) / ((v[i] / c2).squareRoot() + 1e-8)
            }
        }
    }

    /// Mean loss (plain cross-entropy) and accuracy of views `indices` under `p`, on `threads` threads.
    static func evaluate(_ set: BlockOutputSet, indices: [Int], p: Parameters, top: FoodTop, head: SoftmaxHead,
                         workspaces: [Workspace]) -> (loss: Float, accuracy: Float) {
        guard !indices.isEmpty else { return (0, 0) }
        let packed = PackedGemmWeights(weightsOI: p.w, bias: p.b, inChannels: top.inChannels, outChannels: top.outChannels,
                                       kernel: top.conv.gemmKernel)
        let chunk = workspaces[0].capacity
        let lock = NSLock()
        nonisolated(unsafe) var loss = 0.0, correct = 0
        DispatchQueue.concurrentPerform(iterations: workspaces.count) { t in
            let ws = workspaces[t]
            var start = t * chunk
            while start < indices.count {
                let part = indices[start..<min(start + chunk, indices.count)]
                gather(set, indices: part, mirror: nil, width: 1, into: ws)
                run(ws: ws, n: part.count, labels: ArraySlice(part.map { set.labels[$0] }), cells: set.cells, cin: top.inChannels,
                    cout: top.outChannels, classes: head.classes.count, packed: packed, p: p, mean: head.featureMean,
                    scale: head.featureScale, smoothing: 0, gradScale: nil)
                lock.lock(); loss += ws.loss; correct += ws.correct; lock.unlock()
                start += chunk * workspaces.count
            }
        }
        return (Float(loss / Double(indices.count)), Float(correct) / Float(indices.count))
    }

    /// Trains from `top` and `head` on views `train` of `set`, choosing the epoch by the loss on views `holdOut`.
    /// `gridWidth` is the block map's width (7 at 224 input), used to mirror cells.
    /// `anchor` is what weight decay pulls the head conv toward (default: `top`, the starting point).
    public static func train(set: BlockOutputSet, gridWidth: Int, train trainIndices: [Int], holdOut: [Int], top: FoodTop,
                             head: SoftmaxHead, anchor: FoodTop? = nil, options o: TopFineTuneOptions = .init(),
                             progress: (@Sendable (String) -> Void)? = nil) throws(FoodVisionError) -> (FoodTop, SoftmaxHead, TopFineTuneReport) {
        guard set.channels == top.inChannels, head.dimension == top.outChannels else {
            throw .invalidTrainingData(reason: "block outputs have \(set.channels) channels, food top \(top.inChannels)→\(top.outChannels), head \(head.dimension)")
        }
        guard gridWidth >= 1, set.cells % gridWidth == 0 else {
            throw .invalidTrainingData(reason: "grid width \(gridWidth) does not divide \(set.cells) cells")
        }
        guard !trainIndices.isEmpty, o.batchSize >= 1, o.threads >= 1, o.maxEpochs >= 1 else {
            throw .invalidTrainingData(reason: "no training views, or batch size / threads / epochs below 1")
        }
        for i in trainIndices + holdOut where !(0..<set.count).contains(i) || !head.classes.indices.contains(set.labels[i]) {
            throw .invalidTrainingData(reason: "view \(i) is outside the set or has no label of the head")
        }
        let cin = top.inChannels, cout = top.outChannels, k = head.classes.count
        let threads = min(o.threads, o.batchSize)
        let partSize = (o.batchSize + threads - 1) / threads
        let workspaces = (0..<threads).map { _ in Workspace(views: partSize, cells: set.cells, cin: cin, cout: cout, classes: k) }
        var p = Parameters(w: top.weights, b: top.bias, hw: head.weights, hb: head.bias)
        let w0 = anchor?.weights ?? top.weights, b0 = anchor?.bias ?? top.bias
        guard w0.count == top.weights.count, b0.count == top.bias.count else {
            throw .invalidTrainingData(reason: "the weight-decay anchor's shape differs from the food top's")
        }
        var adamW = Adam(p.w.count), adamB = Adam(p.b.count), adamHW = Adam(p.hw.count), adamHB = Adam(p.hb.count)
        var rng = SplitMix64(seed: o.seed)
        let initial = evaluate(set, indices: holdOut, p: p, top: top, head: head, workspaces: workspaces)
        progress?(String(format: "fine-tune: start: held-out loss %.4f, accuracy %.4f (%d views)", initial.loss, initial.accuracy, holdOut.count))
        var best = p, bestLoss = holdOut.isEmpty ? Float.infinity : initial.loss, bestEpoch = 0, bestAccuracy = initial.accuracy
        var report = TopFineTuneReport(trainViews: trainIndices.count, holdOutViews: holdOut.count,
                                       initialHoldOutAccuracy: initial.accuracy, initialHoldOutLoss: initial.loss, epochs: 0,
                                       bestEpoch: 0, holdOutAccuracy: initial.accuracy, holdOutLoss: initial.loss, trainLoss: [],
                                       trainAccuracy: [], holdOutAccuracyByEpoch: [], holdOutLossByEpoch: [], secondsPerEpoch: [],
                                       options: o)
        var order = trainIndices
        var t = 0, sinceBest = 0
        for epoch in 1...o.maxEpochs {
            let started = ContinuousClock.now
            rng.shuffle(&order)
            let epochOrder = order
            let mirror = order.map { _ in o.mirrorCells && Bool.random(using: &rng) }
            let gridHeight = set.cells / gridWidth
            let windows: [CellWindow]? = o.minWindowCells >= min(gridWidth, gridHeight) ? nil : order.map { _ in
                let h = Int.random(in: max(1, o.minWindowCells)...gridHeight, using: &rng)
                let w = Int.random(in: max(1, o.minWindowCells)...gridWidth, using: &rng)
                return CellWindow(y0: Int.random(in: 0...(gridHeight - h), using: &rng), x0: Int.random(in: 0...(gridWidth - w), using: &rng),
                                  h: h, w: w)
            }
            var epochLoss = 0.0, epochCorrect = 0
            var start = 0
            while start < order.count {
                let end = min(start + o.batchSize, order.count)
                let n = end - start
                let packed = PackedGemmWeights(weightsOI: p.w, bias: p.b, inChannels: cin, outChannels: cout, kernel: top.conv.gemmKernel)
                let params = p
                let parts = (n + partSize - 1) / partSize
                let scale = 1 / Float(n)
                let first = start, last = end
                DispatchQueue.concurrentPerform(iterations: parts) { w in
                    let ws = workspaces[w]
                    let lo = first + w * partSize, hi = min(lo + partSize, last)
                    gather(set, indices: epochOrder[lo..<hi], mirror: mirror[lo..<hi], width: gridWidth, into: ws)
                    run(ws: ws, n: hi - lo, labels: ArraySlice(epochOrder[lo..<hi].map { set.labels[$0] }), cells: set.cells, cin: cin,
                        cout: cout, classes: k, packed: packed, p: params, mean: head.featureMean, scale: head.featureScale,
                        smoothing: o.labelSmoothing, gradScale: scale, windows: windows?[lo..<hi], gridWidth: gridWidth)
                }
                var gW = workspaces[0].gW, gB = workspaces[0].gB, gHW = workspaces[0].gHW, gHB = workspaces[0].gHB
                epochLoss += workspaces[0].loss; epochCorrect += workspaces[0].correct
                for w in 1..<max(1, parts) {
                    let ws = workspaces[w]
                    for i in gW.indices { gW[i] += ws.gW[i] }
                    for i in gB.indices { gB[i] += ws.gB[i] }
                    for i in gHW.indices { gHW[i] += ws.gHW[i] }
                    for i in gHB.indices { gHB[i] += ws.gHB[i] }
                    epochLoss += ws.loss; epochCorrect += ws.correct
                }
                t += 1
                adamW.step(&p.w, grad: gW, lr: o.learningRate, l2: o.weightDecay, anchor: w0, t: t)
                adamB.step(&p.b, grad: gB, lr: o.learningRate, l2: o.weightDecay, anchor: b0, t: t)
                adamHW.step(&p.hw, grad: gHW, lr: o.headLearningRate, l2: o.headL2, anchor: nil, t: t)
                adamHB.step(&p.hb, grad: gHB, lr: o.headLearningRate, l2: 0, anchor: nil, t: t)
                start = end
            }
            let held = evaluate(set, indices: holdOut, p: p, top: top, head: head, workspaces: workspaces)
            let elapsed = (ContinuousClock.now - started).components
            let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
            report.epochs = epoch
            report.trainLoss.append(Float(epochLoss / Double(order.count)))
            report.trainAccuracy.append(Float(epochCorrect) / Float(order.count))
            report.holdOutLossByEpoch.append(held.loss)
            report.holdOutAccuracyByEpoch.append(held.accuracy)
            report.secondsPerEpoch.append(seconds)
            progress?(String(format: "fine-tune: epoch %d: train loss %.4f acc %.4f, held-out loss %.4f acc %.4f (%.0f s)", epoch,
                             report.trainLoss.last!, report.trainAccuracy.last!, held.loss, held.accuracy, seconds))
            if holdOut.isEmpty || held.loss < bestLoss - 1e-5 {
                best = p; bestLoss = held.loss; bestEpoch = epoch; bestAccuracy = held.accuracy; sinceBest = 0
            } else {
                sinceBest += 1
                if sinceBest >= o.patience { break }
            }
        }
        report.bestEpoch = bestEpoch
        report.holdOutLoss = bestLoss.isFinite ? bestLoss : 0
        report.holdOutAccuracy = bestAccuracy
        var newHead = head
        newHead.weights = best.hw
        newHead.bias = best.hb
        return (try FoodTop(weights: best.w, bias: best.b, inChannels: cin, outChannels: cout), newHead, report)
    }

    /// The photo-level split `SoftmaxHead.train` makes with the same `seed`, `holdOutFraction` and per-photo labels
    /// (views of a photo are consecutive): the held-out photos of the linear head stay held out here.
    public static func holdOutPhotos(photoLabels: [Int], classes: Int, fraction: Double, seed: UInt64) -> Set<Int> {
        var rng = SplitMix64(seed: seed)
        var held = Set<Int>()
        for c in 0..<classes {
            var photos = photoLabels.indices.filter { photoLabels[$0] == c }
            rng.shuffle(&photos)
            var hold = Int((Double(photos.count) * fraction).rounded())
            if fraction > 0 && hold == 0 && photos.count >= 2 { hold = 1 }
            held.formUnion(photos.prefix(hold))
        }
        return held
    }
}
