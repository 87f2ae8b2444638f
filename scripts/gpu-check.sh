#!/usr/bin/env bash
# The one command for a lent GPU machine (see the device tool's README), within 8 minutes
# on an H200: builds hwaro with CUDA for sm_90, prints `hwaro info`, runs the whole test
# suite (the GPU cases run there instead of skipping), the GPU benchmarks
# (build-gpu/bench/bench_cuda_*, bench_conv with cuDNN and without, bench_optimizer,
# `hwaro bench`), the same measurements through PyTorch (scripts/torch_reference.py), a compute-sanitizer memcheck pass
# on the CUDA tests with HWARO_CUDA_ALLOC=native (so every tensor is its own cudaMalloc and an
# overrun is caught), and one comparison table last. Logs go to /tmp/gpu-check, packed as
# $OUT/gpu-check-logs.tar.gz. Needs no network: where the machine lacks Debian's -dev
# packages, run scripts/fetch-gpu-debs.sh here first and name .gpu-debs in the device call's `carry`.
# With scripts/pack-gpu-data.sh's .gpu-data carried too, it trains on Fashion-MNIST there.
# HWARO_GPU_CHECK_SKIP="memcheck torch train" leaves those steps out (a quick rerun after a fix).
# Usage: scripts/gpu-check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
# The device tool brings back at most 8 files from $OUT, so the logs are written to a folder of
# their own and packed into $OUT/gpu-check-logs.tar.gz at every step (a run stopped at its
# time limit still brings back what it had done).
out=/tmp/gpu-check
rm -rf "$out"
mkdir -p "$out"
status=0
save_logs() { [ -n "${OUT:-}" ] && tar -czf "$OUT/gpu-check-logs.tar.gz" -C "$out" . 2>/dev/null; true; }
step() { save_logs; echo; echo "== $* ($(date -u +%H:%M:%S))"; }
skipped() { [[ " ${HWARO_GPU_CHECK_SKIP:-} " == *" $1 "* ]]; }
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)

step "the machine"
{ nvidia-smi -L; g++ --version | head -1; cmake --version | head -1; nvcc --version | tail -2; nproc; } 2>&1 |
  tee "$out/machine.txt"
source scripts/use-carried-debs.sh
use_carried_debs /tmp/gpu-deps
export CMAKE_POLICY_VERSION_MINIMUM=3.5  # Debian's package configs, read by a CMake 4 there
# NCCL next to the CUDA toolkit is found by CMake; else the one PyTorch's wheels bring.
nccl_flags=()
if ! ls /usr/local/cuda/lib64/libnccl.so* >/dev/null 2>&1; then
  nccl_dir=$(env -u LD_LIBRARY_PATH python3 -c 'import nvidia.nccl as n; print(list(n.__path__)[0])' 2>/dev/null)
  nccl_lib=$(ls "${nccl_dir:-/nonexistent}"/lib/libnccl.so* 2>/dev/null | head -1)
  if [ -n "$nccl_lib" ] && [ -e "$nccl_dir/include/nccl.h" ]; then
    nccl_flags=(-DNCCL_INCLUDE_DIR="$nccl_dir/include" -DNCCL_LIBRARY="$nccl_lib")
    export LD_LIBRARY_PATH="$nccl_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "NCCL from PyTorch's wheel: $nccl_lib"
  else
    echo "no NCCL found: the NCCL backend is left out of this build"
  fi
fi

# cuDNN likewise: next to the CUDA toolkit, else PyTorch's wheel (which ships libcudnn.so.9 and
# no unversioned name, so the library is named to CMake in full).
cudnn_flags=()
if ! ls /usr/local/cuda/lib64/libcudnn.so* >/dev/null 2>&1; then
  cudnn_dir=$(env -u LD_LIBRARY_PATH python3 -c 'import nvidia.cudnn as n; print(list(n.__path__)[0])' 2>/dev/null)
  cudnn_lib=$(ls "${cudnn_dir:-/nonexistent}"/lib/libcudnn.so* 2>/dev/null | head -1)
  if [ -n "$cudnn_lib" ] && [ -e "$cudnn_dir/include/cudnn.h" ]; then
    cudnn_flags=(-DCUDNN_INCLUDE_DIR="$cudnn_dir/include" -DCUDNN_LIBRARY="$cudnn_lib")
    export LD_LIBRARY_PATH="$cudnn_dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    echo "cuDNN from PyTorch's wheel: $cudnn_lib"
  else
    echo "no cuDNN found: the GPU's convolutions are im2col + cuBLAS in this build"
  fi
fi

step "configure and build (CUDA on, sm_90)"
configure() {
  cmake -S . -B build-gpu -G Ninja -DHWARO_CUDA=ON -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DHWARO_BUILD_BENCHMARKS="$1" "${launcher[@]}" "${nccl_flags[@]}" "${cudnn_flags[@]}" >"$out/configure.log" 2>&1
}
# Without Google Benchmark on the machine the rest still runs; the table then has no hwaro figures.
{ configure ON || { echo "configure with benchmarks failed (no Google Benchmark?); building without them"; configure OFF; }; } &&
  cmake --build build-gpu --parallel "$(nproc)" >"$out/build.log" 2>&1 ||
  { tail -40 "$out/configure.log" "$out/build.log"; exit 1; }

step "hwaro info"
build-gpu/bin/hwaro info | tee "$out/info.txt"
# On a virtual CPU OpenBLAS may fall back to kernels without AVX (blas_core_check.h); the CPU
# rows are then measured with the kernels `hwaro info` names, as a user would be told to.
if grep -q "OPENBLAS_CORETYPE=" "$out/info.txt"; then
  OPENBLAS_CORETYPE=$(grep -o 'OPENBLAS_CORETYPE=[A-Za-z0-9]*' "$out/info.txt" | head -1 | cut -d= -f2)
  export OPENBLAS_CORETYPE
  echo "the rest runs with OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE:"
  build-gpu/bin/hwaro info | grep '^BLAS' | tee -a "$out/info.txt"
fi

step "test suite"
ctest --test-dir build-gpu --output-on-failure --parallel "$(nproc)" --timeout 120 >"$out/ctest.log" 2>&1
ctest_rc=$?
tail -25 "$out/ctest.log"
[ "$ctest_rc" -eq 0 ] || status=1

step "GPU test cases that ran (not skipped)"
group_cases='*_group_*_on_cuda*'

for t in build-gpu/tests/test_cuda_* build-gpu/tests/test_pinned_memory build-gpu/tests/test_timer \
         build-gpu/tests/test_nccl_process_group build-gpu/tests/test_serialize; do
  [ -x "$t" ] || continue
  "$t" --gtest_brief=0 2>&1 | grep -E '^\[ +(OK|FAILED|SKIPPED) +\]' | sed "s|^|$(basename "$t"): |"
done | tee "$out/gpu-cases.txt"
# The fused optimisers' multi-tensor launch on the GPU (the parity cases of parameter groups).
build-gpu/tests/test_parity --gtest_brief=0 --gtest_filter="$group_cases" 2>&1 |
  grep -E '^\[ +(OK|FAILED|SKIPPED) +\]' | sed "s|^|test_parity: |" | tee -a "$out/gpu-cases.txt"

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
  timeout 120 "build-gpu/bench/$name" --benchmark_out="$out/$name.json" --benchmark_out_format=json >"$out/$name.log" 2>&1 ||
    { echo "$name failed"; tail -10 "$out/$name.log"; status=1; }
  grep -E '^BM_' "$out/$name.log" || true
done
bench_json+=("$out/bench_conv.json")  # the CNN step's row of the table
# cuDNN against im2col + cuBLAS on the same card: bench_conv's CUDA rows again with HWARO_CUDNN=off.
if [ -x build-gpu/bench/bench_conv ]; then
  echo "the same CUDA rows with HWARO_CUDNN=off (im2col + cuBLAS):"
  HWARO_CUDNN=off timeout 60 build-gpu/bench/bench_conv --benchmark_filter=cuda >"$out/bench_conv-im2col.log" 2>&1 ||
    { echo "bench_conv with HWARO_CUDNN=off failed"; tail -10 "$out/bench_conv-im2col.log"; status=1; }
  grep -E '^BM_' "$out/bench_conv-im2col.log" || true
fi
step "hwaro bench"
timeout 180 build-gpu/bin/hwaro bench 2>&1 | tee "$out/hwaro-bench.txt" || { echo "hwaro bench failed"; status=1; }

# The main job (README's first command) on the GPU, the CNN, and --distributed over NCCL in a
# world of one: on Fashion-MNIST where scripts/pack-gpu-data.sh's .gpu-data was carried.
if [ -d .gpu-data/fashion-mnist ] && ! skipped train; then
  step "hwaro train on Fashion-MNIST on the GPU: the main job (MLP), the CNN, --distributed (NCCL)"
  export HWARO_DATA_DIR=$PWD/.gpu-data
  timeout 150 build-gpu/bin/hwaro train --progress lines --out "$out/main-job" >"$out/main-job.log" 2>&1 ||
    { echo "the main job failed"; status=1; }
  tail -4 "$out/main-job.log"
  timeout 150 build-gpu/bin/hwaro train --model cnn --epochs 3 --progress lines --out "$out/cnn" >"$out/cnn.log" 2>&1 ||
    { echo "the CNN run failed"; status=1; }
  tail -4 "$out/cnn.log"
  if command -v mpirun >/dev/null; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpirun --allow-run-as-root --oversubscribe -np 1 \
      build-gpu/bin/hwaro train --distributed --epochs 1 --progress lines --out "$out/distributed" \
      >"$out/distributed.log" 2>&1 || { echo "--distributed over NCCL failed"; status=1; }
    grep -E "on cuda|nccl|accuracy" "$out/distributed.log" | tail -4
  fi
  # The main job's checkpoint, written from the GPU, read from Python: by tests/cli/safetensors_stdlib.py,
  # and by the safetensors package where the image has it, byte for byte the same tensors.
  env -u LD_LIBRARY_PATH python3 - "$out/main-job/checkpoint.safetensors" <<'PY' 2>&1 | tee "$out/checkpoint-python.txt"
import sys
sys.path.insert(0, "tests/cli")
import safetensors_stdlib
metadata, tensors = safetensors_stdlib.read(sys.argv[1])
print("checkpoint read from Python (standard library): %d tensors, epoch %s" % (len(tensors), metadata["hwaro.epoch"]))
try:
    import torch
    from safetensors.torch import load_file
except ImportError:
    print("the safetensors package is not installed here")
    sys.exit(0)
loaded = load_file(sys.argv[1])
if loaded.keys() != tensors.keys():
    sys.exit("safetensors.torch.load_file finds other names: %s" % sorted(loaded.keys() ^ tensors.keys()))
differ = [k for k in tensors if loaded[k].reshape(-1).view(torch.uint8).numpy().tobytes() != tensors[k][2]]
if differ:
    sys.exit("safetensors.torch.load_file reads other bytes for %s" % differ)
print("safetensors.torch.load_file: the same %d tensors, byte for byte" % len(loaded))
PY
  [ "${PIPESTATUS[0]}" -eq 0 ] || { echo "the checkpoint could not be read from Python"; status=1; }
  rm -f "$out"/*/checkpoint.safetensors  # the logs come back; the weights need not
fi

if skipped torch; then
  echo "PyTorch measurements skipped (HWARO_GPU_CHECK_SKIP)"
else
  step "the same measurements through PyTorch"
  # PyTorch brings its own libraries; the carried packages' must not shadow them.
  timeout 180 env -u LD_LIBRARY_PATH python3 scripts/torch_reference.py --out "$out/torch.json" 2>"$out/torch.log" ||
    { echo "torch_reference.py failed:"; tail -10 "$out/torch.log"; }
fi

sanitized=0
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
if skipped memcheck; then
  echo "memcheck skipped (HWARO_GPU_CHECK_SKIP)"
elif [ -n "$sanitizer" ]; then
  step "compute-sanitizer memcheck, HWARO_CUDA_ALLOC=native, on the CUDA tests (in parallel)"
  memchecked=()
  for t in build-gpu/tests/test_cuda_* build-gpu/tests/test_pinned_memory; do
    [ -x "$t" ] || continue
    HWARO_CUDA_ALLOC=native timeout 150 "$sanitizer" --tool memcheck --error-exitcode 3 "$t" --gtest_brief=1 \
      >"$out/sanitizer-$(basename "$t").log" 2>&1 &
    memchecked+=("$!:$(basename "$t")")
  done
  HWARO_CUDA_ALLOC=native timeout 150 "$sanitizer" --tool memcheck --error-exitcode 3 build-gpu/tests/test_parity \
    --gtest_brief=1 --gtest_filter="$group_cases" >"$out/sanitizer-test_parity.log" 2>&1 &
  memchecked+=("$!:test_parity")
  for entry in "${memchecked[@]}"; do
    if wait "${entry%%:*}"; then
      sanitized=$((sanitized + 1))
    else
      echo "${entry#*:}: compute-sanitizer found errors (or timed out)"
      tail -20 "$out/sanitizer-${entry#*:}.log"
      status=1
    fi
  done
else
  echo "compute-sanitizer not found: memcheck skipped" | tee "$out/sanitizer-missing.txt"
fi

step "summary"
printf '%-28s %s\n' "build" "ok" "tests" "$([ "$ctest_rc" -eq 0 ] && echo passed || echo FAILED)" \
  "gpu cases run" "$(grep -c '\[ *OK *\]' "$out/gpu-cases.txt" || true)" \
  "gpu cases skipped" "$(grep -c 'SKIPPED' "$out/gpu-cases.txt" || true)" \
  "sanitizer-clean binaries" "$sanitized"
echo
python3 scripts/gpu_table.py "$out/torch.json" "${bench_json[@]}" | tee "$out/table.txt"
save_logs
exit $status
