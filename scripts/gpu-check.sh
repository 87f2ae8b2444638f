#!/usr/bin/env bash
# The one command for a lent GPU machine (see the device tool's README): builds hwaro
# with CUDA, prints `hwaro info`, runs the whole test suite (the GPU cases run there
# instead of skipping), runs the CUDA tests under compute-sanitizer, and prints a table
# of the results. Keep it inside one call of a few minutes. Usage: scripts/gpu-check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-/tmp/gpu-check}
mkdir -p "$out"
status=0
step() { echo; echo "== $*"; }

step "configure and build (CUDA on)"
cmake -S . -B build-gpu -G Ninja -DHWARO_CUDA=ON -DCMAKE_BUILD_TYPE=Release >"$out/configure.log" 2>&1 &&
  cmake --build build-gpu --parallel "$(nproc)" >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }

step "hwaro info"
build-gpu/bin/hwaro info | tee "$out/info.txt"

step "test suite"
ctest --test-dir build-gpu --output-on-failure --parallel "$(nproc)" 2>&1 | tee "$out/ctest.log" | tail -25
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

step "GPU test cases that ran (not skipped)"
for t in build-gpu/tests/test_cuda_*; do
  "$t" --gtest_brief=0 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]' | sed "s|^|$(basename "$t"): |"
done | tee "$out/gpu-cases.txt"

if command -v compute-sanitizer >/dev/null; then
  step "compute-sanitizer (memcheck) on the CUDA tests"
  for t in build-gpu/tests/test_cuda_*; do
    compute-sanitizer --tool memcheck --error-exitcode 3 "$t" --gtest_brief=1 >"$out/sanitizer-$(basename "$t").log" 2>&1 ||
      { echo "$(basename "$t"): compute-sanitizer found errors"; tail -20 "$out/sanitizer-$(basename "$t").log"; status=1; }
  done
fi

step "summary"
printf '%-28s %s\n' "build" "ok" "tests" "$([ $status -eq 0 ] && echo passed || echo FAILED)" \
  "gpu cases run" "$(grep -c '\[ *OK *\]' "$out/gpu-cases.txt" || true)" \
  "gpu cases skipped" "$(grep -c 'SKIPPED' "$out/gpu-cases.txt" || true)"
exit $status
