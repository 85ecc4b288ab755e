#!/usr/bin/env python3
"""Builds EfficientNet-Lite0 as an ONNX graph from the safetensors weights (onnx.helper, no torch).

The same network as FoodVision's runtime: NCHW, BatchNorm folded into the convolutions (eps 1e-3),
TF "SAME" padding written out as explicit asymmetric pads (extra pixel bottom/right), ReLU6 as Clip(0, 6),
residual Add, GlobalAveragePool, Gemm for the classifier. Outputs `logits` [N,1000] and `features` [N,1280].

usage: export_onnx.py WEIGHTS.safetensors OUT.onnx [--size 224]
"""
import json
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

EPS = 1e-3
# (repeats, kernel, stride, expand, in, out)
CFG = [(1, 3, 1, 1, 32, 16), (2, 3, 2, 6, 16, 24), (2, 5, 2, 6, 24, 40), (3, 3, 2, 6, 40, 80),
       (3, 5, 1, 6, 80, 112), (4, 5, 2, 6, 112, 192), (1, 3, 1, 6, 192, 320)]


def load_safetensors(path):
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for k, v in header.items():
        if k == '__metadata__':
            continue
        assert v['dtype'] == 'F32', (k, v['dtype'])
        b, e = v['data_offsets']
        out[k] = np.frombuffer(data[b:e], dtype='<f4').reshape(v['shape']).astype(np.float32)
    return out


def same_pads(n, k, s):
    out = -(-n // s)
    total = max((out - 1) * s + k - n, 0)
    return out, total // 2, total - total // 2


class Builder:
    def __init__(self, sd):
        self.sd, self.nodes, self.inits, self.count = sd, [], [], 0

    def name(self, base):
        self.count += 1
        return f'{base}_{self.count}'

    def const(self, base, array):
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array.astype(np.float32)), n))
        return n

    def folded(self, weight, bn):
        sd = self.sd
        g, b, m, v = (sd[bn + '.weight'].astype(np.float64), sd[bn + '.bias'].astype(np.float64),
                      sd[bn + '.running_mean'].astype(np.float64), sd[bn + '.running_var'].astype(np.float64))
        s = g / np.sqrt(v + EPS)
        w = sd[weight].astype(np.float64) * s.reshape(-1, *([1] * (sd[weight].ndim - 1)))
        return w.astype(np.float32), (b - m * s).astype(np.float32)

    def conv(self, x, weight, bn, hw, k, s, group=1, relu6=True):
        w, b = self.folded(weight, bn)
        (oh, pt, pb), (ow, pl, pr) = same_pads(hw[0], k, s), same_pads(hw[1], k, s)
        y = self.name('conv')
        self.nodes.append(helper.make_node('Conv', [x, self.const('w', w), self.const('b', b)], [y],
                                           kernel_shape=[k, k], strides=[s, s], pads=[pt, pl, pb, pr], group=group))
        if relu6:
            r = self.name('relu6')
            self.nodes.append(helper.make_node('Clip', [y, self.lo, self.hi], [r]))
            y = r
        return y, (oh, ow)


def build(sd, size=224):
    bld = Builder(sd)
    bld.lo = bld.const('zero', np.array(0, np.float32))
    bld.hi = bld.const('six', np.array(6, np.float32))
    x, hw = bld.conv('input', '_conv_stem.weight', '_bn0', (size, size), 3, 2)
    bi = 0
    for r, k, s, e, cin, cout in CFG:
        for rep in range(r):
            st = s if rep == 0 else 1
            inp = cin if rep == 0 else cout
            p = f'_blocks.{bi}.'
            block_in = x
            if e != 1:
                x, _ = bld.conv(x, p + '_expand_conv.weight', p + '_bn0', hw, 1, 1)
            x, hw = bld.conv(x, p + '_depthwise_conv.weight', p + '_bn1', hw, k, st, group=inp * e)
            x, _ = bld.conv(x, p + '_project_conv.weight', p + '_bn2', hw, 1, 1, relu6=False)
            if st == 1 and inp == cout:
                y = bld.name('add')
                bld.nodes.append(helper.make_node('Add', [x, block_in], [y]))
                x = y
            bi += 1
    x, hw = bld.conv(x, '_conv_head.weight', '_bn1', hw, 1, 1)
    pooled = bld.name('pool')
    bld.nodes.append(helper.make_node('GlobalAveragePool', [x], [pooled]))
    bld.nodes.append(helper.make_node('Flatten', [pooled], ['features'], axis=1))
    bld.nodes.append(helper.make_node('Gemm', ['features', bld.const('fc_w', sd['_fc.weight']),
                                               bld.const('fc_b', sd['_fc.bias'])], ['logits'], transB=1))
    graph = helper.make_graph(
        bld.nodes, 'efficientnet_lite0',
        [helper.make_tensor_value_info('input', TensorProto.FLOAT, ['N', 3, size, size])],
        [helper.make_tensor_value_info('logits', TensorProto.FLOAT, ['N', 1000]),
         helper.make_tensor_value_info('features', TensorProto.FLOAT, ['N', 1280])],
        bld.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)], producer_name='foodmoment-export_onnx')
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    size = int(argv[argv.index('--size') + 1]) if '--size' in argv else 224
    model = build(load_safetensors(argv[0]), size)
    onnx.save(model, argv[1])
    print(json.dumps({'onnx': argv[1], 'nodes': len(model.graph.node), 'size': size}))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
