#!/usr/bin/env bash
# Runs the CPU benchmarks of BENCHMARKS.md, each pair side by side in one process, with
# repetitions so that the medians are comparable on a noisy machine.
# Usage: scripts/bench-cpu.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cmake --build "$build" --target bench_matmul bench_elementwise bench_softmax >/dev/null
args=(--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_min_time=0.5)
for b in bench_matmul bench_elementwise bench_softmax; do
  "$build/bench/$b" "${args[@]}" --benchmark_filter='_median|.' 2>&1 | grep -E 'openblas_core|hwaro_threads|_median|^Benchmark'
done
