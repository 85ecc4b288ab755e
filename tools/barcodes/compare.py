#!/usr/bin/env python3
"""Compare our barcode reader with zxing-cpp and zbar on shared/data/barcodes.

Runs zxing-cpp (pip `zxing-cpp`), pyzbar (pip `pyzbar`, apt `libzbar0`) and `foodmoment barcode --json`
on every photo listed in expected.csv and prints, per set and decoder, how many photos were read (the expected
code among the results) and how many wrong codes were reported. Codes are compared as GTIN-14: UPC-A is
0-padded, UPC-E is expanded to UPC-A first, EAN-8 is kept (0-padded).

Peers run as in the data README: grayscale, rotation 0, default options. Photos that show a second genuine
barcode besides the expected one (the Japanese book in ean13-2, whose ISBN and price code are both printed)
do not count that second code as wrong, for any decoder.

Usage:
  pip install zxing-cpp pyzbar pillow && apt-get install libzbar0
  swift build -c release --product foodmoment
  python3 tools/barcodes/compare.py [--data ../shared/data/barcodes] [--foodmoment .build/release/foodmoment]
                                    [--show-misses] [--json]
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# Second genuine codes visible in a photo (checked by eye), as GTIN-14.
BOOK = {"09784872348880", "01920081045006"}
ALSO_PRINTED = {f"ean13-2/{n}.png": BOOK for n in (13, 14, 20, 23, 24)}


def check_digit(payload):
    total, weight = 0, 3
    for d in reversed(payload):
        total += d * weight
        weight = 4 - weight
    return (10 - total % 10) % 10


def expand_upce(code):
    """8-digit UPC-E -> 12-digit UPC-A (check digit kept)."""
    v = [int(c) for c in code]
    ns, d, check = v[0], v[1:7], v[7]
    if d[5] <= 2:
        body = [d[0], d[1], d[5], 0, 0, 0, 0, d[2], d[3], d[4]]
    elif d[5] == 3:
        body = [d[0], d[1], d[2], 0, 0, 0, 0, 0, d[3], d[4]]
    elif d[5] == 4:
        body = [d[0], d[1], d[2], d[3], 0, 0, 0, 0, 0, d[4]]
    else:
        body = [d[0], d[1], d[2], d[3], d[4], 0, 0, 0, 0, d[5]]
    return "".join(map(str, [ns] + body + [check]))


def canonical(fmt, text):
    """GTIN-14 of a decoded or expected code, or None when it is not an EAN/UPC number."""
    digits = "".join(c for c in text if c.isdigit())
    f = fmt.upper().replace("-", "_").replace(" ", "_")
    if f in ("UPC_E", "UPCE") and len(digits) == 8:
        digits = expand_upce(digits)
    if len(digits) not in (8, 12, 13, 14):
        return None
    return digits.zfill(14)


RETAIL_ZXING = {"EAN13", "EAN8", "UPCA", "UPCE"}
RETAIL_ZBAR = {"EAN13", "EAN8", "UPCA", "UPCE", "ISBN13"}


def run_zxing(path):
    import zxingcpp
    from PIL import Image

    img = Image.open(path).convert("L")
    out = []
    for r in zxingcpp.read_barcodes(img):
        name = getattr(r.format, "name", str(r.format).split(".")[-1])
        if name in RETAIL_ZXING:
            g = canonical(name, r.text)
            if g:
                out.append(g)
    return out


def run_zbar(path):
    from PIL import Image
    from pyzbar import pyzbar

    img = Image.open(path).convert("L")
    out = []
    for r in pyzbar.decode(img):
        if r.type in RETAIL_ZBAR:
            g = canonical(r.type, r.data.decode("ascii", "replace"))
            if g:
                out.append(g)
    return out


def run_ours(path, binary):
    p = subprocess.run([binary, "barcode", path, "--json"], capture_output=True, text=True, timeout=120)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"foodmoment exited {p.returncode} on {path}: {p.stderr.strip()}")
    doc = json.loads(p.stdout)
    if doc.get("error"):
        raise RuntimeError(f"foodmoment could not read {path}: {doc['error']['message']}")
    return [c["gtin14"] for c in doc.get("codes", [])]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(os.path.dirname(REPO), "shared", "data", "barcodes"))
    ap.add_argument("--foodmoment", default=os.path.join(REPO, ".build", "release", "foodmoment"))
    ap.add_argument("--show-misses", action="store_true", help="list photos we miss and wrong codes")
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    args = ap.parse_args()

    decoders = []
    try:
        import zxingcpp  # noqa: F401
        decoders.append(("zxing-cpp", run_zxing))
    except ImportError:
        print("note: zxing-cpp not installed (pip install zxing-cpp); skipping it", file=sys.stderr)
    try:
        from pyzbar import pyzbar  # noqa: F401
        decoders.append(("zbar", run_zbar))
    except (ImportError, OSError) as e:
        print(f"note: pyzbar unavailable ({e}); pip install pyzbar, apt-get install libzbar0", file=sys.stderr)
    if not os.access(args.foodmoment, os.X_OK):
        sys.exit(f"error: {args.foodmoment} not found; build it with `swift build -c release --product foodmoment` "
                 "or pass --foodmoment")
    decoders.append(("foodmoment", lambda p: run_ours(p, args.foodmoment)))

    with open(os.path.join(args.data, "expected.csv")) as f:
        rows = list(csv.DictReader(f))

    sets = []
    stats = {}  # (decoder, set) -> [images, read, wrong]
    either_peer = {}
    seconds = {name: 0.0 for name, _ in decoders}
    misses = []
    for row in rows:
        path, fmt, text = row["path"], row["format"], row["expected"]
        s = path.split("/")[0]
        if s not in sets:
            sets.append(s)
        want = canonical(fmt, text)
        allowed = {want} | ALSO_PRINTED.get(path, set())
        peer_hit = False
        for name, fn in decoders:
            t0 = time.perf_counter()
            got = fn(os.path.join(args.data, path))
            seconds[name] += time.perf_counter() - t0
            st = stats.setdefault((name, s), [0, 0, 0])
            st[0] += 1
            hit = want in got
            st[1] += hit
            wrong = [g for g in got if g not in allowed]
            st[2] += len(wrong)
            if name != "foodmoment":
                peer_hit |= hit
            elif args.show_misses and (not hit or wrong):
                misses.append(f"{path}: want {want} got {got}")
        e = either_peer.setdefault(s, [0, 0])
        e[0] += 1
        e[1] += peer_hit

    names = [n for n, _ in decoders]
    if args.json:
        table = {n: {s: dict(zip(("images", "read", "wrong"), stats[(n, s)])) for s in sets} for n in names}
        print(json.dumps({"decoders": table, "seconds": seconds}, indent=2))
        return
    header = f"{'set':10} {'images':>6} " + " ".join(f"{n + ' read/wrong':>22}" for n in names) + f" {'peers either':>13}"
    print(header)
    totals = {n: [0, 0, 0] for n in names}
    either_total = 0
    for s in sets:
        cells = []
        for n in names:
            img, read, wrong = stats[(n, s)]
            totals[n][0] += img
            totals[n][1] += read
            totals[n][2] += wrong
            cells.append(f"{f'{read} / {wrong}':>22}")
        either_total += either_peer[s][1]
        print(f"{s:10} {stats[(names[0], s)][0]:>6} " + " ".join(cells) + f" {either_peer[s][1]:>13}")
    cells = [f"{f'{totals[n][1]} / {totals[n][2]}':>22}" for n in names]
    print(f"{'total':10} {totals[names[0]][0]:>6} " + " ".join(cells) + f" {either_total:>13}")
    print("seconds: " + ", ".join(f"{n} {seconds[n]:.1f}" for n in names) + " (foodmoment includes process start)")
    for m in misses:
        print(m)


if __name__ == "__main__":
    main()
