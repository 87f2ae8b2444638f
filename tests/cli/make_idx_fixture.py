#!/usr/bin/env python3
"""Writes a small learnable MNIST-shaped data set as IDX files, for driving `hwaro train` in tests.

Class k's images have a bright horizontal bar at rows 4+2k and 5+2k, over uniform noise, so a
model that learns anything separates the classes; one that learns nothing stays near 10%.
Usage: make_idx_fixture.py DIR [TRAIN_COUNT] [TEST_COUNT]
"""
import os
import random
import struct
import sys


def write_idx(path, dims, payload):
    with open(path + ".tmp", "wb") as f:
        f.write(bytes([0, 0, 0x08, len(dims)]))
        f.write(struct.pack(">" + "I" * len(dims), *dims))
        f.write(payload)
    os.replace(path + ".tmp", path)


def make_split(rng, count):
    images = bytearray()
    labels = bytearray()
    for _ in range(count):
        label = rng.randrange(10)
        image = [rng.randrange(0, 90) for _ in range(28 * 28)]
        for row in (4 + 2 * label, 5 + 2 * label):
            for col in range(2, 26):
                image[row * 28 + col] = rng.randrange(200, 256)
        images += bytes(image)
        labels.append(label)
    return images, labels


def main():
    out = sys.argv[1]
    train_count = int(sys.argv[2]) if len(sys.argv) > 2 else 600
    test_count = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    os.makedirs(out, exist_ok=True)
    rng = random.Random(1234)
    for prefix, count in (("train", train_count), ("t10k", test_count)):
        images, labels = make_split(rng, count)
        write_idx(os.path.join(out, prefix + "-images-idx3-ubyte"), [count, 28, 28], images)
        write_idx(os.path.join(out, prefix + "-labels-idx1-ubyte"), [count], labels)


if __name__ == "__main__":
    main()
