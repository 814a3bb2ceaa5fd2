#!/usr/bin/env python3
"""Compares fedpipe exports of one manifest (fedpipe export --models) made on two backends.

Usage: compare_models.py REF_EXPORT RUN1_EXPORT [RUN2_EXPORT]

For every safetensors file of REF_EXPORT: the relative difference of RUN1's parameters,
||run1 - ref||_2 / ||ref||_2 over all the file's float32 entries (issue 21's criterion: at
most 1e-4 after a round). With RUN2_EXPORT: whether every file of RUN1 and RUN2 (tables and
models) holds the same bytes (a rerun on the same backend must). Exits 1 if either fails.
Standard library only.
"""
import array
import json
import math
import os
import struct
import sys

TOLERANCE = 1e-4


def load(path):
    """Returns {name: array('f')} for a safetensors file's float32 tensors."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, meta in header.items():
        if name == "__metadata__" or meta["dtype"] != "F32":
            continue
        start, end = meta["data_offsets"]
        a = array.array("f")
        a.frombytes(data[start:end])
        if sys.byteorder != "little":
            a.byteswap()
        out[name] = a
    return out


def files(root):
    for d, _, names in os.walk(root):
        for n in names:
            yield os.path.relpath(os.path.join(d, n), root)


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    ref, run1 = argv[1], argv[2]
    ok = True
    worst, worst_file, count = 0.0, "", 0
    for rel in sorted(files(ref)):
        if not rel.endswith(".safetensors"):
            continue
        other = os.path.join(run1, rel)
        if not os.path.exists(other):
            print(f"missing in {run1}: {rel}")
            ok = False
            continue
        a, b = load(other), load(os.path.join(ref, rel))
        diff = scale = 0.0
        for name, tb in b.items():
            ta = a.get(name)
            if ta is None or len(ta) != len(tb):
                diff = math.inf
                break
            for x, y in zip(ta, tb):
                diff += (x - y) ** 2
                scale += y * y
        rel_diff = math.sqrt(diff) / math.sqrt(scale) if scale > 0 else math.sqrt(diff)
        count += 1
        if rel_diff > worst or not worst_file:
            worst, worst_file = rel_diff, rel
    print(f"parameters, {run1} vs {ref}: {count} model files, largest relative difference {worst:.3g} ({worst_file}); tolerance {TOLERANCE:g}")
    if count == 0 or not worst <= TOLERANCE:
        ok = False
    if len(argv) == 4:
        run2 = argv[3]
        differ = []
        names = set(files(run1)) | set(files(run2))
        for rel in sorted(names):
            p1, p2 = os.path.join(run1, rel), os.path.join(run2, rel)
            if not (os.path.exists(p1) and os.path.exists(p2)):
                differ.append(rel + " (only in one)")
                continue
            with open(p1, "rb") as f1, open(p2, "rb") as f2:
                if f1.read() != f2.read():
                    differ.append(rel)
        print(f"rerun, {run2} vs {run1}: {len(names)} files, {len(differ)} differ" + ("" if not differ else ": " + ", ".join(differ[:10])))
        ok = ok and not differ
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
