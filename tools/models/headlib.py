"""What the food-head tools share (train-head, open-set, corrections-curve, vocabulary-table): the embedding cache
`foodmoment dev train --cache` writes, the order of the training folder it was made from, the Adam softmax fit, the
low-resolution map, and the folds of labels left out of training."""
import json, os, sys
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Labels never left out of a fold (besides the kinds): the thali kinds, trained from plate crops.
THALI_KINDS = ("accompaniment,bread_or_roti_naan,curry_dish,dal_or_sambar,drink,dry_vegetable,eggs,fish_dish,fruits,"
               "pasta,rice_dish,salad,snack_item,soup,south_indian_breakfast,sweet_item")


def load_cache(path):
    """(embeddings [n × d] float32, label per embedding) from `foodmoment dev train --cache FILE`."""
    raw = np.fromfile(path, dtype=np.uint8)
    n, d = np.frombuffer(raw[:8].tobytes(), dtype=np.uint32)
    x = np.frombuffer(raw[8:].tobytes(), dtype=np.float32).reshape(int(n), int(d))
    return x, json.load(open(path + ".labels.json"))


def sample_paths(data):
    """The order `TrainingSet.folders` walks a training folder (labels sorted, files sorted): (label, file name)."""
    out = []
    for label in sorted(os.listdir(data)):
        p = os.path.join(data, label)
        if label.startswith(".") or not os.path.isdir(p):
            continue
        for f in sorted(os.listdir(p)):
            if not f.startswith("."):
                out.append((label, f))
    return out


def is_low_res(name):
    """A Food-101 thumbnail or a 64 px copy (the names `tools/data/training-photos rebuild` gives them)."""
    return name.startswith("food101_thumbs_") or name.startswith("lowres")


def fnv1a(s):
    """FNV-1a 64 of the UTF-8 bytes, as `SplitMix64.fnv1a` (dev fold and hold-out choices)."""
    h = 0xcbf29ce484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def parents():
    """Each dish's kind, from tools/nutrition/make_labels.py."""
    sys.path.insert(0, os.path.join(ROOT, "tools", "nutrition"))
    import make_labels
    return dict(make_labels.PARENTS)


def read_low_res_map(path):
    """The (d + 1) × d matrix of a low-res-map.json (`train-head --map-low-res`)."""
    meta = json.load(open(path))
    return np.fromfile(os.path.join(os.path.dirname(path), meta["weightsFile"]), "<f4").reshape(meta["dimension"] + 1, -1)


def apply_low_res_map(x, m):
    """Standardised embeddings [n × d] read through the map: [x, 1] · m."""
    return np.hstack([x, np.ones((len(x), 1), np.float32)]) @ m


def photo_embeddings(cache, data, views=2, low_res_map=None):
    """The folder's photos' embeddings from its cache: (standardised [photos × views × d], as stored, label per photo,
    file name per photo, full-size mask); thumbnails and 64 px copies read through the map when one is given."""
    x, labels = load_cache(cache)
    paths = sample_paths(data)
    assert len(labels) >= len(paths) * views, "the cache does not come from this folder"
    for i, (label, _) in enumerate(paths):
        assert labels[i * views] == label, f"cache and folder disagree at photo {i}: {labels[i * views]} vs {label}"
    raw = x[: len(paths) * views].reshape(len(paths), views, -1)
    names = [f for _, f in paths]
    full = np.array([not is_low_res(f) for f in names])
    flat = raw.reshape(-1, raw.shape[-1])
    xs = ((raw - flat.mean(0)) / (flat.std(0) + 1e-6)).astype(np.float32)
    if low_res_map:
        xs[~full] = apply_low_res_map(xs[~full].reshape(-1, xs.shape[-1]), read_low_res_map(low_res_map)).reshape(-1, views, xs.shape[-1])
    return xs, raw, np.array([l for l, _ in paths]), names, full


def label_folds(all_labels, folds, keep_taught=THALI_KINDS):
    """Which fold leaves each label out: every label but the kinds (the parents and `keep_taught`), which stay taught
    as the answers a never-taught dish may fall back to; a seeded shuffle dealt round the folds."""
    generic = set(parents().values()) | set(keep_taught.split(","))
    dishes = sorted(l for l in all_labels if l not in generic)
    return dishes, {l: i % folds for i, l in enumerate(np.random.default_rng(7).permutation(dishes))}


def held_out_photos(names):
    """15 % of the photos, by a hash of the file name: the known photos every fold is scored on."""
    return np.array([fnv1a(f) % 100 < 15 for f in names])


def train_softmax(x, y, classes, l2=0.01, epochs=12, lr=3e-4, batch=256, seed=1, weight=None, init=None, trainable=None,
                  after_epoch=None):
    """A softmax head fitted with Adam on standardised embeddings, as `SoftmaxHead.train` fits it (mini-batches in a
    seeded order, L2 on the weights). `weight`: per-example weights (each batch's gradient scaled by weight / its
    mean); `init`: (w [d × classes], b) to start from; `trainable`: classes whose rows move (the others stay as
    `init` has them); `after_epoch(epoch, w, b)` is called after each epoch. Returns (w, b)."""
    rng = np.random.default_rng(seed)
    n, d = x.shape
    if init is None:
        w = np.zeros((d, classes), np.float32); b = np.zeros(classes, np.float32)
    else:
        w, b = init[0].copy(), init[1].copy()
    mw = np.zeros_like(w); vw = np.zeros_like(w); mb = np.zeros_like(b); vb = np.zeros_like(b)
    t = 0
    for epoch in range(1, epochs + 1):
        order = rng.permutation(n)
        for s in range(0, n, batch):
            idx = order[s:s + batch]
            z = x[idx] @ w + b
            z -= z.max(1, keepdims=True)
            p = np.exp(z); p /= p.sum(1, keepdims=True)
            p[np.arange(len(idx)), y[idx]] -= 1
            if weight is not None:
                p *= weight[idx, None] / weight[idx].mean()
            gw = x[idx].T @ p / len(idx) + l2 * w
            gb = p.mean(0)
            if trainable is not None:
                gw[:, ~trainable] = 0; gb[~trainable] = 0
            t += 1
            for (prm, g, m, v) in ((w, gw, mw, vw), (b, gb, mb, vb)):
                m *= 0.9; m += 0.1 * g
                v *= 0.999; v += 0.001 * g * g
                prm -= lr * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
        if after_epoch:
            after_epoch(epoch, w, b)
    return w, b
