import FoodRecognition
import FoodMoment
package import FoodVision
import FoodCore
import Foundation

/// Options of `TopFineTuner.train`.
package struct TopFineTuneOptions: Sendable, Codable, Equatable {
    package var maxEpochs = 12
    /// Views per Adam step (split between the threads).
    package var batchSize = 64
    /// Adam step size of the head conv (320 → 1280).
    package var learningRate: Float = 3e-5
    /// Adam step size of the softmax head.
    package var headLearningRate: Float = 1e-4
    /// Adam step size of the food top's MBConv blocks (when it has any).
    package var blockLearningRate: Float = 3e-5
    /// L2 pull of the head conv toward its initial (ImageNet) weights: `weightDecay * (W - W0)` in the gradient.
    package var weightDecay: Float = 1e-3
    /// L2 on the softmax head's weights (toward zero, as `SoftmaxHead.train`).
    package var headL2: Float = 0.01
    /// Cross-entropy against `(1 - s) * one-hot + s / classes`.
    package var labelSmoothing: Float = 0.1
    /// Stop after this many epochs without a better held-out loss (the best epoch's weights are kept).
    package var patience = 3
    /// Mirror a view's cells left-right at random each time it is used (cheap extra augmentation).
    package var mirrorCells = true
    /// When below the grid's side, each view is pooled over a random square-ish window of at least this many
    /// cells per side (7 = the whole 7 × 7 grid, no cropping): a crop augmentation at the cell level.
    package var minWindowCells = 7
    package var threads = 2
    package var seed: UInt64 = 1

    package init() {}
}

/// What fine-tuning did, epoch by epoch.
package struct TopFineTuneReport: Sendable, Codable, Equatable {
    package var trainViews: Int
    package var holdOutViews: Int
    /// Held-out accuracy / loss of the starting point (ImageNet conv + the linear head).
    package var initialHoldOutAccuracy: Float
    package var initialHoldOutLoss: Float
    package var epochs: Int
    package var bestEpoch: Int
    package var holdOutAccuracy: Float
    package var holdOutLoss: Float
    package var trainLoss: [Float]
    package var trainAccuracy: [Float]
    package var holdOutAccuracyByEpoch: [Float]
    package var holdOutLossByEpoch: [Float]
    package var secondsPerEpoch: [Double]
    package var options: TopFineTuneOptions
}

/// Block outputs of many views, contiguous: `count` views × `cells` × `channels` floats, with a label per view.
/// Owns its memory (1.5 GB for 23.5k views at 7 × 7 × 320).
package final class BlockOutputSet: @unchecked Sendable {
    package let count: Int
    package let cells: Int
    package let channels: Int
    package let values: UnsafeMutableBufferPointer<Float>
    package var labels: [Int]
    /// What the views are, for cache checks (`finetune`: the backbone block they were taken from).
    package var tag: UInt32 = 0

    package init(count: Int, cells: Int, channels: Int) {
        self.count = count; self.cells = cells; self.channels = channels
        values = .allocate(capacity: max(1, count * cells * channels))
        values.initialize(repeating: 0)
        labels = [Int](repeating: -1, count: count)
    }

    deinit { values.deallocate() }

    package var viewSize: Int { cells * channels }

    /// Stores view `i` (its `cells * channels` values).
    package func set(_ i: Int, _ view: [Float], label: Int) {
        precondition(view.count == viewSize, "BlockOutputSet: view has \(view.count) values, expected \(viewSize)")
        view.withUnsafeBufferPointer { src in
            (values.baseAddress! + i * viewSize).update(from: src.baseAddress!, count: viewSize)
        }
        labels[i] = label
    }

    /// Writes `[u32 count][u32 cells][u32 channels][u32 tag][labels as i32][values f32]` (little-endian hosts only).
    package func write(to path: String) throws(FoodVisionError) {
        guard let fh = FileHandle(forWritingAtPath: path) ?? {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            return FileHandle(forWritingAtPath: path)
        }() else { throw .io(path: path, reason: "cannot open for writing") }
        defer { try? fh.close() }
        do {
            try fh.truncate(atOffset: 0)
            var header = [UInt32(count), UInt32(cells), UInt32(channels), tag]
            try fh.write(contentsOf: Data(bytes: &header, count: 16))
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
    package static func read(from path: String) -> BlockOutputSet? {
        guard let fh = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? fh.close() }
        guard let head = try? fh.read(upToCount: 16), head.count == 16 else { return nil }
        let h = head.withUnsafeBytes { raw in (0..<4).map { Int(raw.load(fromByteOffset: $0 * 4, as: UInt32.self)) } }
        // A file that is not as long as its header says (an older layout, a cut-off write) is not a cache.
        let expected = 16 + UInt64(h[0]) * 4 + UInt64(h[0]) * UInt64(h[1]) * UInt64(h[2]) * 4
        guard let size = try? fh.seekToEnd(), size == expected, (try? fh.seek(toOffset: 16)) != nil else { return nil }
        let set = BlockOutputSet(count: h[0], cells: h[1], channels: h[2])
        set.tag = UInt32(h[3])
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

/// Fine-tunes the food top — its MBConv blocks (when it has any), the head conv + ReLU6 + global average pool —
/// jointly with the softmax head on cached block outputs: mini-batch Adam, backprop written out (the 1×1
/// convolutions and their weight gradients run on the runtime's packed GEMM, the depthwise layers in plain loops
/// over channel-contiguous rows), the batch split over threads, early stopping on held-out views.
///
/// The softmax head keeps its feature standardisation (mean and scale) fixed; its weights and bias are trained.
package enum TopFineTuner {
    /// Parameters being trained: the head conv (`w`, `b`), the softmax head (`hw`, `hb`) and the six arrays of
    /// each tail block (`TailBlock.arrays`, in order).
    struct Parameters {
        var w: [Float], b: [Float], hw: [Float], hb: [Float]
        var blocks: [[Float]] = []
    }

    /// The packed matrices one step needs (built once per step, read by every thread): the forward 1×1 weights
    /// and, for the backward pass, their transposes.
    struct StepWeights: @unchecked Sendable {
        var head: PackedGemmWeights
        var headT: PackedGemmWeights?
        var expand: [PackedGemmWeights] = [], project: [PackedGemmWeights] = []
        /// `expandT[0]` is nil: the first block's input is the frozen cache, its gradient is not needed.
        var expandT: [PackedGemmWeights?] = [], projectT: [PackedGemmWeights] = []

        init(_ p: Parameters, shapes: [EfficientNetLite0.BlockShape], cin: Int, cout: Int, kernel: GemmKernel, backward: Bool) {
            head = PackedGemmWeights(weightsOI: p.w, bias: p.b, inChannels: cin, outChannels: cout, kernel: kernel)
            let needInputGradient = backward && !shapes.isEmpty
            if needInputGradient {
                headT = PackedGemmWeights(weightsOI: transposed(p.w, rows: cout, cols: cin), bias: nil, inChannels: cout,
                                          outChannels: cin, kernel: kernel)
            }
            for (i, s) in shapes.enumerated() {
                let a = p.blocks[6 * i ..< 6 * i + 6].map { $0 }
                expand.append(PackedGemmWeights(weightsOI: a[0], bias: a[1], inChannels: s.inChannels, outChannels: s.midChannels, kernel: kernel))
                project.append(PackedGemmWeights(weightsOI: a[4], bias: a[5], inChannels: s.midChannels, outChannels: s.outChannels, kernel: kernel))
                if backward {
                    projectT.append(PackedGemmWeights(weightsOI: transposed(a[4], rows: s.outChannels, cols: s.midChannels), bias: nil,
                                                      inChannels: s.outChannels, outChannels: s.midChannels, kernel: kernel))
                    expandT.append(i == 0 ? nil : PackedGemmWeights(weightsOI: transposed(a[0], rows: s.midChannels, cols: s.inChannels),
                                                                    bias: nil, inChannels: s.midChannels, outChannels: s.inChannels,
                                                                    kernel: kernel))
                }
            }
        }
    }

    /// Row-major `rows × cols` → `cols × rows`.
    static func transposed(_ m: [Float], rows: Int, cols: Int) -> [Float] {
        var t = [Float](repeating: 0, count: m.count)
        m.withUnsafeBufferPointer { src in
            t.withUnsafeMutableBufferPointer { dst in transpose(src.baseAddress!, rows: rows, cols: cols, into: dst.baseAddress!) }
        }
        return t
    }

    static func transpose(_ src: UnsafePointer<Float>, rows: Int, cols: Int, into dst: UnsafeMutablePointer<Float>) {
        let tile = 16
        var r0 = 0
        while r0 < rows {
            let r1 = min(rows, r0 + tile)
            var c0 = 0
            while c0 < cols {
                let c1 = min(cols, c0 + tile)
                for r in r0..<r1 { for c in c0..<c1 { dst[c * rows + r] = src[r * cols + c] } }
                c0 = c1
            }
            r0 = r1
        }
    }

    /// `gW[o][i] = Σ_r dZ[r][o] · X[r][i]` (`dZ` rows × outs, `X` rows × ins) on the packed GEMM; also `gB[o] = Σ_r dZ[r][o]`.
    static func weightGradient(dZ: UnsafePointer<Float>, x: UnsafePointer<Float>, rows: Int, outs: Int, ins: Int,
                               kernel: GemmKernel, gW: inout [Float], gB: inout [Float], scratch: inout [Float]) {
        if scratch.count < rows * max(outs, ins) { scratch = [Float](repeating: 0, count: rows * max(outs, ins)) }
        var xT = [Float](repeating: 0, count: rows * ins)
        xT.withUnsafeMutableBufferPointer { transpose(x, rows: rows, cols: ins, into: $0.baseAddress!) }
        let packedX = PackedGemmWeights(weightsOI: xT, bias: nil, inChannels: rows, outChannels: ins, kernel: kernel)
        columnSums(dZ, rows: rows, cols: outs, into: &gB)
        scratch.withUnsafeMutableBufferPointer { dzT in
            transpose(dZ, rows: rows, cols: outs, into: dzT.baseAddress!)
            gW.withUnsafeMutableBufferPointer { g in
                gemm(m: outs, a: dzT.baseAddress!, lda: rows, weights: packedX, c: g.baseAddress!, ldc: ins, relu6: false,
                     residual: nil, ldr: ins)
            }
        }
    }

    /// `sums[c] = Σ_r m[r][c]` of a row-major `rows × cols` matrix (a bias gradient).
    static func columnSums(_ m: UnsafePointer<Float>, rows: Int, cols: Int, into sums: inout [Float]) {
        for c in 0..<cols { sums[c] = 0 }
        for r in 0..<rows { let row = m + r * cols; for c in 0..<cols { sums[c] += row[c] } }
    }

    /// Zeroes the gradient where the ReLU6 output `activation` was clipped (at 0 or 6): its derivative there is 0.
    static func maskClipped(_ gradient: UnsafeMutablePointer<Float>, activation: UnsafePointer<Float>, count: Int) {
        for i in 0..<count where !(activation[i] > 0 && activation[i] < 6) { gradient[i] = 0 }
    }

    /// Calls `body(output pixel, input pixel, tap)` for every tap of a stride-1 SAME k×k window that lands inside
    /// the map, over `n` maps of h × w (pixels numbered across the maps).
    @inline(__always)
    static func forEachTap(n: Int, h: Int, w: Int, k: Int, _ body: (Int, Int, Int) -> Void) {
        let pad = (k - 1) / 2
        for v in 0..<n {
            for y in 0..<h {
                for x in 0..<w {
                    for dy in 0..<k where y + dy - pad >= 0 && y + dy - pad < h {
                        for dx in 0..<k where x + dx - pad >= 0 && x + dx - pad < w {
                            body((v * h + y) * w + x, (v * h + y + dy - pad) * w + x + dx - pad, dy * k + dx)
                        }
                    }
                }
            }
        }
    }

    /// Stride-1 SAME depthwise over `n` maps of `h × w × c`, weights tap-major `[k*k][c]`, then ReLU6.
    static func depthwiseForward(_ x: UnsafePointer<Float>, weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, n: Int,
                                 h: Int, w: Int, c: Int, k: Int, output: UnsafeMutablePointer<Float>) {
        for p in 0..<(n * h * w) { (output + p * c).update(from: bias, count: c) }
        forEachTap(n: n, h: h, w: w, k: k) { op, ip, t in
            let o = output + op * c, src = x + ip * c, wt = weights + t * c
            for ch in 0..<c { o[ch] += wt[ch] * src[ch] }
        }
        for i in 0..<(n * h * w * c) { output[i] = min(max(output[i], 0), 6) }
    }

    /// The depthwise layer's backward pass: `g` is dL/d(pre-activation output); adds dL/dweights to `gW`
    /// (tap-major) and writes dL/dinput to `dx` (overwritten).
    static func depthwiseBackward(_ x: UnsafePointer<Float>, weights: UnsafePointer<Float>, g: UnsafePointer<Float>, n: Int,
                                  h: Int, w: Int, c: Int, k: Int, gW: UnsafeMutablePointer<Float>, dx: UnsafeMutablePointer<Float>) {
        dx.update(repeating: 0, count: n * h * w * c)
        forEachTap(n: n, h: h, w: w, k: k) { op, ip, t in
            let gp = g + op * c, src = x + ip * c, dst = dx + ip * c, wt = weights + t * c, gw = gW + t * c
            for ch in 0..<c {
                gw[ch] += src[ch] * gp[ch]
                dst[ch] += wt[ch] * gp[ch]
            }
        }
    }

    /// Activations and gradients of one tail block for one part of a batch.
    final class BlockBuffers: @unchecked Sendable {
        let e: UnsafeMutablePointer<Float>, d: UnsafeMutablePointer<Float>, y: UnsafeMutablePointer<Float>
        let dMid: UnsafeMutablePointer<Float>, dE: UnsafeMutablePointer<Float>, dIn: UnsafeMutablePointer<Float>
        var grads: [[Float]]

        init(rows: Int, shape s: EfficientNetLite0.BlockShape) {
            e = .allocate(capacity: rows * s.midChannels); d = .allocate(capacity: rows * s.midChannels)
            y = .allocate(capacity: rows * s.outChannels)
            dMid = .allocate(capacity: rows * s.midChannels); dE = .allocate(capacity: rows * s.midChannels)
            dIn = .allocate(capacity: rows * s.inChannels)
            grads = TailBlock.arrayCounts(s).map { [Float](repeating: 0, count: $0) }
        }

        deinit { e.deallocate(); d.deallocate(); y.deallocate(); dMid.deallocate(); dE.deallocate(); dIn.deallocate() }

        /// Gradient arrays `i` and `j` as two exclusive inout values (moved out and back, no copy).
        func withGradients(_ i: Int, _ j: Int, _ body: (inout [Float], inout [Float]) -> Void) {
            var a = [Float](), b = [Float]()
            swap(&a, &grads[i]); swap(&b, &grads[j])
            body(&a, &b)
            swap(&a, &grads[i]); swap(&b, &grads[j])
        }
    }

    /// Per-thread buffers for one part of a batch.
    final class Workspace: @unchecked Sendable {
        let x: UnsafeMutablePointer<Float>, a: UnsafeMutablePointer<Float>, dz: UnsafeMutablePointer<Float>
        /// dL/d(head conv input) when there are blocks (rows × the last block's output channels).
        let dHeadInput: UnsafeMutablePointer<Float>?
        var gW: [Float], gB: [Float], gHW: [Float], gHB: [Float]
        var scratch: [Float] = []
        var blocks: [BlockBuffers]
        var loss: Double = 0, correct = 0
        let capacity: Int

        /// `cin` is the head conv's input (the last block's output); `shapes` the tail blocks, if any.
        init(views: Int, cells: Int, cin: Int, cout: Int, classes: Int, shapes: [EfficientNetLite0.BlockShape] = []) {
            capacity = views
            let p = views * cells
            let inputChannels = shapes.first?.inChannels ?? cin
            x = .allocate(capacity: p * inputChannels); a = .allocate(capacity: p * cout); dz = .allocate(capacity: p * cout)
            gW = [Float](repeating: 0, count: cout * cin); gB = [Float](repeating: 0, count: cout)
            gHW = [Float](repeating: 0, count: classes * cout); gHB = [Float](repeating: 0, count: classes)
            blocks = shapes.map { BlockBuffers(rows: p, shape: $0) }
            dHeadInput = shapes.isEmpty ? nil : .allocate(capacity: p * cin)
        }

        deinit { x.deallocate(); a.deallocate(); dz.deallocate(); dHeadInput?.deallocate() }
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
    /// of `n` views already gathered into `ws.x` (`n * cells * channels of the first layer`). Writes `ws.loss`
    /// (sum), `ws.correct` and, when asked, `ws.gW`, `gB`, `gHW`, `gHB` and each block's `grads` (overwritten).
    static func run(ws: Workspace, n: Int, labels: ArraySlice<Int>, cells: Int, cin: Int, cout: Int, classes k: Int,
                    weights sw: StepWeights, p: Parameters, shapes: [EfficientNetLite0.BlockShape] = [], mean: [Float],
                    scale: [Float], smoothing: Float, gradScale: Float?, windows: ArraySlice<CellWindow>? = nil,
                    gridWidth: Int = 1) {
        let rows = n * cells
        let gridHeight = cells / max(1, gridWidth)
        // Forward through the tail blocks.
        var current = UnsafePointer(ws.x)
        for (i, s) in shapes.enumerated() {
            let bb = ws.blocks[i]
            gemm(m: rows, a: current, lda: s.inChannels, weights: sw.expand[i], c: bb.e, ldc: s.midChannels, relu6: true,
                 residual: nil, ldr: s.midChannels)
            p.blocks[6 * i + 2].withUnsafeBufferPointer { dw in
                p.blocks[6 * i + 3].withUnsafeBufferPointer { db in
                    depthwiseForward(bb.e, weights: dw.baseAddress!, bias: db.baseAddress!, n: n, h: gridHeight, w: gridWidth,
                                     c: s.midChannels, k: s.kernel, output: bb.d)
                }
            }
            gemm(m: rows, a: bb.d, lda: s.midChannels, weights: sw.project[i], c: bb.y, ldc: s.outChannels, relu6: false,
                 residual: s.residual ? current : nil, ldr: s.outChannels)
            current = UnsafePointer(bb.y)
        }
        let headInput = current
        gemm(m: rows, a: headInput, lda: cin, weights: sw.head, c: ws.a, ldc: cout, relu6: true, residual: nil, ldr: cout)
        var loss = 0.0, correct = 0
        var e = [Float](repeating: 0, count: cout), xs = e, de = e
        var logits = [Float](repeating: 0, count: k)
        let grads = gradScale != nil
        if grads {
            for i in ws.gHW.indices { ws.gHW[i] = 0 }
            for i in ws.gHB.indices { ws.gHB[i] = 0 }
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
            // Through the standardisation and the mean over cells, then ReLU6's mask: dZ ([rows][cout]).
            for j in 0..<cout { de[j] *= scale[j] * inv }
            for c in 0..<cells {
                let r = v * cells + c
                let inside = window?.contains(c, gridWidth: gridWidth) ?? true
                let dzr = ws.dz + r * cout
                for j in 0..<cout {
                    let a = av[c * cout + j]
                    dzr[j] = inside && a > 0 && a < 6 ? de[j] : 0
                }
            }
        }
        ws.loss = loss
        ws.correct = correct
        guard grads else { return }
        let kernel = sw.head.kernel
        weightGradient(dZ: ws.dz, x: headInput, rows: rows, outs: cout, ins: cin, kernel: kernel, gW: &ws.gW, gB: &ws.gB,
                       scratch: &ws.scratch)
        guard !shapes.isEmpty, let headT = sw.headT, let dHeadIn = ws.dHeadInput else { return }
        // dL/d(last block output) = dZ · W.
        gemm(m: rows, a: ws.dz, lda: cout, weights: headT, c: dHeadIn, ldc: cin, relu6: false, residual: nil, ldr: cin)
        var gOut = dHeadIn
        for i in stride(from: shapes.count - 1, through: 0, by: -1) {
            let s = shapes[i], bb = ws.blocks[i]
            let input = i == 0 ? UnsafePointer(ws.x) : UnsafePointer(ws.blocks[i - 1].y)
            // Project: weights from dY and D; dD = dY · Wp, through the depthwise ReLU6.
            bb.withGradients(4, 5) { gW, gB in
                weightGradient(dZ: gOut, x: bb.d, rows: rows, outs: s.outChannels, ins: s.midChannels, kernel: kernel,
                               gW: &gW, gB: &gB, scratch: &ws.scratch)
            }
            gemm(m: rows, a: gOut, lda: s.outChannels, weights: sw.projectT[i], c: bb.dMid, ldc: s.midChannels, relu6: false,
                 residual: nil, ldr: s.midChannels)
            maskClipped(bb.dMid, activation: bb.d, count: rows * s.midChannels)
            // Depthwise: bias = Σ dD; weights and dE by the loops; then the expand ReLU6.
            columnSums(bb.dMid, rows: rows, cols: s.midChannels, into: &bb.grads[3])
            for t in bb.grads[2].indices { bb.grads[2][t] = 0 }
            p.blocks[6 * i + 2].withUnsafeBufferPointer { dw in
                bb.grads[2].withUnsafeMutableBufferPointer { gdw in
                    depthwiseBackward(bb.e, weights: dw.baseAddress!, g: bb.dMid, n: n, h: gridHeight, w: gridWidth, c: s.midChannels,
                                      k: s.kernel, gW: gdw.baseAddress!, dx: bb.dE)
                }
            }
            maskClipped(bb.dE, activation: bb.e, count: rows * s.midChannels)
            // Expand: weights from dE and the block input; the input gradient only when a block below needs it.
            bb.withGradients(0, 1) { gW, gB in
                weightGradient(dZ: bb.dE, x: input, rows: rows, outs: s.midChannels, ins: s.inChannels, kernel: kernel,
                               gW: &gW, gB: &gB, scratch: &ws.scratch)
            }
            guard let expandT = sw.expandT[i] else { break }
            gemm(m: rows, a: bb.dE, lda: s.midChannels, weights: expandT, c: bb.dIn, ldc: s.inChannels, relu6: false,
                 residual: s.residual ? UnsafePointer(gOut) : nil, ldr: s.inChannels)
            gOut = bb.dIn
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
    static func evaluate(_ set: BlockOutputSet, indices: [Int], p: Parameters, shapes: [EfficientNetLite0.BlockShape],
                         top: FoodTop, head: SoftmaxHead, gridWidth: Int, workspaces: [Workspace]) -> (loss: Float, accuracy: Float) {
        guard !indices.isEmpty else { return (0, 0) }
        let sw = StepWeights(p, shapes: shapes, cin: top.inChannels, cout: top.outChannels, kernel: top.conv.gemmKernel, backward: false)
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
                    cout: top.outChannels, classes: head.classes.count, weights: sw, p: p, shapes: shapes, mean: head.featureMean,
                    scale: head.featureScale, smoothing: 0, gradScale: nil, gridWidth: gridWidth)
                lock.lock(); loss += ws.loss; correct += ws.correct; lock.unlock()
                start += chunk * workspaces.count
            }
        }
        return (Float(loss / Double(indices.count)), Float(correct) / Float(indices.count))
    }

    /// Trains from `top` (its blocks, if any, and head conv) and `head` on views `train` of `set`, choosing the
    /// epoch by the loss on views `holdOut`. `gridWidth` is the block map's width (7 at 224 input), used to mirror
    /// cells and by the depthwise layers. `anchor` is what weight decay pulls the top toward (default: `top`).
    package static func train(set: BlockOutputSet, gridWidth: Int, train trainIndices: [Int], holdOut: [Int], top: FoodTop,
                             head: SoftmaxHead, anchor: FoodTop? = nil, options o: TopFineTuneOptions = .init(),
                             progress: (@Sendable (String) -> Void)? = nil) throws(FoodVisionError) -> (FoodTop, SoftmaxHead, TopFineTuneReport) {
        guard set.channels == top.inputChannels, head.dimension == top.outChannels else {
            throw .invalidTrainingData(reason: "block outputs have \(set.channels) channels, food top reads \(top.inputChannels) (→\(top.outChannels)), head \(head.dimension)")
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
        let shapes = top.blocks.map(\.shape)
        let threads = min(o.threads, o.batchSize)
        let partSize = (o.batchSize + threads - 1) / threads
        let workspaces = (0..<threads).map { _ in
            Workspace(views: partSize, cells: set.cells, cin: cin, cout: cout, classes: k, shapes: shapes)
        }
        var p = Parameters(w: top.weights, b: top.bias, hw: head.weights, hb: head.bias, blocks: top.blocks.flatMap(\.arrays))
        let anchorTop = anchor ?? top
        guard anchorTop.weights.count == top.weights.count, anchorTop.bias.count == top.bias.count,
              anchorTop.blocks.map(\.shape) == shapes else {
            throw .invalidTrainingData(reason: "the weight-decay anchor's shape differs from the food top's")
        }
        let w0 = anchorTop.weights, b0 = anchorTop.bias, blocks0 = anchorTop.blocks.flatMap(\.arrays)
        var adamW = Adam(p.w.count), adamB = Adam(p.b.count), adamHW = Adam(p.hw.count), adamHB = Adam(p.hb.count)
        var adamBlocks = p.blocks.map { Adam($0.count) }
        var rng = SplitMix64(seed: o.seed)
        func evaluate(_ p: Parameters) -> (loss: Float, accuracy: Float) {
            Self.evaluate(set, indices: holdOut, p: p, shapes: shapes, top: top, head: head, gridWidth: gridWidth, workspaces: workspaces)
        }
        let initial = evaluate(p)
        progress?(String(format: "fine-tune: start: held-out loss %.4f, accuracy %.4f (%d views, %d blocks)", initial.loss,
                         initial.accuracy, holdOut.count, shapes.count))
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
                let sw = StepWeights(p, shapes: shapes, cin: cin, cout: cout, kernel: top.conv.gemmKernel, backward: true)
                let params = p
                let parts = (n + partSize - 1) / partSize
                let scale = 1 / Float(n)
                let first = start, last = end
                DispatchQueue.concurrentPerform(iterations: parts) { w in
                    let ws = workspaces[w]
                    let lo = first + w * partSize, hi = min(lo + partSize, last)
                    gather(set, indices: epochOrder[lo..<hi], mirror: mirror[lo..<hi], width: gridWidth, into: ws)
                    run(ws: ws, n: hi - lo, labels: ArraySlice(epochOrder[lo..<hi].map { set.labels[$0] }), cells: set.cells, cin: cin,
                        cout: cout, classes: k, weights: sw, p: params, shapes: shapes, mean: head.featureMean, scale: head.featureScale,
                        smoothing: o.labelSmoothing, gradScale: scale, windows: windows?[lo..<hi], gridWidth: gridWidth)
                }
                var gW = workspaces[0].gW, gB = workspaces[0].gB, gHW = workspaces[0].gHW, gHB = workspaces[0].gHB
                var gBlocks = workspaces[0].blocks.flatMap(\.grads)
                epochLoss += workspaces[0].loss; epochCorrect += workspaces[0].correct
                for w in 1..<max(1, parts) {
                    let ws = workspaces[w]
                    for i in gW.indices { gW[i] += ws.gW[i] }
                    for i in gB.indices { gB[i] += ws.gB[i] }
                    for i in gHW.indices { gHW[i] += ws.gHW[i] }
                    for i in gHB.indices { gHB[i] += ws.gHB[i] }
                    for (a, g) in ws.blocks.flatMap(\.grads).enumerated() { for i in g.indices { gBlocks[a][i] += g[i] } }
                    epochLoss += ws.loss; epochCorrect += ws.correct
                }
                t += 1
                adamW.step(&p.w, grad: gW, lr: o.learningRate, l2: o.weightDecay, anchor: w0, t: t)
                adamB.step(&p.b, grad: gB, lr: o.learningRate, l2: o.weightDecay, anchor: b0, t: t)
                adamHW.step(&p.hw, grad: gHW, lr: o.headLearningRate, l2: o.headL2, anchor: nil, t: t)
                adamHB.step(&p.hb, grad: gHB, lr: o.headLearningRate, l2: 0, anchor: nil, t: t)
                for a in p.blocks.indices {
                    adamBlocks[a].step(&p.blocks[a], grad: gBlocks[a], lr: o.blockLearningRate, l2: o.weightDecay, anchor: blocks0[a], t: t)
                }
                start = end
            }
            let held = evaluate(p)
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
        var blocks = [TailBlock]()
        for (i, s) in shapes.enumerated() { blocks.append(try TailBlock(shape: s, arrays: Array(best.blocks[6 * i ..< 6 * i + 6]))) }
        return (try FoodTop(weights: best.w, bias: best.b, inChannels: cin, outChannels: cout, blocks: blocks), newHead, report)
    }
}
