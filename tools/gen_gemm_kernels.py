#!/usr/bin/env python3
"""Generates Sources/FoodVision/GemmMicroKernels.swift: register-tiled SGEMM micro-kernels.

Each kernel keeps an MR x (NV * lanes) tile of C in SIMD registers and walks K once, broadcasting one
A value per row and loading NV vectors of a packed B panel per k step. Written out by a script because
16 accumulators by hand invite typos. Run: python3 tools/gen_gemm_kernels.py --output Sources/FoodVision/GemmMicroKernels.swift
"""
from generated_swift import emit as emit_to, header

TOOL = "tools/gen_gemm_kernels.py"
TARGET = "Sources/FoodVision/GemmMicroKernels.swift"
HEADER = header(TOOL, TARGET)


def emit(text):
    emit_to(text, TOOL, TARGET)


VARIANTS = [  # (MR, lanes, NV): MR rows x NV vectors of SIMD<lanes>
    # Full tiles, their half-width versions (a last panel of N % columns <= columns / 2), and the one-row
    # companions of both (the last rows of M, and M = 1 classifiers).
    (8, 16, 2), (8, 16, 1), (1, 16, 2), (1, 16, 1),  # GemmKernel.tile8x32 (AVX-512)
    (4, 16, 2), (4, 16, 1), (5, 16, 2), (5, 16, 1),  # its 4- to 7-row tails (8+ accumulators still hide FMA
    (6, 16, 2), (6, 16, 1), (7, 16, 2), (7, 16, 1),  # latency): M = 49 runs as 5 x 8 + 5 + 4 rows, not 6 x 8 + 1
    (6, 8, 2), (6, 8, 1), (1, 8, 2), (1, 8, 1),      # GemmKernel.tile6x16 (AVX2)
    (6, 4, 2), (6, 4, 1), (1, 4, 2), (1, 4, 1),      # GemmKernel.tile6x8 (SSE2)
]
# Fused multiply-add versions of the AVX-512 tile (GemmKernel.tile8x32fma). Only fast when the build targets
# a CPU with FMA (FOODMOMENT_TARGET_CPU); otherwise each lane is a libm fmaf call and the kernel measurement
# never picks them. One rounding per multiply-add, so their results differ from the others in the last bits.
FMA_VARIANTS = [(8, 16, 2), (8, 16, 1), (1, 16, 2), (1, 16, 1)] + [(r, 16, v) for r in (4, 5, 6, 7) for v in (2, 1)]
# And of the narrower tiles (GemmKernel.tile6x16fma, tile6x8fma), for CPUs with FMA but no AVX-512 (Haswell to Zen 3):
# there a separate multiply and add cost twice the micro-ops of one FMA, which the front end, not the FP pipes, runs out of.
FMA_VARIANTS += [(6, 8, 2), (6, 8, 1), (1, 8, 2), (1, 8, 1), (6, 4, 2), (6, 4, 1), (1, 4, 2), (1, 4, 1)]
# A 12 x 32 tile (24 accumulators) was tried and ran at ~40 % of the 8 x 32 tile's speed (register spills).

out = []
w = out.append
w(HEADER)
w("")
for mr, lanes, nv, fma in [v + (False,) for v in VARIANTS] + [v + (True,) for v in FMA_VARIANTS]:
    name = f"{mr}x{lanes}x{nv}" + ("fma" if fma else "")
    V = f"SIMD{lanes}<Float>"
    nr = lanes * nv
    w(f"/// C[{mr}x{nr}] = (bias or C) + A[{mr}xkc] * Bpanel[kcx{nr}], then (+ residual), then optional ReLU6.")
    w("@inline(__always)")
    w(f"func gemmMicro{name}(kc: Int, a: UnsafePointer<Float>, lda: Int, b: UnsafePointer<Float>,")
    w(f"                     c: UnsafeMutablePointer<Float>, ldc: Int, bias: UnsafePointer<Float>?,")
    w(f"                     residual: UnsafePointer<Float>?, ldr: Int, relu6: Bool) {{")
    w(f"    typealias V = {V}")
    prefetch = lanes == 16 and mr >= 4
    for r in range(mr):
        w("    var " + ", ".join(f"c{r}_{v}: V" for v in range(nv)))
    w("    if let bias {")
    for v in range(nv):
        w(f"        let bias{v} = UnsafeRawPointer(bias + {v * lanes}).loadUnaligned(as: V.self)")
    for r in range(mr):
        w("        " + "; ".join(f"c{r}_{v} = bias{v}" for v in range(nv)))
    w("    } else {")
    for r in range(mr):
        w("        " + "; ".join(f"c{r}_{v} = UnsafeRawPointer(c + {r} * ldc + {v * lanes}).loadUnaligned(as: V.self)" for v in range(nv)))
    w("    }")
    for r in range(mr):
        w(f"    let a{r} = a + {r} * lda")
    if prefetch:
        w("    let pf = gemmPrefetchDistance")
    w("    var bp = b")
    w("    for k in 0..<kc {")
    for v in range(nv):
        w(f"        let b{v} = UnsafeRawPointer(bp + {v * lanes}).loadUnaligned(as: V.self)")
    if prefetch:
        for v in range(nv):
            w(f"        prefetchForRead(bp + pf + {v * lanes})")
    for r in range(mr):
        w(f"        let x{r} = V(repeating: a{r}[k])")
        if fma:
            w("        " + "; ".join(f"c{r}_{v}.addProduct(x{r}, b{v})" for v in range(nv)))
        else:
            w("        " + "; ".join(f"c{r}_{v} += x{r} * b{v}" for v in range(nv)))
    w(f"        bp += {nr}")
    w("    }")
    w("    if let residual {")
    for r in range(mr):
        w("        " + "; ".join(f"c{r}_{v} += UnsafeRawPointer(residual + {r} * ldr + {v * lanes}).loadUnaligned(as: V.self)" for v in range(nv)))
    w("    }")
    w("    if relu6 {")
    w("        // replacing(with:where:) vectorises; pointwiseMin/Max on SIMD types compile to scalar loops.")
    for r in range(mr):
        w("        " + "; ".join(f"c{r}_{v} = c{r}_{v}.replacing(with: 0, where: c{r}_{v} .< 0).replacing(with: 6, where: c{r}_{v} .> 6)" for v in range(nv)))
    w("    }")
    for r in range(mr):
        w("    " + "; ".join(f"UnsafeMutableRawPointer(c + {r} * ldc + {v * lanes}).storeBytes(of: c{r}_{v}, as: V.self)" for v in range(nv)))
    w("}")
    w("")
emit("\n".join(out) + "\n")
