#!/usr/bin/env python3
"""NumPy reference forward of EfficientNet-Lite1 / Lite2 on the hot-dog fixture, for the Swift parity test.

usage: lite_reference.py WEIGHTS.safetensors ARCH OUTDIR      (ARCH: efficientnet-lite1 | efficientnet-lite2)

Same steps as ../shared/data/weights/reference/make_reference.py (whose Lite0 forward it reuses with the other block
table): the decoded hot_dog RGB (hot_dog_rgb_u8.raw, 384x512), centre square crop, bilinear half-pixel resize without
antialiasing to the architecture's input size, x = (v - 127) / 128, then the float64-free NumPy forward. Writes
OUTDIR/input.f32 (NHWC 1xSxSx3), logits.f32 (1000), features.f32 (1280) and reference.json (size, top-5)."""
import sys, os, json
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
shared_ref = os.environ.get('FOODMOMENT_WEIGHTS_REFERENCE',
                            os.path.join(here, '..', '..', '..', 'shared', 'data', 'weights', 'reference'))
sys.path.insert(0, shared_ref)
try:
    import PIL.Image  # noqa: F401
except ImportError:  # the reference module imports Pillow for its own photo loader, which is not used here
    import types
    sys.modules['PIL'] = types.ModuleType('PIL')
    sys.modules['PIL'].Image = None
import effnet_lite0_numpy as E  # noqa: E402  (forward, SAME padding, BatchNorm eps 1e-3)

# (repeats, kernel, stride, expand, in, out) per stage, as BackboneArchitecture.swift has them.
TABLES = {
    'efficientnet-lite1': (240, [(1, 3, 1, 1, 32, 16), (3, 3, 2, 6, 16, 24), (3, 5, 2, 6, 24, 40), (4, 3, 2, 6, 40, 80),
                                 (4, 5, 1, 6, 80, 112), (5, 5, 2, 6, 112, 192), (1, 3, 1, 6, 192, 320)]),
    'efficientnet-lite2': (260, [(1, 3, 1, 1, 32, 16), (3, 3, 2, 6, 16, 24), (3, 5, 2, 6, 24, 48), (4, 3, 2, 6, 48, 88),
                                 (4, 5, 1, 6, 88, 120), (5, 5, 2, 6, 120, 208), (1, 3, 1, 6, 208, 352)]),
}


def bilinear_half_pixel(a, out_h, out_w):
    H, W, C = a.shape
    a = a.astype(np.float64)

    def coords(n_out, n_in):
        s = np.clip((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0, n_in - 1)
        i0 = np.floor(s).astype(int)
        return i0, np.minimum(i0 + 1, n_in - 1), s - i0
    y0, y1, wy = coords(out_h, H)
    x0, x1, wx = coords(out_w, W)
    top = a[y0][:, x0] * (1 - wx)[None, :, None] + a[y0][:, x1] * wx[None, :, None]
    bot = a[y1][:, x0] * (1 - wx)[None, :, None] + a[y1][:, x1] * wx[None, :, None]
    return top * (1 - wy)[:, None, None] + bot * wy[:, None, None]


def main(weights, arch, outdir):
    size, table = TABLES[arch]
    E.CFG = table
    os.makedirs(outdir, exist_ok=True)
    rgb = np.fromfile(os.path.join(shared_ref, 'hot_dog_rgb_u8.raw'), np.uint8).reshape(384, 512, 3)
    crop = rgb[:, 64:448]
    x = ((bilinear_half_pixel(crop, size, size) - 127.0) / 128.0).astype(np.float32)
    x[None].astype('<f4').tofile(os.path.join(outdir, 'input.f32'))
    sd = E.load_weights(weights)
    logits, feats = E.forward(sd, np.ascontiguousarray(x.transpose(2, 0, 1)))
    logits.astype('<f4').tofile(os.path.join(outdir, 'logits.f32'))
    feats.astype('<f4').tofile(os.path.join(outdir, 'features.f32'))
    p = np.exp(logits - logits.max()); p /= p.sum()
    info = {'architecture': arch, 'size': size,
            'top5': [(int(i), float(logits[i]), float(p[i])) for i in np.argsort(-logits)[:5]]}
    json.dump(info, open(os.path.join(outdir, 'reference.json'), 'w'), indent=1)
    print(json.dumps(info))


if __name__ == '__main__':
    main(*sys.argv[1:4])
