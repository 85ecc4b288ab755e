#!/usr/bin/env python3
"""Per-node profile of EfficientNet-Lite0 in onnxruntime (1 intra-op thread), to set beside `foodmoment dev bench --layers --per-layer`.

Builds the same graph as ort_bench.py (export_onnx.py), runs --runs inferences with SessionOptions.enable_profiling,
and prints each node's fastest run in network order (microseconds, op, input and weight shapes), then the total of
those minimums and the total per op type. Profile files go to a temporary directory.

usage: ort_profile.py --safetensors ../shared/data/weights/efficientnet_lite0.safetensors [--size 224] [--runs 40]
"""
import argparse
import collections
import json
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--safetensors', required=True)
    ap.add_argument('--size', type=int, default=224)
    ap.add_argument('--runs', type=int, default=40)
    args = ap.parse_args()

    import onnxruntime as ort
    from export_onnx import build, load_safetensors

    model = build(load_safetensors(args.safetensors), args.size)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.enable_profiling = True
    opts.profile_file_prefix = os.path.join(tempfile.mkdtemp(), 'ort_profile')
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=['CPUExecutionProvider'])
    x = np.random.default_rng(0).random((1, 3, args.size, args.size), dtype=np.float32)
    for _ in range(args.runs):
        sess.run(None, {'input': x})
    with open(sess.end_profiling()) as f:
        events = json.load(f)

    times = collections.defaultdict(list)
    info = {}
    order = []
    for e in events:
        if e.get('cat') != 'Node' or not e['name'].endswith('_kernel_time'):
            continue
        name = e['name']
        if name not in info:
            order.append(name)
            a = e['args']
            shapes = [list(s.values())[0] for s in a.get('input_type_shape', [])][:2]
            info[name] = (a.get('op_name', '?'), shapes)
        times[name].append(e['dur'])
    per_op = collections.defaultdict(int)
    for name in order:
        op, shapes = info[name]
        best = min(times[name])
        per_op[op] += best
        print(f'{best:7d} us  {op:18s} {shapes}')
    print(f'total of per-node minimums: {sum(per_op.values())} us;',
          ', '.join(f'{op} {t} us' for op, t in sorted(per_op.items(), key=lambda kv: -kv[1])))
    return 0


if __name__ == '__main__':
    sys.exit(main())
