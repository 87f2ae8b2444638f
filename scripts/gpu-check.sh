#!/usr/bin/env bash
# The one command for a lent GPU machine (see the device tool's README), within 8 minutes
# on an H200: builds hwaro with CUDA for sm_90, prints `hwaro info`, runs the whole test
# suite (the GPU cases run there instead of skipping), a compute-sanitizer memcheck pass on
# the CUDA tests with HWARO_CUDA_ALLOC=native (so every tensor is its own cudaMalloc and an
# overrun is caught), the GPU benchmarks (build-gpu/bench/bench_cuda_*), the same
# measurements through PyTorch (scripts/torch_reference.py), and one comparison table last.
# Logs go under $OUT when it is set (else /tmp/gpu-check). Needs no network.
# Usage: scripts/gpu-check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gpu-check}
mkdir -p "$out"
status=0
step() { echo; echo "== $* ($(date -u +%H:%M:%S))"; }
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)

step "configure and build (CUDA on, sm_90)"
configure() {
  cmake -S . -B build-gpu -G Ninja -DHWARO_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DHWARO_BUILD_BENCHMARKS="$1" "${launcher[@]}" >"$out/configure.log" 2>&1
}
# Without Google Benchmark on the machine the rest still runs; the table then has no hwaro figures.
{ configure ON || { echo "configure with benchmarks failed (no Google Benchmark?); building without them"; configure OFF; }; } &&
  cmake --build build-gpu --parallel "$(nproc)" >"$out/build.log" 2>&1 ||
  { tail -40 "$out/configure.log" "$out/build.log"; exit 1; }

step "hwaro info"
build-gpu/bin/hwaro info | tee "$out/info.txt"

step "test suite"
ctest --test-dir build-gpu --output-on-failure --parallel "$(nproc)" --timeout 300 >"$out/ctest.log" 2>&1
ctest_rc=$?
tail -25 "$out/ctest.log"
[ "$ctest_rc" -eq 0 ] || status=1

step "GPU test cases that ran (not skipped)"
for t in build-gpu/tests/test_cuda_* build-gpu/tests/test_pinned_memory build-gpu/tests/test_timer \
         build-gpu/tests/test_nccl_process_group; do
  [ -x "$t" ] || continue
  "$t" --gtest_brief=0 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]' | sed "s|^|$(basename "$t"): |"
done | tee "$out/gpu-cases.txt"

sanitized=0
if command -v compute-sanitizer >/dev/null || [ -x /usr/local/cuda/bin/compute-sanitizer ]; then
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  step "compute-sanitizer memcheck, HWARO_CUDA_ALLOC=native, on the CUDA tests"
  for t in build-gpu/tests/test_cuda_* build-gpu/tests/test_pinned_memory; do
    [ -x "$t" ] || continue
    if HWARO_CUDA_ALLOC=native timeout 240 "$sanitizer" --tool memcheck --error-exitcode 3 "$t" --gtest_brief=1 \
      >"$out/sanitizer-$(basename "$t").log" 2>&1; then
      sanitized=$((sanitized + 1))
    else
      echo "$(basename "$t"): compute-sanitizer found errors (or timed out)"
      tail -20 "$out/sanitizer-$(basename "$t").log"
      status=1
    fi
  done
else
  echo "compute-sanitizer not found: memcheck skipped" | tee "$out/sanitizer-missing.txt"
fi

step "GPU benchmarks (hwaro)"
bench_json=()
for b in build-gpu/bench/bench_cuda_*; do
  [ -x "$b" ] || continue
  name=$(basename "$b")
  timeout 120 "$b" --benchmark_out="$out/$name.json" --benchmark_out_format=json >"$out/$name.log" 2>&1 ||
    { echo "$name failed"; tail -10 "$out/$name.log"; status=1; }
  grep -E '^BM_' "$out/$name.log" || true
  bench_json+=("$out/$name.json")
done

# The benchmarks with CPU and CUDA rows side by side (conv and the CNN step, the fused Adam
# step against the op-by-op one), then hwaro bench itself: the README's GPU rows.
for name in bench_conv bench_optimizer; do
  [ -x "build-gpu/bench/$name" ] || continue
  timeout 120 "build-gpu/bench/$name" >"$out/$name.log" 2>&1 || { echo "$name failed"; tail -10 "$out/$name.log"; status=1; }
  grep -E '^BM_' "$out/$name.log" || true
done
step "hwaro bench"
timeout 180 build-gpu/bin/hwaro bench 2>&1 | tee "$out/hwaro-bench.txt" || { echo "hwaro bench failed"; status=1; }

step "the same measurements through PyTorch"
timeout 180 python3 scripts/torch_reference.py --out "$out/torch.json" 2>"$out/torch.log" ||
  { echo "torch_reference.py failed:"; tail -10 "$out/torch.log"; }

step "summary"
printf '%-28s %s\n' "build" "ok" "tests" "$([ "$ctest_rc" -eq 0 ] && echo passed || echo FAILED)" \
  "gpu cases run" "$(grep -c '\[ *OK *\]' "$out/gpu-cases.txt" || true)" \
  "gpu cases skipped" "$(grep -c 'SKIPPED' "$out/gpu-cases.txt" || true)" \
  "sanitizer-clean binaries" "$sanitized"
echo
python3 scripts/gpu_table.py "$out/torch.json" "${bench_json[@]}" | tee "$out/table.txt"
exit $status
