#!/usr/bin/env python3
"""Generates Sources/FoodVision/DepthwiseRowKernels.swift: depthwise k x k row kernels for one 16-channel
chunk: several outputs per step, each input vector of a kernel row loaded once and shared by the outputs
that use it, the row's k weight vectors loaded once per step. Run:
python3 tools/gen_depthwise_kernels.py --output Sources/FoodVision/DepthwiseRowKernels.swift
"""
from generated_swift import emit as emit_to, header

TOOL = "tools/gen_depthwise_kernels.py"
TARGET = "Sources/FoodVision/DepthwiseRowKernels.swift"
HEADER = header(TOOL, TARGET)


def emit(text):
    emit_to(text, TOOL, TARGET)


SHAPES = [(3, 1, 8), (3, 2, 8), (5, 1, 8), (5, 2, 8)]  # (kernel, stride, outputs per step)

# Holding all k*k weights in registers for the row (an earlier version) limited a step to 2-4 outputs,
# too few chains to hide the multiply-add latency; 6/3 and 8/4 outputs spilled.

out = []
w = out.append
w(HEADER)
w("")
for k, s, u in SHAPES:
    w(f"/// Depthwise {k}x{k} stride {s}: outputs `oxStart..<oxEnd` of one row for the 16 channels at `rows`")
    w("/// (input row `iy0`, column 0, first channel of the chunk); every tap must lie inside the input. Input pixels")
    w("/// are `inCh` floats apart (`ch`, or 16 in a one-chunk padded copy); weights and outputs `ch` apart.")
    w(f"/// Up to {u} outputs per step: independent accumulator chains hide the multiply-add latency.")
    w("@inline(__always)")
    w(f"func depthwiseRow{k}s{s}(rows: UnsafePointer<Float>, rowStride: Int, inCh: Int, ch: Int, ixOffset: Int,")
    w("                       weights: UnsafePointer<Float>, bias biasPointer: UnsafePointer<Float>, oxStart: Int, oxEnd: Int,")
    w("                       relu6: Bool, out: UnsafeMutablePointer<Float>) {")
    w("    // Loaded here rather than passed as a vector: a SIMD16 argument arrives in four xmm registers, and LLVM then")
    w("    // kept every accumulator as two 8-lane halves (half the multiply-adds per instruction).")
    w("    let bias = load16(biasPointer)")
    w("    var ox = oxStart")
    steps = [v for v in (8, 4, 2, 1) if v <= u]
    for v in steps:
        loop = "while" if v in (u, 1) else "if"
        w(f"    {loop} ox + {v} <= oxEnd {{")
        w(f"        let base = rows + (ox * {s} + ixOffset) * inCh")
        w("        " + "; ".join(f"var a{j} = bias" for j in range(v)))
        for ky in range(k):
            w("        do {")
            w(f"            let r = base + {ky} * rowStride")
            w("            " + "; ".join(f"let w{kx} = load16(weights + {ky * k + kx} * ch)" for kx in range(k)))
            for o in sorted({kx + j * s for kx in range(k) for j in range(v)}):
                w(f"            let x{o} = load16(r + {o} * inCh)")
            for kx in range(k):
                w("            " + "; ".join(f"mac(&a{j}, x{kx + j * s}, w{kx})" for j in range(v)))
            w("        }")
        for j in range(v):
            w(f"        store16(relu6 ? clamp6(a{j}) : a{j}, out + (ox + {j}) * ch)")
        w(f"        ox += {v}")
        w("    }")
    w("}")
    w("")
emit("\n".join(out) + "\n")
