#!/usr/bin/env bash
# The README's second command: set up, build and run the whole test suite:
#   1. the normal build (CUDA compiled where nvcc exists) and all its tests;
#   2. the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer (CUDA off);
#   3. find_package(hwaro) from an install prefix and from the build tree.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

scripts/setup.sh build
ctest --test-dir build --output-on-failure --parallel "$jobs"

scripts/setup.sh build-sanitize -DHWARO_CUDA=OFF -DHWARO_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=Debug \
  -DHWARO_SANITIZE=address,undefined
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize --output-on-failure --parallel "$jobs"

tests/package/check-package.sh build
echo "test.sh: all tests passed"
