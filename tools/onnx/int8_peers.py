#!/usr/bin/env python3
"""The reduced-precision engines a user could pick instead of FoodMoment's backbone, timed like ort_bench.py.

The same EfficientNet-Lite0 graph as ort_bench.py (export_onnx.py), then:
  * onnxruntime FP32;
  * onnxruntime INT8: a QDQ model from onnxruntime.quantization.quantize_static (weights per output channel, signed
    8-bit; activations unsigned 8-bit, MinMax calibration on --calibration photos, which must be training photos);
  * OpenVINO FP32, OpenVINO BF16 (INFERENCE_PRECISION_HINT bf16) and OpenVINO INT8 (the same QDQ model: OpenVINO
    runs its quantised layers in INT8).
Each on one thread: --warmup then --runs single-image inferences of the reference input; nearest-rank p50. Also how
often each engine's ImageNet top-1 agrees with FP32 onnxruntime on --agreement photos (none of them calibration ones).
Prints one JSON object per engine on stdout (one line each).

usage: int8_peers.py --safetensors W --input input_224.f32 --calibration TRAIN_DIR --agreement DEV_DIR
                     [--calibration-photos 128] [--agreement-photos 200] [--runs 50] [--warmup 10]
"""
import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def photos(folder, count):
    """Every label's photos in name order, taken round-robin across labels, so a prefix spans all labels."""
    labels = sorted(d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d)))
    per = [sorted(os.path.join(folder, l, f) for f in os.listdir(os.path.join(folder, l)) if f.lower().endswith('.jpg'))
           for l in labels]
    out, i = [], 0
    while len(out) < count and any(i < len(p) for p in per):
        out += [p[i] for p in per if i < len(p)]
        i += 1
    return out[:count]


def tensor(path):
    """FoodMoment's whole-photo input: 224x224 stretch, (v - 127) / 128, NCHW."""
    from PIL import Image
    rgb = Image.open(path).convert('RGB').resize((224, 224), Image.BILINEAR)
    x = (np.asarray(rgb, dtype=np.float32) - 127) / 128
    return np.ascontiguousarray(x.transpose(2, 0, 1)[None])


def percentile(times, p):
    s = sorted(times)
    return s[max(0, min(len(s) - 1, int(np.ceil(p * len(s))) - 1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--safetensors', required=True)
    ap.add_argument('--input', required=True)
    ap.add_argument('--calibration', required=True)
    ap.add_argument('--agreement', required=True)
    ap.add_argument('--calibration-photos', type=int, default=128)
    ap.add_argument('--agreement-photos', type=int, default=200)
    ap.add_argument('--runs', type=int, default=50)
    ap.add_argument('--warmup', type=int, default=10)
    ap.add_argument('--dump', help='write the agreement inputs (NHWC float32, one after another) to DUMP.f32 and '
                                   'onnxruntime FP32\'s top-1 of each to DUMP.json, for `foodmoment dev bench --peers`')
    args = ap.parse_args()

    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType, quantize_static)
    from export_onnx import build, load_safetensors

    model = build(load_safetensors(args.safetensors), 224)
    tmp = tempfile.mkdtemp(prefix='fm-int8-')
    fp32_path, qdq_path = os.path.join(tmp, 'lite0.onnx'), os.path.join(tmp, 'lite0-qdq.onnx')
    onnx.save(model, fp32_path)

    calibration = photos(args.calibration, args.calibration_photos)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.items = iter(calibration)

        def get_next(self):
            p = next(self.items, None)
            return None if p is None else {'input': tensor(p)}

    quantize_static(fp32_path, qdq_path, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)

    def ort_session(path):
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        s = ort.InferenceSession(path, opts, providers=['CPUExecutionProvider'])
        return lambda x: s.run(['logits'], {'input': x})[0]

    engines = [('onnxruntime fp32', ort.__version__, ort_session(fp32_path)),
               ('onnxruntime int8 (QDQ)', ort.__version__, ort_session(qdq_path))]
    try:
        import openvino as ov
        core = ov.Core()

        def ov_model(path, precision):
            compiled = core.compile_model(core.read_model(path), 'CPU', {
                'INFERENCE_NUM_THREADS': 1, 'PERFORMANCE_HINT': 'LATENCY', 'NUM_STREAMS': 1,
                'INFERENCE_PRECISION_HINT': precision})
            request = compiled.create_infer_request()
            out = compiled.output('logits')
            return lambda x: request.infer({'input': x})[out]

        engines += [('openvino fp32', ov.__version__, ov_model(fp32_path, 'f32')),
                    ('openvino bf16', ov.__version__, ov_model(fp32_path, 'bf16')),
                    ('openvino int8 (QDQ)', ov.__version__, ov_model(qdq_path, 'f32'))]
    except ImportError:
        print(json.dumps({'engine': 'openvino', 'note': 'not installed (pip install openvino)'}))

    x = np.fromfile(args.input, dtype='<f4').reshape(1, 224, 224, 3).transpose(0, 3, 1, 2).copy()
    agreement = [p for p in photos(args.agreement, args.agreement_photos)]
    inputs = [tensor(p) for p in agreement]
    reference = [int(np.argmax(engines[0][2](t))) for t in inputs]
    if args.dump:
        np.concatenate([t.transpose(0, 2, 3, 1).ravel() for t in inputs]).astype('<f4').tofile(args.dump + '.f32')
        with open(args.dump + '.json', 'w') as f:
            json.dump({'top1': reference, 'photos': agreement}, f)
    for name, version, run in engines:
        for _ in range(args.warmup):
            run(x)
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            run(x)
            times.append((time.perf_counter() - t0) * 1000)
        agree = sum(int(np.argmax(run(t))) == r for t, r in zip(inputs, reference))
        print(json.dumps({'engine': name, 'version': version, 'median_ms': round(percentile(times, 0.5), 3),
                          'min_ms': round(min(times), 3), 'runs': args.runs,
                          'top1_agreement_with_ort_fp32': round(agree / max(1, len(inputs)), 4),
                          'agreement_photos': len(inputs), 'calibration_photos': len(calibration)}), flush=True)


if __name__ == '__main__':
    main()
