#!/usr/bin/env python3
"""The best Python peer of FoodMoment's stage 1, for the side-by-side figure in tools/stage1-vs-peer.

For each JPEG of a folder, one after another on one thread: simplejpeg's DCT-scaled decode (the smallest scale whose
shorter side is >= 224, as libjpeg-turbo's scale_denom gives), a resize to 224x224 (Pillow's bilinear on the scaled
image), ImageNet normalisation and EfficientNet-Lite0 in onnxruntime (1 intra-op thread, all graph optimisations) on
the same weights FoodMoment ships. It only classifies (no localisation, no grams). Prints one JSON line:
photos, mean_ms (the whole loop / photos), median_ms, startup_s (graph build + session).

usage: peer_stage1.py --safetensors W.safetensors FOLDER
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--safetensors', required=True)
    ap.add_argument('folder')
    args = ap.parse_args()

    t0 = time.perf_counter()
    import onnxruntime as ort
    import simplejpeg
    from PIL import Image
    from export_onnx import build, load_safetensors

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(build(load_safetensors(args.safetensors), 224).SerializeToString(), opts,
                                   providers=['CPUExecutionProvider'])
    mean = np.array([0.485, 0.456, 0.406], dtype=np.float32) * 255
    std = np.array([0.229, 0.224, 0.225], dtype=np.float32) * 255
    startup = time.perf_counter() - t0

    files = sorted(os.path.join(args.folder, f) for f in os.listdir(args.folder) if f.lower().endswith(('.jpg', '.jpeg')))
    times = []
    top = []
    start = time.perf_counter()
    for path in files:
        t = time.perf_counter()
        with open(path, 'rb') as f:
            data = f.read()
        rgb = simplejpeg.decode_jpeg(data, colorspace='RGB', min_height=224, min_width=224)
        rgb = np.asarray(Image.fromarray(rgb).resize((224, 224), Image.BILINEAR), dtype=np.float32)
        x = ((rgb - mean) / std).transpose(2, 0, 1)[None]
        logits = session.run(['logits'], {'input': np.ascontiguousarray(x)})[0]
        top.append(int(logits[0].argmax()))
        times.append((time.perf_counter() - t) * 1000)
    total = time.perf_counter() - start
    print(json.dumps({'photos': len(files), 'mean_ms': round(total * 1000 / max(1, len(files)), 2),
                      'median_ms': round(statistics.median(times), 2) if times else None,
                      'startup_s': round(startup, 3), 'onnxruntime': ort.__version__,
                      'simplejpeg': simplejpeg.__version__}))


if __name__ == '__main__':
    main()
