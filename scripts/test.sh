#!/usr/bin/env bash
# The README's second command: set up, build and run the whole test suite:
#   1. the normal build (CUDA compiled where nvcc exists) and all its tests;
#   2. the same suite built with AddressSanitizer + UndefinedBehaviorSanitizer (CUDA off);
#   3. the threaded tests built with ThreadSanitizer (CUDA off);
#   4. find_package(hwaro) from an install prefix and from the build tree.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
# Each test takes seconds, under a sanitizer at most a few minutes; a hung one fails after 10 instead of CI's
# using all its time (test_conv once ran until CI's limit; a thread-pool race made it crash under load).
ctest_timeout=600

scripts/setup.sh build
ctest --test-dir build --timeout "$ctest_timeout" --output-on-failure --parallel "$jobs"

scripts/setup.sh build-sanitize -DHWARO_CUDA=OFF -DHWARO_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=Debug \
  -DHWARO_SANITIZE=address,undefined
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-sanitize --timeout "$ctest_timeout" --output-on-failure --parallel "$jobs"

# The threaded parts (DataLoader workers and device prefetch, the pinned-memory cache, the CPU
# thread pool, DataParallel's replica threads, the pool of library handles) again under ThreadSanitizer; only their tests
# are built (a whole second sanitizer build would double this step).
tsan_tests=(test_data_loader test_data_prefetcher test_pinned_copy_reuse test_host_block_cache test_data_parallel
  test_cpu_backend test_handle_pool)
HWARO_BUILD_TARGETS="${tsan_tests[*]}" scripts/setup.sh build-tsan -DHWARO_CUDA=OFF -DHWARO_BUILD_BENCHMARKS=OFF \
  -DHWARO_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHWARO_SANITIZE=thread
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest --test-dir build-tsan --timeout "$ctest_timeout" --output-on-failure \
  --parallel "$jobs" -R "^($(IFS='|'; echo "${tsan_tests[*]}"))\$"

tests/package/check-package.sh build
echo "test.sh: all tests passed"
