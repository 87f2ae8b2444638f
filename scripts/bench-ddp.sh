#!/usr/bin/env bash
# DistributedDataParallel over MPI on this machine: build/bench/ddp_scaling under 1 rank, then
# 2 (bench/ddp_scaling.cpp says what it measures). Usage: scripts/bench-ddp.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
flags=()
# OpenMPI refuses root without these; --oversubscribe lets ranks share cores.
[ "$(id -u)" -ne 0 ] || { flags+=(--allow-run-as-root); export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; }
flags+=(--oversubscribe)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
for n in 1 2; do
  mpirun -np "$n" "${flags[@]}" "$build/bench/ddp_scaling"
done
