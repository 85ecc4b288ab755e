internal import CKernels
import Foundation

/// The arithmetic of the network's 1x1 convolutions and fully connected layers (nine tenths of its work).
/// `fp32` is the reference and runs everywhere. `bf16` rounds weights (at load) and activations (per layer) to
/// bfloat16 and accumulates in float with AVX-512 BF16 (`vdpbf16ps`, twice the multiply-adds per instruction of an
/// FP32 FMA); it needs a CPU with those instructions, detected at run time (CPUID), and falls back to `fp32` elsewhere.
public enum InferencePrecision: String, Sendable, CaseIterable, Codable {
    case fp32
    case bf16
    /// The layers with at least `INT8Panels.minInputChannels` inputs and `minOutputChannels` outputs in 8-bit
    /// integers (weights per output channel, activations per pixel over their own range, quantised as the layer runs;
    /// AVX-512 VNNI `vpdpbusd`), the smaller ones (where quantising the rows costs more than it saves) in BF16.
    case int8

    /// Whether this CPU runs the BF16 kernel (AVX-512 F, BW, VL and BF16).
    public static let bf16Supported: Bool = fm_bf16_supported() != 0
    /// Whether this CPU runs the INT8 kernel (AVX-512 F, BW, VL and VNNI).
    public static let int8Supported: Bool = fm_vnni_supported() != 0

    /// The default: `int8` where the CPU has both VNNI and BF16 (the combination whose accuracy was measured
    /// against FP32 and kept inside the bars, docs/benchmarks.md), else `bf16` where it has BF16, else `fp32`.
    /// A CPU with VNNI but no BF16 would run `int8`'s narrow layers in FP32, a mix never measured, so it gets `fp32`.
    public static var preferred: InferencePrecision {
        int8Supported && bf16Supported ? .int8 : InferencePrecision.bf16.available
    }

    /// Whether `.int8` runs a 1x1 convolution of this shape in INT8 (the others run in BF16).
    public static func int8Runs(inChannels: Int, outChannels: Int) -> Bool {
        INT8Panels.applies(inChannels: inChannels, outChannels: outChannels)
    }

    /// This precision where the CPU runs it, else `fp32` (`int8` without BF16 keeps its small layers in FP32).
    public var available: InferencePrecision {
        switch self {
        case .fp32: .fp32
        case .bf16: Self.bf16Supported ? .bf16 : .fp32
        case .int8: Self.int8Supported ? .int8 : Self.bf16Supported ? .bf16 : .fp32
        }
    }
}

/// How a network runs: the arithmetic of its 1x1 convolutions, the FP32 GEMM kernel and the band size of its large
/// blocks. Whoever loads a model passes it (the defaults suit every caller); the library reads no environment and keeps
/// no process-wide choice — only executables turn their environment into options (`init(environment:)`).
public struct InferenceOptions: Sendable, Equatable {
    /// Where the CPU runs it (`available`), so the options say what will run.
    public var precision: InferencePrecision { didSet { precision = precision.available } }
    /// nil: `GemmKernel.fastest`, measured the first time a float GEMM needs it.
    public var kernel: GemmKernel?
    /// Floats of expanded input rows per band (`EfficientNetLite0`); 128 K measured best (docs/benchmarks.md).
    public var bandFloats: Int

    public static let defaultBandFloats = 128 * 1024

    public init(precision: InferencePrecision = .preferred, kernel: GemmKernel? = nil, bandFloats: Int = defaultBandFloats) {
        self.precision = precision.available
        self.kernel = kernel
        self.bandFloats = max(1024, bandFloats)
    }

    /// An executable's settings: `FOODMOMENT_PRECISION` (`fp32`, `bf16`, `int8`), `FOODMOMENT_GEMM_KERNEL` (a kernel's
    /// raw value) and `FOODMOMENT_BAND_FLOATS`; a variable unset or not understood keeps the default (the CLI refuses
    /// an unknown precision before it gets here).
    public init(environment: [String: String]) {
        self.init(precision: environment["FOODMOMENT_PRECISION"].flatMap(InferencePrecision.init(rawValue:)) ?? .preferred,
                  kernel: environment["FOODMOMENT_GEMM_KERNEL"].flatMap(GemmKernel.init(rawValue:)),
                  bandFloats: environment["FOODMOMENT_BAND_FLOATS"].flatMap { Int($0) } ?? Self.defaultBandFloats)
    }
}

/// 1x1-convolution weights quantised per output channel for `fm_gemm_int8`, with scales, sums and bias padded to
/// whole panels.
final class INT8Panels: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Int8>
    let scales: FloatBuffer
    let sums: UnsafeMutablePointer<Int32>
    let bias: FloatBuffer

    /// Below these the BF16 (or FP32) kernel is faster: quantising each row costs two passes and two reductions,
    /// which a short row or a narrow layer does not repay (`bench --gemm`: 784,144,24 197 vs 284 GOP/s in BF16;
    /// 196,240,192 635 vs 484).
    static let minInputChannels = 128, minOutputChannels = 64
    /// The kernel quantises a block of at least 8 rows at a time into a fixed scratch of 32 KB.
    static let maxInputChannels = 4096

    static func applies(inChannels k: Int, outChannels n: Int) -> Bool {
        k >= minInputChannels && n >= minOutputChannels && k <= maxInputChannels
    }

    init(weightsOI: [Float], bias: [Float]?, inChannels k: Int, outChannels n: Int) {
        let count = fm_int8_packed_count(Int32(n), Int32(k))
        let padded = (n + 31) / 32 * 32
        let raw = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 64)
        let packed = raw.bindMemory(to: Int8.self, capacity: max(count, 1))
        let sums = UnsafeMutablePointer<Int32>.allocate(capacity: padded)
        let scales = FloatBuffer(count: padded)
        weightsOI.withUnsafeBufferPointer { fm_int8_pack($0.baseAddress!, Int32(n), Int32(k), packed, scales.pointer, sums) }
        pointer = packed
        self.sums = sums
        self.scales = scales
        self.bias = FloatBuffer(count: padded, prefix: bias)
    }

    deinit {
        UnsafeMutableRawPointer(pointer).deallocate()
        sums.deallocate()
    }
}

/// 1x1-convolution weights in bfloat16 pairs for `fm_gemm_bf16`, with the bias padded to whole panels.
final class BF16Panels: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<UInt16>
    let bias: FloatBuffer

    /// The kernel converts a block of input rows at a time into a fixed scratch, which holds rows of up to 2,048 values.
    static let maxInputChannels = 2048

    init(weightsOI: [Float], bias: [Float]?, inChannels k: Int, outChannels n: Int) {
        let count = fm_bf16_packed_count(Int32(n), Int32(k))
        let raw = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1) * 2, alignment: 64)
        let packed = raw.bindMemory(to: UInt16.self, capacity: max(count, 1))
        weightsOI.withUnsafeBufferPointer { fm_bf16_pack($0.baseAddress!, Int32(n), Int32(k), packed) }
        pointer = packed
        self.bias = FloatBuffer(count: (n + 31) / 32 * 32, prefix: bias)
    }

    deinit { UnsafeMutableRawPointer(pointer).deallocate() }
}

/// The register tile a GEMM uses. The best one depends on the vector width the build targets
/// (AVX-512 with `FOODMOMENT_TARGET_CPU=native`, SSE2 in the portable build), which Swift code cannot ask
/// at compile time, so `GemmKernel.fastest` measures once per process and the weights are packed for it.
public enum GemmKernel: String, Sendable, CaseIterable, Codable {
    /// 8 rows x 32 columns in 16 `SIMD16<Float>` accumulators (AVX-512: 16 zmm registers).
    case tile8x32
    /// 6 rows x 16 columns in 12 `SIMD8<Float>` accumulators (AVX2: 12 ymm registers).
    case tile6x16
    /// 6 rows x 8 columns in 12 `SIMD4<Float>` accumulators (SSE2: 12 of the 16 xmm registers).
    case tile6x8
    /// `tile8x32` with fused multiply-adds: fast only in a build for a CPU with FMA
    /// (`FOODMOMENT_TARGET_CPU`); in the portable build each lane becomes a libm call and it is never chosen.
    /// Rounds once per multiply-add, so its results differ from the other kernels' in the last bits.
    case tile8x32fma
    /// `tile6x16` with fused multiply-adds, for CPUs with AVX2 and FMA but no AVX-512; rounds like `tile8x32fma`.
    case tile6x16fma
    /// `tile6x8` with fused multiply-adds: CPUs that split 256-bit operations in two halves (Zen 1) run 128-bit ones
    /// as fast; rounds like `tile8x32fma`.
    case tile6x8fma

    public var rows: Int {
        switch self { case .tile8x32, .tile8x32fma: 8; case .tile6x16, .tile6x16fma, .tile6x8, .tile6x8fma: 6 }
    }

    public var columns: Int {
        switch self { case .tile8x32, .tile8x32fma: 32; case .tile6x16, .tile6x16fma: 16; case .tile6x8, .tile6x8fma: 8 }
    }

    /// Whether the kernel fuses each multiply-add (one rounding; last-bit differences from the others).
    public var fused: Bool { self == .tile8x32fma || self == .tile6x16fma || self == .tile6x8fma }

    /// The kernel that ran a representative 1x1 convolution fastest on this machine and build, measured
    /// the first time it is asked (a few milliseconds). The multiply-then-add kernels give bit-identical
    /// results (same products, same order), and so do the fused ones among themselves; the two groups differ in the
    /// last bits (single rounding).
    /// A load can name another (`InferenceOptions.kernel`: the CLI's `FOODMOMENT_GEMM_KERNEL`, for benchmarking one).
    public static let fastest: GemmKernel = measureFastest()

    /// Best-of-`runs` rate of this kernel on an `m x k` by `k x n` product (random values), in GFLOP/s
    /// counting a multiply-add as two operations.
    /// With `precision` `.bf16` (where the CPU has it) the BF16 kernel runs instead of this one.
    public func measureGFLOPS(m: Int, k: Int, n: Int, runs: Int = 20, precision: InferencePrecision = .fp32) -> Double {
        let a = FloatBuffer(count: m * k)
        for i in 0..<(m * k) { a.pointer[i] = Float(i % 17) * 0.01 - 0.08 }
        let c = FloatBuffer(count: m * n)
        let weights = (0..<(n * k)).map { Float($0 % 11) * 0.02 - 0.1 }
        let packed = PackedGemmWeights(weightsOI: weights, bias: nil, inChannels: k, outChannels: n, kernel: self, precision: precision)
        var best = UInt64.max
        for _ in 0..<max(1, runs) {
            let t0 = monotonicNanoseconds()
            gemm(m: m, a: a.pointer, lda: k, weights: packed, c: c.pointer, ldc: n, relu6: false, residual: nil, ldr: 0)
            best = min(best, monotonicNanoseconds() - t0)
        }
        return 2 * Double(m) * Double(k) * Double(n) / Double(max(best, 1))
    }

    /// Whether `measureFastest` tries this kernel here: the 8 x 32 tiles need AVX-512's 32 vector registers (they
    /// spill on AVX2), and the fused ones a build for this CPU (`FOODMOMENT_CPU_TUNED`) that has FMA (elsewhere each
    /// lane is a libm call). Measuring costs start-up time on every FP32 run, so hopeless kernels are not timed.
    public var worthMeasuring: Bool {
        if rows == 8, fm_cpu_has_avx512f() == 0 { return false }
        if fused {
            #if FOODMOMENT_CPU_TUNED
            return fm_cpu_has_fma() != 0
            #else
            return false
            #endif
        }
        return true
    }

    private static func measureFastest() -> GemmKernel {
        // A mid-network shape (14x14 pixels, 480 -> 112 channels plus 112 -> 672).
        let m = 196, k = 240, n = 192
        let a = FloatBuffer(count: m * k)
        for i in 0..<(m * k) { a.pointer[i] = Float(i % 13) * 0.01 }
        let c = FloatBuffer(count: m * n)
        var weights = [Float](repeating: 0, count: n * k)
        for i in weights.indices { weights[i] = Float(i % 7) * 0.02 }
        let candidates = GemmKernel.allCases.filter(\.worthMeasuring)
        // Rounds over all kernels (not one kernel after another) so a burst of load from another process
        // hits every kernel alike; each kernel keeps its fastest run. After two rounds a kernel more than a quarter
        // slower than the best is dropped: the choice is between near-equals, and each round costs start-up time.
        let packed = candidates.map {
            PackedGemmWeights(weightsOI: weights, bias: nil, inChannels: k, outChannels: n, kernel: $0)
        }
        var fastest = [UInt64](repeating: .max, count: packed.count)
        for round in 0..<8 {
            let best = fastest.min() ?? .max
            for (i, p) in packed.enumerated() {
                if round >= 2, fastest[i] > best / 4 * 5 { continue }
                let t0 = monotonicNanoseconds()
                gemm(m: m, a: a.pointer, lda: k, weights: p, c: c.pointer, ldc: n, relu6: false, residual: nil, ldr: 0)
                fastest[i] = min(fastest[i], monotonicNanoseconds() - t0)
            }
        }
        var choice = candidates.first ?? .tile6x8
        var bestTime = UInt64.max
        for (i, t) in fastest.enumerated() where t < bestTime { bestTime = t; choice = candidates[i] }
        return choice
    }
}

/// Weights of a 1x1 convolution / fully connected layer packed for one `GemmKernel`: column panels of
/// `kernel.columns` output channels, each `K x columns` contiguous (zero-padded past `N`), plus the bias
/// padded the same way.
package struct PackedGemmWeights: @unchecked Sendable {
    let k: Int
    let n: Int
    /// The tile of the float panels; nil when none were packed and no kernel was named (BF16 / INT8 layers).
    private let chosenKernel: GemmKernel?
    /// The float kernel these weights use or, for a layer that runs in BF16 or INT8, the one a float copy would
    /// (`GemmKernel.fastest`, measured only when first asked: a reduced-precision network never pays for it).
    package var kernel: GemmKernel { chosenKernel ?? .fastest }
    let panels: FloatBuffer
    let bias: FloatBuffer
    /// Set when the layer runs in BF16 or INT8 (`precision`); then the float panels are empty.
    let bf16: BF16Panels?
    let int8: INT8Panels?
    /// The arithmetic `gemm` runs with these weights.
    package var precision: InferencePrecision { int8 != nil ? .int8 : bf16 != nil ? .bf16 : .fp32 }

    /// Panels of the full tile width; a remainder of at most half a tile goes in one half-width panel
    /// (most layers here have N = 16 mod 32, which would otherwise waste half of their last tile).
    var fullPanels: Int { n / kernel.columns }
    var halfLast: Bool { n % kernel.columns > 0 && n % kernel.columns <= kernel.columns / 2 }
    var panelCount: Int { (n + kernel.columns - 1) / kernel.columns }

    func panelWidth(_ panel: Int) -> Int { panel == fullPanels && halfLast ? kernel.columns / 2 : kernel.columns }

    /// `weightsOI` is row-major `[N][K]` (PyTorch's `[out, in]`); `bias` has `N` values or is nil for zero.
    /// `precision` `.bf16` takes effect where the CPU runs it and K is at most `BF16Panels.maxInputChannels`; `.int8`
    /// for the layers `INT8Panels.applies` to, BF16 (where the CPU has it) for the others.
    /// `kernel` nil = `GemmKernel.fastest`, measured only if float panels are packed.
    package init(weightsOI: [Float], bias: [Float]?, inChannels k: Int, outChannels n: Int, kernel: GemmKernel?,
                 precision: InferencePrecision = .fp32) {
        precondition(weightsOI.count == n * k, "PackedGemmWeights: \(weightsOI.count) weights for \(n)x\(k)")
        precondition(bias == nil || bias!.count == n, "PackedGemmWeights: bias count")
        self.k = k
        self.n = n
        let available = precision.available
        int8 = available == .int8 && INT8Panels.applies(inChannels: k, outChannels: n)
            ? INT8Panels(weightsOI: weightsOI, bias: bias, inChannels: k, outChannels: n) : nil
        bf16 = int8 == nil && available != .fp32 && InferencePrecision.bf16Supported && k <= BF16Panels.maxInputChannels
            ? BF16Panels(weightsOI: weightsOI, bias: bias, inChannels: k, outChannels: n) : nil
        if int8 != nil || bf16 != nil {
            chosenKernel = kernel
            panels = FloatBuffer(count: 0)
            self.bias = FloatBuffer(count: 0)
            return
        }
        let kernel = kernel ?? .fastest
        chosenKernel = kernel
        let nr = kernel.columns
        let panelCount = (n + nr - 1) / nr
        panels = FloatBuffer(count: panelCount * k * nr)
        self.bias = FloatBuffer(count: panelCount * nr)
        let dst = panels.pointer
        weightsOI.withUnsafeBufferPointer { w in
            let rem = n % nr
        let halfLast = rem > 0 && rem <= nr / 2
        for j in 0..<n {
                let panel = j / nr, col = j % nr
                let width = panel == n / nr && halfLast ? nr / 2 : nr
                let base = panel * k * nr + col
                for kk in 0..<k { dst[base + kk * width] = w[j * k + kk] }
            }
        }
        if let bias { for j in 0..<n { self.bias.pointer[j] = bias[j] } }
    }
}

/// `C[m x N] = epilogue(A[m x K] * W^T + bias)`: the 1x1 convolution over NHWC pixels (m = N*H*W) and the
/// fully connected layer. The epilogue adds `residual` (same layout as C, leading dimension `ldr`) and then
/// clamps to [0, 6] when `relu6` is set.
///
/// Blocked for the caches: K in blocks of 512 (a packed B block of 512x32 floats is 64 KB; 256 and the whole K measured the same within noise),
/// rows in blocks of 96 that are swept across all column panels while they stay in L2; ragged edges go
/// through a small scratch tile (columns), 4- to 7-row kernels (the last rows) or one-row kernels (M < 4: a classifier).
package func gemm(m: Int, a: UnsafePointer<Float>, lda: Int, weights w: PackedGemmWeights,
          c: UnsafeMutablePointer<Float>, ldc: Int, relu6: Bool,
          residual: UnsafePointer<Float>?, ldr: Int) {
    if let q = w.int8 {
        fm_gemm_int8(Int32(m), Int32(w.n), Int32(w.k), a, Int32(lda), q.pointer, q.scales.pointer, q.sums, q.bias.pointer, c,
                     Int32(ldc), residual, Int32(ldr), relu6 ? 1 : 0)
        return
    }
    if let b = w.bf16 {
        fm_gemm_bf16(Int32(m), Int32(w.n), Int32(w.k), a, Int32(lda), b.pointer, b.bias.pointer, c, Int32(ldc), residual, Int32(ldr),
                     relu6 ? 1 : 0)
        return
    }
    let kernel = w.kernel
    let mr = kernel.rows, nr = kernel.columns
    let kTotal = w.k, n = w.n
    let kcBlock = 512, mcBlock = 96
    let panels = w.panels.pointer, bias = w.bias.pointer
    let wideTails = kernel == .tile8x32 || kernel == .tile8x32fma
    withUnsafeTemporaryAllocation(of: Float.self, capacity: 2 * mr * nr) { scratch in
        // Column-edge tiles (N not a multiple of the tile) run into these and are copied out.
        let cTile = scratch.baseAddress!
        let rTile = cTile + mr * nr
        cTile.initialize(repeating: 0, count: 2 * mr * nr)
        var k0 = 0
        while k0 < kTotal {
            let kc = min(kcBlock, kTotal - k0)
            let first = k0 == 0, last = k0 + kc == kTotal
            var i0 = 0
            while i0 < m {
                let iEnd = min(i0 + mcBlock, m)
                for panel in 0..<w.panelCount {
                    let j0 = panel * nr
                    let width = w.panelWidth(panel)
                    let half = width < nr
                    let cols = min(width, n - j0)
                    let direct = cols == width
                    let bp = panels + panel * kTotal * nr + k0 * width
                    let biasP: UnsafePointer<Float>? = first ? UnsafePointer(bias + j0) : nil
                    var i = i0
                    while i < iEnd {
                        // The AVX-512 tiles split a last 9-11 rows as 5 + 4, 5 + 5 or 6 + 5 (4- to 7-row kernels keep both
                        // FMA pipes busy; a 1-row kernel runs at a quarter of the rate).
                        let left = iEnd - i
                        let rows = wideTails && left > mr && left < mr + 4 ? (left + 1) / 2 : min(mr, left)
                        var resP: UnsafePointer<Float>? = (last && residual != nil) ? residual! + i * ldr + j0 : nil
                        var resLd = ldr
                        var cP = c + i * ldc + j0
                        var cLd = ldc
                        if !direct {
                            if !first {
                                for r in 0..<rows { (cTile + r * width).update(from: cP + r * ldc, count: cols) }
                            }
                            if let res = resP {
                                for r in 0..<rows { (rTile + r * width).update(from: res + r * ldr, count: cols) }
                                resP = UnsafePointer(rTile)
                                resLd = width
                            }
                            cP = cTile
                            cLd = width
                        }
                        if rows == mr {
                            runMicroKernel(kernel, half: half, kc: kc, a: a + i * lda + k0, lda: lda, b: bp, c: cP, ldc: cLd,
                                           bias: biasP, residual: resP, ldr: resLd, relu6: relu6 && last)
                        } else {
                            var r = 0
                            if rows >= 4, wideTails {
                                runTailKernel(rows: rows, fma: kernel == .tile8x32fma, half: half, kc: kc, a: a + i * lda + k0, lda: lda,
                                              b: bp, c: cP, ldc: cLd, bias: biasP, residual: resP, ldr: resLd,
                                              relu6: relu6 && last)
                                r = rows
                            }
                            while r < rows {
                                runRowKernel(kernel, half: half, kc: kc, a: a + (i + r) * lda + k0, b: bp, c: cP + r * cLd, bias: biasP,
                                             residual: resP.map { $0 + r * resLd }, relu6: relu6 && last)
                                r += 1
                            }
                        }
                        if !direct {
                            for r in 0..<rows { (c + (i + r) * ldc + j0).update(from: cTile + r * width, count: cols) }
                        }
                        i += rows
                    }
                }
                i0 = iEnd
            }
            k0 += kc
        }
    }
}

/// 4 to 7 rows of the AVX-512 tiles (the M = 196 layers end with four, M = 49 with five and four).
@inline(__always)
private func runTailKernel(rows: Int, fma: Bool, half: Bool, kc: Int, a: UnsafePointer<Float>, lda: Int, b: UnsafePointer<Float>,
                           c: UnsafeMutablePointer<Float>, ldc: Int, bias: UnsafePointer<Float>?,
                           residual: UnsafePointer<Float>?, ldr: Int, relu6: Bool) {
    switch (rows, fma, half) {
    case (4, false, false): gemmMicro4x16x2(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (4, false, true): gemmMicro4x16x1(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (4, true, false): gemmMicro4x16x2fma(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (4, true, true): gemmMicro4x16x1fma(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (5, false, false): gemmMicro5x16x2(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (5, false, true): gemmMicro5x16x1(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (5, true, false): gemmMicro5x16x2fma(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (5, true, true): gemmMicro5x16x1fma(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (6, false, false): gemmMicro6x16x2(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (6, false, true): gemmMicro6x16x1(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (6, true, false): gemmMicro6x16x2fma(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (6, true, true): gemmMicro6x16x1fma(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (7, false, false): gemmMicro7x16x2(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (7, false, true): gemmMicro7x16x1(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (7, true, false): gemmMicro7x16x2fma(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (7, true, true): gemmMicro7x16x1fma(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    default: preconditionFailure("runTailKernel: \(rows) rows")
    }
}

@inline(__always)
private func runRowKernel(_ kernel: GemmKernel, half: Bool, kc: Int, a: UnsafePointer<Float>, b: UnsafePointer<Float>,
                          c: UnsafeMutablePointer<Float>, bias: UnsafePointer<Float>?,
                          residual: UnsafePointer<Float>?, relu6: Bool) {
    switch (kernel, half) {
    case (.tile8x32, false): gemmMicro1x16x2(kc: kc, a: a, lda: 0, b: b, c: c, ldc: 0, bias: bias, residual: residual, ldr: 0, relu6: relu6)
    case (.tile8x32, true): gemmMicro1x16x1(kc: kc, a: a, lda: 0, b: b, c: c, ldc: 0, bias: bias, residual: residual, ldr: 0, relu6: relu6)
    case (.tile6x16, false): gemmMicro1x8x2(kc: kc, a: a, lda: 0, b: b, c: c, ldc: 0, bias: bias, residual: residual, ldr: 0, relu6: relu6)
    case (.tile6x16, true): gemmMicro1x8x1(kc: kc, a: a, lda: 0, b: b, c: c, ldc: 0, bias: bias, residual: residual, ldr: 0, relu6: relu6)
    case (.tile6x8, false): gemmMicro1x4x2(kc: kc, a: a, lda: 0, b: b, c: c, ldc: 0, bias: bias, residual: residual, ldr: 0, relu6: relu6)
    case (.tile6x8, true): gemmMicro1x4x1(kc: kc, a: a, lda: 0, b: b, c: c, ldc: 0, bias: bias, residual: residual, ldr: 0, relu6: relu6)
    case (.tile8x32fma, false): gemmMicro1x16x2fma(kc: kc, a: a, lda: 0, b: b, c: c, ldc: 0, bias: bias, residual: residual, ldr: 0, relu6: relu6)
    case (.tile8x32fma, true): gemmMicro1x16x1fma(kc: kc, a: a, lda: 0, b: b, c: c, ldc: 0, bias: bias, residual: residual, ldr: 0, relu6: relu6)
    case (.tile6x16fma, false): gemmMicro1x8x2fma(kc: kc, a: a, lda: 0, b: b, c: c, ldc: 0, bias: bias, residual: residual, ldr: 0, relu6: relu6)
    case (.tile6x16fma, true): gemmMicro1x8x1fma(kc: kc, a: a, lda: 0, b: b, c: c, ldc: 0, bias: bias, residual: residual, ldr: 0, relu6: relu6)
    case (.tile6x8fma, false): gemmMicro1x4x2fma(kc: kc, a: a, lda: 0, b: b, c: c, ldc: 0, bias: bias, residual: residual, ldr: 0, relu6: relu6)
    case (.tile6x8fma, true): gemmMicro1x4x1fma(kc: kc, a: a, lda: 0, b: b, c: c, ldc: 0, bias: bias, residual: residual, ldr: 0, relu6: relu6)
    }
}

@inline(__always)
private func runMicroKernel(_ kernel: GemmKernel, half: Bool, kc: Int, a: UnsafePointer<Float>, lda: Int, b: UnsafePointer<Float>,
                            c: UnsafeMutablePointer<Float>, ldc: Int, bias: UnsafePointer<Float>?,
                            residual: UnsafePointer<Float>?, ldr: Int, relu6: Bool) {
    switch (kernel, half) {
    case (.tile8x32, false): gemmMicro8x16x2(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (.tile8x32, true): gemmMicro8x16x1(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (.tile6x16, false): gemmMicro6x8x2(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (.tile6x16, true): gemmMicro6x8x1(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (.tile6x8, false): gemmMicro6x4x2(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (.tile6x8, true): gemmMicro6x4x1(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (.tile8x32fma, false): gemmMicro8x16x2fma(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (.tile8x32fma, true): gemmMicro8x16x1fma(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (.tile6x16fma, false): gemmMicro6x8x2fma(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (.tile6x16fma, true): gemmMicro6x8x1fma(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (.tile6x8fma, false): gemmMicro6x4x2fma(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    case (.tile6x8fma, true): gemmMicro6x4x1fma(kc: kc, a: a, lda: lda, b: b, c: c, ldc: ldc, bias: bias, residual: residual, ldr: ldr, relu6: relu6)
    }
}

/// How far ahead (in floats) the AVX-512 GEMM kernels prefetch their packed weight panel: the first row tile of
/// each panel streams it from L3 (the 7x7 layers' weights are read once per forward and are cold).
/// Measured with 0, 512, 1024, 2048, 4096 and 8192: 1024 gained half as much, 2048 to 8192 the same. A literal, so
/// reading it costs no lazy-global check in the kernels.
let gemmPrefetchDistance = 2048

/// `value` rounded to bfloat16 (nearest, ties to even; NaN stays NaN, subnormals become zero), as a Float: what the
/// BF16 layers multiply.
func bf16Rounded(_ value: Float) -> Float { Float(bitPattern: UInt32(fm_bf16_round(value)) << 16) }

/// A row quantised as the INT8 layers quantise each pixel's inputs: the bytes, the scale and the zero point
/// (`value ≈ scale * (byte - zero)`).
func int8QuantizedRow(_ row: [Float]) -> (bytes: [UInt8], scale: Float, zero: Int) {
    var bytes = [UInt8](repeating: 0, count: row.count)
    var zero: Int32 = 0
    let scale = row.withUnsafeBufferPointer { r in
        bytes.withUnsafeMutableBufferPointer { fm_int8_quantize_row(r.baseAddress!, Int32(row.count), $0.baseAddress!, &zero) }
    }
    return (bytes, scale, Int(zero))
}
