#!/usr/bin/env bash
# Packs Fashion-MNIST (fetched by scripts/fetch-data.sh) gzip-compressed into .gpu-data/
# (ignored by git), small enough for a device call's `carry` (the lent GPU machine has no
# network). hwaro's IDX reader takes the .gz files as they are; scripts/gpu-check.sh then runs
# the main job there with HWARO_DATA_DIR=.gpu-data.
# Usage: scripts/pack-gpu-data.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir=${HWARO_DATA_DIR:-$HOME/.cache/hwaro/data}/fashion-mnist
[ -f "$source_dir/t10k-labels-idx1-ubyte" ] || scripts/fetch-data.sh fashion-mnist
mkdir -p .gpu-data/fashion-mnist
for f in "$source_dir"/*-ubyte; do
  gzip -9 -c "$f" > ".gpu-data/fashion-mnist/$(basename "$f").gz.tmp"
  mv ".gpu-data/fashion-mnist/$(basename "$f").gz.tmp" ".gpu-data/fashion-mnist/$(basename "$f").gz"
done
echo "pack-gpu-data: $(du -sh .gpu-data | cut -f1) in .gpu-data/"
