#!/usr/bin/env python3
"""Drives `hwaro train` on the fixture of make_idx_fixture.py and checks what it writes.

1. A 2-epoch run: metrics.jsonl has one well-formed record per epoch, the loss falls, the test
   accuracy is far above chance, the SVG plot parses and has a curve per series, the checkpoint exists.
   With --data-parallel (two CPU replicas) the same run ends with the same losses.
   The checkpoint, read from Python with the standard library alone (safetensors_stdlib.py), follows
   the safetensors layout, and its weights, run in Python, classify the test set as hwaro did.
2. Ctrl-C: a run sent SIGINT mid-epoch exits with 130 and says where the checkpoint is; resumed with
   --resume it ends with the same test loss and accuracy as a run that was never interrupted.
3. Bad flags are refused with a message naming the flag.
4. Without --device the run is on the GPU where one is available, else on the CPU.
Usage: check_train_run.py HWARO_BINARY FIXTURE_SCRIPT WORK_DIR
"""
import json
import math
import operator
import os
import shutil
import signal
import struct
import subprocess
import sys
import xml.dom.minidom

import safetensors_stdlib

hwaro, fixture_script, work = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(work, ignore_errors=True)
data = os.path.join(work, "data")
subprocess.run([sys.executable, fixture_script, data, "600", "200"], check=True)
# The checks of equal losses (DataParallel, resume) are made on the CPU, where runs are reproducible;
# the choice of --device auto is checked on its own (4.).
common = ["train", "--data", data, "--device", "cpu", "--threads", "1", "--progress", "lines", "--seed", "7"]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(args, **kwargs):
    return subprocess.run([hwaro] + args, capture_output=True, text=True, **kwargs)


def metrics(out_dir):
    with open(os.path.join(out_dir, "metrics.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


# 1. Two epochs, their metrics and plot.
out1 = os.path.join(work, "run1")
r = run(common + ["--epochs", "2", "--batch-size", "32", "--workers", "1", "--out", out1])
if r.returncode != 0:
    fail("hwaro train failed:\n" + r.stdout + r.stderr)
records = metrics(out1)
if [m["epoch"] for m in records] != [1, 2]:
    fail("expected epochs 1 and 2 in metrics.jsonl, got %s" % records)
for m in records:
    for key in ("train_loss", "test_loss", "epoch_seconds", "samples_per_second"):
        if not (isinstance(m[key], float) and math.isfinite(m[key]) and m[key] > 0):
            fail("%s = %r in %s" % (key, m[key], m))
    if not 0 <= m["loader_waited_fraction"] <= 1 or m["device"] != "cpu" or m["lr"] != 0.001:
        fail("bad record %s" % m)
if not records[1]["train_loss"] < records[0]["train_loss"]:
    fail("train loss did not fall: %s" % records)
if not records[1]["test_accuracy"] > 0.8:
    fail("test accuracy %.3f: the model did not learn the fixture (chance is 0.1)" % records[1]["test_accuracy"])
if "epoch 2/2: train loss" not in r.stdout or "test accuracy" not in r.stdout or "loader:" not in r.stdout:
    fail("no epoch summary line in:\n" + r.stdout)
svg = xml.dom.minidom.parse(os.path.join(out1, "training.svg"))
if len(svg.getElementsByTagName("polyline")) != 3:
    fail("the plot should have 3 curves (train loss, test loss, test accuracy)")



def read_idx(path):
    with open(path, "rb") as f:
        blob = f.read()
    dims = struct.unpack(">" + "I" * blob[3], blob[4:4 + 4 * blob[3]])
    return dims, blob[4 + 4 * blob[3]:]


def python_test_accuracy(checkpoint, data_dir):
    """The test accuracy of the checkpoint's MLP (Linear-ReLU-Linear-ReLU-Linear on pixels / 255,
    normalised by the training pixels' mean and deviation, as hwaro train does), in float64 Python."""
    _, tensors = safetensors_stdlib.read(checkpoint)
    layers = []
    for name, rows, cols in (("model.1", 256, 784), ("model.3", 128, 256), ("model.5", 10, 128)):
        weight, bias = tensors[name + ".weight"], tensors[name + ".bias"]
        if weight[:2] != ("F32", [rows, cols]) or bias[:2] != ("F32", [rows]):
            fail("%s: weight %s %s, bias %s %s" % (name, weight[0], weight[1], bias[0], bias[1]))
        w = safetensors_stdlib.values(weight)
        layers.append(([w[r * cols:(r + 1) * cols] for r in range(rows)], safetensors_stdlib.values(bias)))
    _, train_pixels = read_idx(os.path.join(data_dir, "train-images-idx3-ubyte"))
    scaled = [p / 255 for p in train_pixels]
    mean = sum(scaled) / len(scaled)
    std = math.sqrt(sum(x * x for x in scaled) / len(scaled) - mean * mean)
    (count, height, width), test_pixels = read_idx(os.path.join(data_dir, "t10k-images-idx3-ubyte"))
    _, labels = read_idx(os.path.join(data_dir, "t10k-labels-idx1-ubyte"))
    size = height * width
    correct = 0
    for i in range(count):
        x = [(p / 255 - mean) / std for p in test_pixels[i * size:(i + 1) * size]]
        for k, (rows, bias) in enumerate(layers):
            x = [sum(map(operator.mul, row, x)) + b for row, b in zip(rows, bias)]
            if k < len(layers) - 1:
                x = [max(v, 0.0) for v in x]
        correct += max(range(10), key=lambda c: x[c]) == labels[i]
    return correct / count


checkpoint1 = os.path.join(out1, "checkpoint.safetensors")
try:
    metadata, _ = safetensors_stdlib.read(checkpoint1)
    python_accuracy = python_test_accuracy(checkpoint1, data)
except safetensors_stdlib.FormatError as e:
    fail("the checkpoint breaks the safetensors layout: %s" % e)
if metadata.get("hwaro.epoch") != "2":
    fail("the checkpoint's metadata should say epoch 2: %s" % metadata)
# float64 here, float32 in hwaro: at most a sample on the boundary may differ.
if abs(python_accuracy - records[1]["test_accuracy"]) > 1.5 / 200:
    fail("the checkpoint's weights classify %.3f of the test set in Python, hwaro said %.3f"
         % (python_accuracy, records[1]["test_accuracy"]))

# 1b. --data-parallel (two CPU replicas here) trains the same model to float32 rounding.
out_dp = os.path.join(work, "run_dp")
r = run(common + ["--epochs", "2", "--batch-size", "32", "--workers", "1", "--out", out_dp, "--data-parallel"])
if r.returncode != 0 or "DataParallel over cpu cpu" not in r.stdout:
    fail("hwaro train --data-parallel failed:\n" + r.stdout + r.stderr)
records_dp = metrics(out_dp)
# zip() stops at the shorter list: without this a short or empty metrics.jsonl would pass.
if [m["epoch"] for m in records_dp] != [1, 2]:
    fail("expected epochs 1 and 2 in the --data-parallel run's metrics.jsonl, got %s" % records_dp)
for x, y in zip(records, records_dp):
    if not math.isclose(x["train_loss"], y["train_loss"], rel_tol=1e-3, abs_tol=1e-5) \
            or abs(x["test_accuracy"] - y["test_accuracy"]) > 0.01:
        fail("--data-parallel differs from the plain run:\n%s\n%s" % (x, y))

# 2. Ctrl-C mid-epoch, then --resume, ends where an uninterrupted run ends.
straight = os.path.join(work, "straight")
resumed = os.path.join(work, "resumed")
long_run = common + ["--epochs", "2", "--batch-size", "1", "--workers", "0"]
r = run(long_run + ["--out", straight])
if r.returncode != 0:
    fail("uninterrupted run failed:\n" + r.stderr)
p = subprocess.Popen([hwaro] + long_run + ["--out", resumed], stdout=subprocess.PIPE, text=True)
for line in p.stdout:
    if line.startswith("epoch 1/2 ") and "samples/s" in line:  # the first progress line: 10% done
        p.send_signal(signal.SIGINT)
        break
rest = p.stdout.read()
if p.wait() != 130 or "interrupted: checkpoint saved to" not in rest:
    fail("after SIGINT: exit code %s, output:\n%s" % (p.returncode, rest))
checkpoint = os.path.join(resumed, "checkpoint.safetensors")
r = run(long_run + ["--out", resumed, "--resume", checkpoint])
if r.returncode != 0 or "resuming" not in r.stdout:
    fail("resume failed:\n" + r.stdout + r.stderr)
a, b = metrics(straight), metrics(resumed)
# Both lengths, since zip() below stops at the shorter list.
if [m["epoch"] for m in a] != [1, 2]:
    fail("the uninterrupted run's metrics should cover both epochs: %s" % a)
if [m["epoch"] for m in b] != [1, 2]:
    fail("the resumed run's metrics should cover both epochs: %s" % b)
for x, y in zip(a, b):
    if x["test_accuracy"] != y["test_accuracy"] or not math.isclose(x["test_loss"], y["test_loss"], rel_tol=1e-6) \
            or not math.isclose(x["train_loss"], y["train_loss"], rel_tol=1e-6):
        fail("resumed run differs from the uninterrupted one:\n%s\n%s" % (x, y))

# 3. Bad flags name the flag and what it accepts.
for args, needle in ((["--device", "gpu"], "--device"), (["--optimizer", "rmsprop"], "--optimizer"),
                     (["--model", "resnet"], "--model"), (["--batch-size", "0"], "--batch-size"),
                     # CLI11 alone would wrap -1 and cap 2^64 into valid seeds, and let nan through as a rate.
                     (["--seed", "-1"], "is not a seed"), (["--seed", "18446744073709551616"], "is not a seed"),
                     (["--lr", "nan"], "is not a learning rate"), (["--lr", "0"], "is not a learning rate")):
    r = run(["train"] + args)
    if r.returncode == 0 or needle not in r.stderr:
        fail("%s: exit %d, stderr %r" % (args, r.returncode, r.stderr))
empty = os.path.join(work, "empty_data")
subprocess.run([sys.executable, fixture_script, empty, "0", "5"], check=True)
r = run(["train", "--data", empty])
if r.returncode == 0 or "the training set holds no images" not in r.stderr:
    fail("an empty training set should be named as such: %r" % r.stderr)
r = run(["train", "--data", os.path.join(work, "nowhere")])
if r.returncode == 0 or "fetch-data.sh" not in r.stderr:
    fail("a missing data set should point to scripts/fetch-data.sh: %r" % r.stderr)

# 4. --device auto (the default) is the guide's pattern: the GPU where `hwaro info` sees one, else the CPU.
info = json.loads(run(["info", "--json"]).stdout)
expected_device = "cuda" if info["cuda"]["available"] else "cpu"
out4 = os.path.join(work, "run_auto")
auto_args = [a for a in common if a not in ("--device", "cpu")]
r = run(auto_args + ["--epochs", "1", "--batch-size", "64", "--out", out4])
if r.returncode != 0 or metrics(out4)[0]["device"] != expected_device:
    fail("--device auto should train on %s: exit %d, %s" % (expected_device, r.returncode, r.stdout + r.stderr))

print("train run checks passed: final test accuracy %.1f%%, resume matches the uninterrupted run"
      % (100 * records[-1]["test_accuracy"]))
