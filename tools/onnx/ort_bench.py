#!/usr/bin/env python3
"""Times EfficientNet-Lite0 in onnxruntime (1 intra-op thread) on the reference input and checks its logits.

Builds the ONNX graph in memory with export_onnx.py (same folding and SAME padding as FoodVision), feeds
reference/input_224.f32 (NHWC, transposed to NCHW), compares with reference/logits.f32, then times
--warmup + --runs single-image inferences. Prints one JSON object on stdout (times in milliseconds).

usage: ort_bench.py --safetensors W.safetensors --input input_224.f32 --reference logits.f32 [--runs 50] [--warmup 10]
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--safetensors', required=True)
    ap.add_argument('--input', required=True)
    ap.add_argument('--reference', required=True)
    ap.add_argument('--runs', type=int, default=50)
    ap.add_argument('--warmup', type=int, default=10)
    ap.add_argument('--threads', type=int, default=1)
    args = ap.parse_args()

    import onnxruntime as ort
    from export_onnx import build, load_safetensors

    model = build(load_safetensors(args.safetensors), 224)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=['CPUExecutionProvider'])

    x = np.fromfile(args.input, dtype='<f4').reshape(1, 224, 224, 3).transpose(0, 3, 1, 2).copy()
    ref = np.fromfile(args.reference, dtype='<f4')
    logits = sess.run(['logits'], {'input': x})[0][0]
    diff = float(np.max(np.abs(logits - ref)))
    top5 = [int(i) for i in np.argsort(-logits)[:5]]
    top5_ref = [int(i) for i in np.argsort(-ref)[:5]]

    for _ in range(args.warmup):
        sess.run(['logits'], {'input': x})
    times = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        sess.run(['logits'], {'input': x})
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()

    def percentile(p):
        # Nearest rank, as foodmoment's own figures (DecodeBenchmark.percentile).
        return times[min(len(times) - 1, max(0, math.ceil(p * len(times)) - 1))]

    print(json.dumps({
        'engine': 'onnxruntime', 'version': ort.__version__, 'threads': args.threads, 'runs': args.runs,
        'median_ms': percentile(0.5), 'p95_ms': percentile(0.95),
        'min_ms': times[0], 'max_abs_logit_diff': diff, 'top5': top5, 'top5_matches_reference': top5 == top5_ref,
    }))
    return 0


if __name__ == '__main__':
    sys.exit(main())
