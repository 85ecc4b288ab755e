#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Nanoseconds on the monotonic clock (for kernel selection and benchmarks).
func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// TensorFlow "SAME" padding along one axis: output `ceil(n / stride)`, the odd extra pixel at the end.
public func samePadding(inputSize n: Int, kernel k: Int, stride s: Int) -> (output: Int, before: Int, after: Int) {
    let out = (n + s - 1) / s
    let total = max((out - 1) * s + k - n, 0)
    return (out, total / 2, total - total / 2)
}

@inline(__always) func load16(_ p: UnsafePointer<Float>) -> SIMD16<Float> {
    UnsafeRawPointer(p).loadUnaligned(as: SIMD16<Float>.self)
}
@inline(__always) func load8(_ p: UnsafePointer<Float>) -> SIMD8<Float> {
    UnsafeRawPointer(p).loadUnaligned(as: SIMD8<Float>.self)
}
/// ReLU6 on a vector. `replacing(with:where:)` compiles to compares and blends; the standard library's
/// `pointwiseMin`/`pointwiseMax` on SIMD types compile to a scalar loop through the stack (measured: 10x slower
/// depthwise layers), so they are not used in kernels. `@_transparent` because `@inline(__always)` was not
/// honoured here (perf showed calls passing the vector in four xmm registers).
@_transparent func clamp6(_ v: SIMD16<Float>) -> SIMD16<Float> {
    v.replacing(with: 0, where: v .< 0).replacing(with: 6, where: v .> 6)
}
@_transparent func clamp6(_ v: SIMD8<Float>) -> SIMD8<Float> {
    v.replacing(with: 0, where: v .< 0).replacing(with: 6, where: v .> 6)
}

/// `a += x * w` for the depthwise kernels: one fused multiply-add where the build targets a CPU
/// (`FOODMOMENT_TARGET_CPU`, which defines `FOODMOMENT_CPU_TUNED`; every such target has FMA), a multiply and an add
/// in the portable build, where `addProduct` would become a libm `fmaf` call per lane. Swift never contracts
/// `+= *` into an FMA itself. Every depthwise path (row kernels, borders, tails) goes through it, so the padded
/// and unpadded paths still add the same products in the same order.
@_transparent func mac(_ a: inout SIMD16<Float>, _ x: SIMD16<Float>, _ w: SIMD16<Float>) {
    #if FOODMOMENT_CPU_TUNED
    a.addProduct(x, w)
    #else
    a += x * w
    #endif
}
@_transparent func mac(_ a: inout SIMD8<Float>, _ x: SIMD8<Float>, _ w: SIMD8<Float>) {
    #if FOODMOMENT_CPU_TUNED
    a.addProduct(x, w)
    #else
    a += x * w
    #endif
}
@_transparent func mac(_ a: inout Float, _ x: Float, _ w: Float) {
    #if FOODMOMENT_CPU_TUNED
    a.addProduct(x, w)
    #else
    a += x * w
    #endif
}

@inline(__always) func store16(_ v: SIMD16<Float>, _ p: UnsafeMutablePointer<Float>) {
    UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD16<Float>.self)
}
@inline(__always) func store8(_ v: SIMD8<Float>, _ p: UnsafeMutablePointer<Float>) {
    UnsafeMutableRawPointer(p).storeBytes(of: v, as: SIMD8<Float>.self)
}

/// Depthwise k x k convolution over NHWC with TF SAME padding, bias and optional ReLU6.
/// `weights` is `[k][k][C]` (channel fastest), `bias` has C values.
///
/// Interior output pixels run in generated row kernels (weights in registers); borders take a
/// bounds-checked path. When `paddedScratch` is given (room for `depthwisePaddedCount` floats), each
/// 16-channel chunk of an image is first copied into a zero-bordered one-chunk scratch, so every output
/// takes the unrolled path: worth it for small maps (7x7, 14x14) where most outputs touch a border. The
/// scratch (at most 32 x 32 x 16 floats) stays in L1/L2, unlike a padded copy of all channels.
/// Both ways add the same products in the same order, so results are identical.
func depthwiseConv(input: UnsafePointer<Float>, batch: Int, height h: Int, width w: Int, channels ch: Int,
                   weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, kernel k: Int, stride s: Int,
                   relu6: Bool, output: UnsafeMutablePointer<Float>, paddedScratch: UnsafeMutablePointer<Float>? = nil) {
    let (oh, padTop, padBottom) = samePadding(inputSize: h, kernel: k, stride: s)
    let (ow, padLeft, padRight) = samePadding(inputSize: w, kernel: k, stride: s)
    guard let scratch = paddedScratch else {
        depthwiseDispatch(input: input, batch: batch, height: h, width: w, channels: ch, weights: weights, bias: bias,
                          kernel: k, stride: s, padTop: padTop, padLeft: padLeft, outHeight: oh, outWidth: ow,
                          relu6: relu6, output: output)
        return
    }
    let pw = w + padLeft + padRight
    let c16 = ch / 16 * 16, c8 = c16 + (ch - c16) / 8 * 8
    // The border stays zero; each chunk overwrites only the interior.
    scratch.initialize(repeating: 0, count: (h + padTop + padBottom) * pw * 16)
    for b in 0..<batch {
        let src = input + b * h * w * ch
        let dst = output + b * oh * ow * ch
        var c = 0
        while c < c16 {
            for y in 0..<h {
                let from = src + y * w * ch + c
                let to = scratch + ((y + padTop) * pw + padLeft) * 16
                for x in 0..<w { store16(load16(from + x * ch), to + x * 16) }
            }
            for oy in 0..<oh {
                depthwiseRow(kernel: k, stride: s, rows: scratch + oy * s * pw * 16, rowStride: pw * 16, inCh: 16, ch: ch,
                             ixOffset: 0, weights: weights + c, bias: bias + c, oxStart: 0, oxEnd: ow, relu6: relu6,
                             out: dst + oy * ow * ch + c)
            }
            c += 16
        }
        if c16 < ch {
            for oy in 0..<oh {
                let iy0 = oy * s - padTop
                for ox in 0..<ow {
                    let ix0 = ox * s - padLeft
                    depthwisePixelTail(inImage: src, w: w, ch: ch, weights: weights, bias: bias, k: k, iy0: iy0, ix0: ix0,
                                       kyLo: max(0, -iy0), kyHi: min(k, h - iy0), kxLo: max(0, -ix0), kxHi: min(k, w - ix0),
                                       from: c16, c8: c8, relu6: relu6, out: dst + (oy * ow + ox) * ch)
                }
            }
        }
    }
}

/// Floats needed by `depthwiseConv`'s padded path (one zero-bordered 16-channel chunk of one image).
func depthwisePaddedCount(height h: Int, width w: Int, channels ch: Int, kernel k: Int, stride s: Int) -> Int {
    let v = samePadding(inputSize: h, kernel: k, stride: s), u = samePadding(inputSize: w, kernel: k, stride: s)
    return (h + v.before + v.after) * (w + u.before + u.after) * 16
}

func depthwiseDispatch(input: UnsafePointer<Float>, batch: Int, height h: Int, width w: Int, channels ch: Int,
                               weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, kernel k: Int, stride s: Int,
                               padTop: Int, padLeft: Int, outHeight oh: Int, outWidth ow: Int,
                               relu6: Bool, output: UnsafeMutablePointer<Float>) {
    // Constant kernel sizes let the compiler unroll the tap loops of the interior paths.
    switch (k, s) {
    case (3, 1): depthwiseConvFixed(input: input, batch: batch, height: h, width: w, channels: ch, weights: weights, bias: bias, kernel: 3, stride: 1, padTop: padTop, padLeft: padLeft, outHeight: oh, outWidth: ow, relu6: relu6, output: output)
    case (3, 2): depthwiseConvFixed(input: input, batch: batch, height: h, width: w, channels: ch, weights: weights, bias: bias, kernel: 3, stride: 2, padTop: padTop, padLeft: padLeft, outHeight: oh, outWidth: ow, relu6: relu6, output: output)
    case (5, 1): depthwiseConvFixed(input: input, batch: batch, height: h, width: w, channels: ch, weights: weights, bias: bias, kernel: 5, stride: 1, padTop: padTop, padLeft: padLeft, outHeight: oh, outWidth: ow, relu6: relu6, output: output)
    case (5, 2): depthwiseConvFixed(input: input, batch: batch, height: h, width: w, channels: ch, weights: weights, bias: bias, kernel: 5, stride: 2, padTop: padTop, padLeft: padLeft, outHeight: oh, outWidth: ow, relu6: relu6, output: output)
    default: depthwiseConvFixed(input: input, batch: batch, height: h, width: w, channels: ch, weights: weights, bias: bias, kernel: k, stride: s, padTop: padTop, padLeft: padLeft, outHeight: oh, outWidth: ow, relu6: relu6, output: output)
    }
}

/// `@_transparent` so each call in `depthwiseConv` is inlined with a constant k and stride (with
/// `@inline(__always)` the compiler kept one out-of-line copy with runtime loop bounds).
///
/// Rows whose k input rows all exist run the interior columns through a row kernel that keeps the chunk's
/// k*k weight vectors in registers; border pixels take the bounds-checked path.
@_transparent
func depthwiseConvFixed(input: UnsafePointer<Float>, batch: Int, height h: Int, width w: Int, channels ch: Int,
                        weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, kernel k: Int, stride s: Int,
                        padTop: Int, padLeft: Int, outHeight oh: Int, outWidth ow: Int,
                        relu6: Bool, output: UnsafeMutablePointer<Float>) {
    let c16 = ch / 16 * 16
    let c8 = c16 + (ch - c16) / 8 * 8
    // Output columns whose whole k-wide window lies inside the input.
    let oxFirstInterior = min(ow, (padLeft + s - 1) / s)
    let oxEndInterior = w - k + padLeft < 0 ? oxFirstInterior : max(oxFirstInterior, min(ow, (w - k + padLeft) / s + 1))
    // Output rows whose k input rows all exist.
    let oyFirstInterior = min(oh, max(0, (padTop + s - 1) / s))
    let oyEndInterior = h - k + padTop < 0 ? oyFirstInterior : max(oyFirstInterior, min(oh, (h - k + padTop) / s + 1))
    let interiorColumns = oxEndInterior > oxFirstInterior
    for b in 0..<batch {
        let inImage = input + b * h * w * ch
        let outImage = output + b * oh * ow * ch
        // Interior: one 16-channel chunk at a time down all rows, so the k input rows of that chunk stay in L1
        // between output rows (row-major over all channels evicted them: every tap came from L2 k times).
        if interiorColumns {
            var c = 0
            while c < c16 {
                for oy in oyFirstInterior..<oyEndInterior {
                    let iy0 = oy * s - padTop
                    depthwiseRow(kernel: k, stride: s, rows: inImage + iy0 * w * ch + c, rowStride: w * ch, inCh: ch, ch: ch,
                                 ixOffset: -padLeft, weights: weights + c, bias: bias + c,
                                 oxStart: oxFirstInterior, oxEnd: oxEndInterior, relu6: relu6, out: outImage + oy * ow * ch + c)
                }
                c += 16
            }
        }
        for oy in 0..<oh {
            let iy0 = oy * s - padTop
            let kyLo = max(0, -iy0), kyHi = min(k, h - iy0)
            let outRow = outImage + oy * ow * ch
            var borderStart = 0
            if oy >= oyFirstInterior && oy < oyEndInterior && interiorColumns {
                if c16 < ch {
                    for ox in oxFirstInterior..<oxEndInterior {
                        depthwisePixelTail(inImage: inImage, w: w, ch: ch, weights: weights, bias: bias, k: k,
                                           iy0: iy0, ix0: ox * s - padLeft, kyLo: 0, kyHi: k, kxLo: 0, kxHi: k,
                                           from: c16, c8: c8, relu6: relu6, out: outRow + ox * ch)
                    }
                }
                for ox in 0..<oxFirstInterior {
                    depthwisePixel(inImage: inImage, w: w, ch: ch, weights: weights, bias: bias, k: k, iy0: iy0,
                                   ix0: ox * s - padLeft, kyLo: kyLo, kyHi: kyHi, c16: c16, c8: c8, relu6: relu6,
                                   out: outRow + ox * ch)
                }
                borderStart = oxEndInterior
            }
            for ox in borderStart..<ow {
                depthwisePixel(inImage: inImage, w: w, ch: ch, weights: weights, bias: bias, k: k, iy0: iy0,
                               ix0: ox * s - padLeft, kyLo: kyLo, kyHi: kyHi, c16: c16, c8: c8, relu6: relu6,
                               out: outRow + ox * ch)
            }
        }
    }
}

/// The generated row kernel for (k, stride), or a plain loop for other shapes.
@_transparent
func depthwiseRow(kernel k: Int, stride s: Int, rows: UnsafePointer<Float>, rowStride: Int, inCh: Int, ch: Int, ixOffset: Int,
                  weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, oxStart: Int, oxEnd: Int, relu6: Bool,
                  out: UnsafeMutablePointer<Float>) {
    switch (k, s) {
    case (3, 1): depthwiseRow3s1(rows: rows, rowStride: rowStride, inCh: inCh, ch: ch, ixOffset: ixOffset, weights: weights, bias: bias, oxStart: oxStart, oxEnd: oxEnd, relu6: relu6, out: out)
    case (3, 2): depthwiseRow3s2(rows: rows, rowStride: rowStride, inCh: inCh, ch: ch, ixOffset: ixOffset, weights: weights, bias: bias, oxStart: oxStart, oxEnd: oxEnd, relu6: relu6, out: out)
    case (5, 1): depthwiseRow5s1(rows: rows, rowStride: rowStride, inCh: inCh, ch: ch, ixOffset: ixOffset, weights: weights, bias: bias, oxStart: oxStart, oxEnd: oxEnd, relu6: relu6, out: out)
    case (5, 2): depthwiseRow5s2(rows: rows, rowStride: rowStride, inCh: inCh, ch: ch, ixOffset: ixOffset, weights: weights, bias: bias, oxStart: oxStart, oxEnd: oxEnd, relu6: relu6, out: out)
    default:
        for ox in oxStart..<oxEnd {
            var acc = load16(bias)
            let base = rows + (ox * s + ixOffset) * inCh
            for ky in 0..<k {
                for kx in 0..<k { mac(&acc, load16(base + ky * rowStride + kx * inCh), load16(weights + (ky * k + kx) * ch)) }
            }
            store16(relu6 ? clamp6(acc) : acc, out + ox * ch)
        }
    }
}

/// One output pixel with bounds checks on every tap (image borders).
private func depthwisePixel(inImage: UnsafePointer<Float>, w: Int, ch: Int, weights: UnsafePointer<Float>,
                            bias: UnsafePointer<Float>, k: Int, iy0: Int, ix0: Int, kyLo: Int, kyHi: Int,
                            c16: Int, c8: Int, relu6: Bool, out: UnsafeMutablePointer<Float>) {
    let kxLo = max(0, -ix0), kxHi = min(k, w - ix0)
    var c = 0
    while c < c16 {
        var acc = load16(bias + c)
        for ky in kyLo..<kyHi {
            let row = inImage + ((iy0 + ky) * w + ix0) * ch + c
            let wrow = weights + ky * k * ch + c
            for kx in kxLo..<kxHi { mac(&acc, load16(row + kx * ch), load16(wrow + kx * ch)) }
        }
        store16(relu6 ? clamp6(acc) : acc, out + c)
        c += 16
    }
    if c < ch {
        depthwisePixelTail(inImage: inImage, w: w, ch: ch, weights: weights, bias: bias, k: k,
                           iy0: iy0, ix0: ix0, kyLo: kyLo, kyHi: kyHi, kxLo: kxLo, kxHi: kxHi,
                           from: c, c8: c8, relu6: relu6, out: out)
    }
}

/// Channels `from..<ch` of one depthwise output pixel: SIMD8 chunks, then scalars.
@inline(__always)
func depthwisePixelTail(inImage: UnsafePointer<Float>, w: Int, ch: Int, weights: UnsafePointer<Float>,
                                bias: UnsafePointer<Float>, k: Int, iy0: Int, ix0: Int,
                                kyLo: Int, kyHi: Int, kxLo: Int, kxHi: Int, from: Int, c8: Int, relu6: Bool, out: UnsafeMutablePointer<Float>) {
    var c = from
    while c < c8 {
        var acc = load8(bias + c)
        for ky in kyLo..<kyHi {
            let row = inImage + ((iy0 + ky) * w + ix0) * ch + c
            let wrow = weights + ky * k * ch + c
            for kx in kxLo..<kxHi { mac(&acc, load8(row + kx * ch), load8(wrow + kx * ch)) }
        }
        store8(relu6 ? clamp6(acc) : acc, out + c)
        c += 8
    }
    while c < ch {
        var acc = bias[c]
        for ky in kyLo..<kyHi {
            let row = inImage + ((iy0 + ky) * w + ix0) * ch + c
            let wrow = weights + ky * k * ch + c
            for kx in kxLo..<kxHi { mac(&acc, row[kx * ch], wrow[kx * ch]) }
        }
        out[c] = relu6 ? min(max(acc, 0), 6) : acc
        c += 1
    }
}

/// Dense k x k convolution over NHWC with TF SAME padding (the stem: 3 -> 32 channels, stride 2).
/// `weights` is `[k][k][Cin][Cout]` (output channel fastest), `bias` has Cout values.
/// `rows`: only these output rows, written one after another from `output` (nil: all of them, image after image).
func denseConv(input: UnsafePointer<Float>, batch: Int, height h: Int, width w: Int, inChannels cin: Int,
               weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, outChannels cout: Int,
               kernel k: Int, stride s: Int, relu6: Bool, output: UnsafeMutablePointer<Float>, rows: Range<Int>? = nil) {
    // The stem's shape (3x3, stride 2, RGB in) with constants, so the tap and channel loops unroll.
    if k == 3 && s == 2 && cin == 3 {
        denseConvFixed(input: input, batch: batch, height: h, width: w, inChannels: 3, weights: weights, bias: bias,
                       outChannels: cout, kernel: 3, stride: 2, relu6: relu6, output: output, rows: rows)
    } else {
        denseConvFixed(input: input, batch: batch, height: h, width: w, inChannels: cin, weights: weights, bias: bias,
                       outChannels: cout, kernel: k, stride: s, relu6: relu6, output: output, rows: rows)
    }
}

@_transparent
func denseConvFixed(input: UnsafePointer<Float>, batch: Int, height h: Int, width w: Int, inChannels cin: Int,
                    weights: UnsafePointer<Float>, bias: UnsafePointer<Float>, outChannels cout: Int,
                    kernel k: Int, stride s: Int, relu6: Bool, output: UnsafeMutablePointer<Float>, rows: Range<Int>?) {
    let (oh, padTop, _) = samePadding(inputSize: h, kernel: k, stride: s)
    let (ow, padLeft, _) = samePadding(inputSize: w, kernel: k, stride: s)
    let c16 = cout / 16 * 16
    let outRows = rows ?? 0..<oh
    for b in 0..<batch {
        let inImage = input + b * h * w * cin
        for oy in outRows {
            let iy0 = oy * s - padTop
            let kyLo = max(0, -iy0), kyHi = min(k, h - iy0)
            var ox = 0
            while ox < ow {
                let ix0 = ox * s - padLeft
                let kxLo = max(0, -ix0), kxHi = min(k, w - ix0)
                let outP = output + ((b * outRows.count + oy - outRows.lowerBound) * ow + ox) * cout
                if cout % 32 == 0 && ix0 >= 0 && (ox + 7) * s - padLeft + k <= w && ox + 8 <= ow && kyLo == 0 && kyHi == k {
                    // Eight outputs x 32 channels in 16 accumulators (the GEMM tile's shape): enough independent
                    // chains to keep both FMA pipes busy; same products in the same order as the paths below.
                    var co = 0
                    while co < cout {
                        denseTile8x32(pixels: inImage + (iy0 * w + ix0) * cin, pixelStride: s * cin, rowStride: w * cin,
                                      cin: cin, kernel: k, weights: weights + co, cout: cout, bias: bias + co,
                                      relu6: relu6, out: outP + co)
                        co += 32
                    }
                    ox += 8
                    continue
                }
                var co = 0
                if ix0 >= 0 && (ox + 3) * s - padLeft + k <= w && ox + 4 <= ow && cout == c16 && kyLo == 0 && kyHi == k {
                    // Four outputs share each weight load; full window, so the tap loops have constant bounds.
                    while co < c16 {
                        let bv = load16(bias + co)
                        var a0 = bv, a1 = bv, a2 = bv, a3 = bv
                        for ky in 0..<k {
                            for kx in 0..<k {
                                let px = inImage + ((iy0 + ky) * w + ix0 + kx) * cin
                                let wp = weights + ((ky * k + kx) * cin) * cout + co
                                for ci in 0..<cin {
                                    let wv = load16(wp + ci * cout)
                                    a0 += SIMD16<Float>(repeating: px[ci]) * wv
                                    a1 += SIMD16<Float>(repeating: px[s * cin + ci]) * wv
                                    a2 += SIMD16<Float>(repeating: px[2 * s * cin + ci]) * wv
                                    a3 += SIMD16<Float>(repeating: px[3 * s * cin + ci]) * wv
                                }
                            }
                        }
                        store16(relu6 ? clamp6(a0) : a0, outP + co)
                        store16(relu6 ? clamp6(a1) : a1, outP + cout + co)
                        store16(relu6 ? clamp6(a2) : a2, outP + 2 * cout + co)
                        store16(relu6 ? clamp6(a3) : a3, outP + 3 * cout + co)
                        co += 16
                    }
                    ox += 4
                    continue
                }
                while co < c16 {
                    var acc = load16(bias + co)
                    for ky in kyLo..<kyHi {
                        for kx in kxLo..<kxHi {
                            let px = inImage + ((iy0 + ky) * w + ix0 + kx) * cin
                            let wp = weights + ((ky * k + kx) * cin) * cout + co
                            for ci in 0..<cin { acc += SIMD16<Float>(repeating: px[ci]) * load16(wp + ci * cout) }
                        }
                    }
                    store16(relu6 ? clamp6(acc) : acc, outP + co)
                    co += 16
                }
                while co < cout {
                    var acc = bias[co]
                    for ky in kyLo..<kyHi {
                        for kx in kxLo..<kxHi {
                            let px = inImage + ((iy0 + ky) * w + ix0 + kx) * cin
                            let wp = weights + ((ky * k + kx) * cin) * cout + co
                            for ci in 0..<cin { acc += px[ci] * wp[ci * cout] }
                        }
                    }
                    outP[co] = relu6 ? min(max(acc, 0), 6) : acc
                    co += 1
                }
                ox += 1
            }
        }
    }
}

/// Eight stride-apart outputs x 32 output channels of a dense convolution whose windows lie inside the image:
/// `pixels` is the top-left input pixel of the first window. Adds bias, then taps in (ky, kx, ci) order.
@_transparent
func denseTile8x32(pixels: UnsafePointer<Float>, pixelStride: Int, rowStride: Int, cin: Int, kernel k: Int,
                   weights: UnsafePointer<Float>, cout: Int, bias: UnsafePointer<Float>, relu6: Bool,
                   out: UnsafeMutablePointer<Float>) {
    let b0 = load16(bias), b1 = load16(bias + 16)
    var a0_0 = b0, a0_1 = b1
    var a1_0 = b0, a1_1 = b1
    var a2_0 = b0, a2_1 = b1
    var a3_0 = b0, a3_1 = b1
    var a4_0 = b0, a4_1 = b1
    var a5_0 = b0, a5_1 = b1
    var a6_0 = b0, a6_1 = b1
    var a7_0 = b0, a7_1 = b1
    for ky in 0..<k {
        for kx in 0..<k {
            let px = pixels + ky * rowStride + kx * cin
            let wp = weights + ((ky * k + kx) * cin) * cout
            for ci in 0..<cin {
                let w0 = load16(wp + ci * cout), w1 = load16(wp + ci * cout + 16)
                let x0 = SIMD16<Float>(repeating: px[0 * pixelStride + ci])
                a0_0 += x0 * w0; a0_1 += x0 * w1
                let x1 = SIMD16<Float>(repeating: px[1 * pixelStride + ci])
                a1_0 += x1 * w0; a1_1 += x1 * w1
                let x2 = SIMD16<Float>(repeating: px[2 * pixelStride + ci])
                a2_0 += x2 * w0; a2_1 += x2 * w1
                let x3 = SIMD16<Float>(repeating: px[3 * pixelStride + ci])
                a3_0 += x3 * w0; a3_1 += x3 * w1
                let x4 = SIMD16<Float>(repeating: px[4 * pixelStride + ci])
                a4_0 += x4 * w0; a4_1 += x4 * w1
                let x5 = SIMD16<Float>(repeating: px[5 * pixelStride + ci])
                a5_0 += x5 * w0; a5_1 += x5 * w1
                let x6 = SIMD16<Float>(repeating: px[6 * pixelStride + ci])
                a6_0 += x6 * w0; a6_1 += x6 * w1
                let x7 = SIMD16<Float>(repeating: px[7 * pixelStride + ci])
                a7_0 += x7 * w0; a7_1 += x7 * w1
            }
        }
    }
    store16(relu6 ? clamp6(a0_0) : a0_0, out + 0 * cout); store16(relu6 ? clamp6(a0_1) : a0_1, out + 0 * cout + 16)
    store16(relu6 ? clamp6(a1_0) : a1_0, out + 1 * cout); store16(relu6 ? clamp6(a1_1) : a1_1, out + 1 * cout + 16)
    store16(relu6 ? clamp6(a2_0) : a2_0, out + 2 * cout); store16(relu6 ? clamp6(a2_1) : a2_1, out + 2 * cout + 16)
    store16(relu6 ? clamp6(a3_0) : a3_0, out + 3 * cout); store16(relu6 ? clamp6(a3_1) : a3_1, out + 3 * cout + 16)
    store16(relu6 ? clamp6(a4_0) : a4_0, out + 4 * cout); store16(relu6 ? clamp6(a4_1) : a4_1, out + 4 * cout + 16)
    store16(relu6 ? clamp6(a5_0) : a5_0, out + 5 * cout); store16(relu6 ? clamp6(a5_1) : a5_1, out + 5 * cout + 16)
    store16(relu6 ? clamp6(a6_0) : a6_0, out + 6 * cout); store16(relu6 ? clamp6(a6_1) : a6_1, out + 6 * cout + 16)
    store16(relu6 ? clamp6(a7_0) : a7_0, out + 7 * cout); store16(relu6 ? clamp6(a7_1) : a7_1, out + 7 * cout + 16)
}

/// Mean over H x W for each image and channel: NHWC in, N x C out.
func globalAveragePool(input: UnsafePointer<Float>, batch: Int, pixels: Int, channels ch: Int,
                       output: UnsafeMutablePointer<Float>) {
    let c16 = ch / 16 * 16
    let scale = 1 / Float(pixels)
    for b in 0..<batch {
        let img = input + b * pixels * ch
        let out = output + b * ch
        var c = 0
        while c < c16 {
            var acc = SIMD16<Float>(repeating: 0)
            for p in 0..<pixels { acc += load16(img + p * ch + c) }
            store16(acc * scale, out + c)
            c += 16
        }
        while c < ch {
            var acc: Float = 0
            for p in 0..<pixels { acc += img[p * ch + c] }
            out[c] = acc * scale
            c += 1
        }
    }
}

/// LLVM's prefetch intrinsic (Swift has no prefetch of its own): read, keep in all cache levels, data cache.
/// A hint only; addresses past the end of a buffer are allowed and never fault.
@_silgen_name("llvm.prefetch.p0")
func llvmPrefetch(_ address: UnsafeRawPointer, _ readWrite: Int32, _ locality: Int32, _ cacheType: Int32)

/// Under ThreadSanitizer the compiler emits calls as `invoke`, which LLVM refuses for this intrinsic (the module
/// fails to verify), so `tools/sanitize/run tsan` builds with `-DFOODMOMENT_NO_PREFETCH` and the hint is dropped.
@_transparent func prefetchForRead(_ p: UnsafePointer<Float>) {
    #if !FOODMOMENT_NO_PREFETCH
    llvmPrefetch(UnsafeRawPointer(p), 0, 3, 1)
    #endif
}

