#!/usr/bin/env bash
# The CNN training step (issue 4's target) in hwaro and in LibTorch on this machine, side by side:
# build/bench/bench_conv's BM_cnn_train_step_cpu and bench/libtorch/cnn_train_step.cpp (the same
# model, batch and optimiser), alternated for three rounds so that both see the same load.
# LibTorch is not a dependency of hwaro; this needs Debian's libtorch-dev (LibTorch 1.13), which
# is about 200 MB: apt-get install libtorch-dev. Usage: scripts/bench-cnn-vs-libtorch.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ -x "$build/bench/bench_conv" ] || { echo "no $build/bench/bench_conv: build hwaro with benchmarks first" >&2; exit 1; }
[ -e /usr/lib/x86_64-linux-gnu/cmake/Torch/TorchConfig.cmake ] ||
  { echo "LibTorch not found: apt-get install libtorch-dev (Debian's LibTorch 1.13)" >&2; exit 1; }
torch_build=build-libtorch-bench
cmake -S bench/libtorch -B "$torch_build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$torch_build" >/dev/null
threads=$(nproc)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $threads cores; batch 64, $threads threads each"
for round in 1 2 3; do
  echo "round $round"
  "$build/bench/bench_conv" --benchmark_filter=cnn_train_step_cpu --benchmark_min_time=2 2>/dev/null |
    awk '/BM_cnn_train_step_cpu/ {printf "hwaro %s: step %s ms, %s\n", "'"$(git describe --always --dirty)"'", $2, $NF}'
  "$torch_build/libtorch_cnn_train_step" 64 "$threads" 2
done
