#!/usr/bin/env bash
# The README's first command: set up and build, fetch Fashion-MNIST, then the main job:
# `hwaro train` with its defaults (the MLP, 5 epochs of Adam, on the best device), which writes
# hwaro-run/metrics.jsonl, hwaro-run/training.svg and hwaro-run/checkpoint.safetensors.
# Extra arguments go to `hwaro train` (e.g. --model cnn --epochs 3, or --device cpu).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
scripts/fetch-data.sh fashion-mnist
build/bin/hwaro info
build/bin/hwaro train "$@"
