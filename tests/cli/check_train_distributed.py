#!/usr/bin/env python3
"""`mpirun -np 2 hwaro train --distributed` on the fixture of make_idx_fixture.py.

1. One epoch over 2 ranks: both ranks end with bitwise identical parameters (each prints a digest
   of its own with --parameter-digest; they trained on different shards, so only DDP's
   all-reduce makes them agree), the test accuracy is far above chance, rank 0 alone printed
   the epoch summary and wrote metrics, plot and checkpoint.
2. --distributed without an MPI launcher, and with --data-parallel, are refused with messages
   that say what to do.
Usage: check_train_distributed.py HWARO_BINARY FIXTURE_SCRIPT WORK_DIR MPIEXEC [MPIEXEC_FLAGS...]
"""
import json
import os
import re
import shutil
import subprocess
import sys

hwaro, fixture_script, work, mpiexec = sys.argv[1:5]
mpiexec_flags = sys.argv[5:]
shutil.rmtree(work, ignore_errors=True)
data = os.path.join(work, "data")
subprocess.run([sys.executable, fixture_script, data, "600", "200"], check=True)
# On the CPU (MPI), also where a GPU is present: two ranks, and a machine may have one GPU.
train = ["train", "--distributed", "--device", "cpu", "--data", data, "--epochs", "1", "--batch-size", "16", "--workers", "1",
         "--progress", "lines", "--seed", "7"]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


# 1. Two ranks, one epoch.
out = os.path.join(work, "run")
r = subprocess.run([mpiexec, "-n", "2"] + mpiexec_flags + [hwaro] + train + ["--out", out, "--parameter-digest"],
                   capture_output=True, text=True, timeout=240)
log = r.stdout + r.stderr
if r.returncode != 0:
    fail("mpirun -np 2 hwaro train --distributed failed (exit %d):\n%s" % (r.returncode, log))
digests = dict(re.findall(r"^rank (\d) of 2: parameter digest ([0-9a-f]{16})$", r.stdout, re.M))
if sorted(digests) != ["0", "1"]:
    fail("expected a parameter digest from rank 0 and rank 1:\n" + log)
if digests["0"] != digests["1"]:
    fail("the ranks ended with different parameters: %s\n%s" % (digests, log))
if "DistributedDataParallel over 2 ranks (mpi)" not in r.stdout:
    fail("no DistributedDataParallel line:\n" + log)
if r.stdout.count("epoch 1/1: train loss") != 1 or r.stdout.count("final test accuracy") != 1:
    fail("the epoch summary should be printed once, by rank 0:\n" + log)
with open(os.path.join(out, "metrics.jsonl")) as f:
    records = [json.loads(line) for line in f if line.strip()]
if len(records) != 1 or records[0]["epoch"] != 1:
    fail("expected one epoch in metrics.jsonl: %s" % records)
accuracy = records[0]["test_accuracy"]
if not accuracy > 0.8:
    fail("test accuracy %.3f after one distributed epoch: not learning (chance is 0.1)" % accuracy)
for name in ("checkpoint.safetensors", "training.svg"):
    if not os.path.getsize(os.path.join(out, name)) > 0:
        fail("rank 0 did not write " + name)

# 2. Refusals.
r = subprocess.run([hwaro] + train + ["--out", os.path.join(work, "lone")], capture_output=True, text=True,
                   timeout=60)
if r.returncode == 0 or "not started by an MPI launcher" not in r.stderr or "mpirun -np 2" not in r.stderr:
    fail("--distributed without mpirun: exit %d, stderr %r" % (r.returncode, r.stderr))
r = subprocess.run([hwaro] + train + ["--data-parallel"], capture_output=True, text=True, timeout=60)
if r.returncode == 0 or not re.search(r"--(distributed|data-parallel) excludes --(data-parallel|distributed)", r.stderr):
    fail("--distributed with --data-parallel: exit %d, stderr %r" % (r.returncode, r.stderr))

print("distributed train checks passed: both ranks' parameter digest %s, test accuracy %.1f%%"
      % (digests["0"], 100 * accuracy))
