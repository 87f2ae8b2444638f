#!/usr/bin/env bash
# Downloads, here (where Debian's archive is reachable), the Debian packages that building hwaro
# needs beyond a compiler, CMake and CUDA, into .gpu-debs/ (ignored by git). The lent GPU
# machine has no network and may lack them; a device call that names .gpu-debs in `carry`
# lets scripts/gpu-check.sh unpack them into a private prefix there (scripts/use-carried-debs.sh).
# MPI is left out: it is optional and its package tree is large; the GPU run needs NCCL only.
# Usage: scripts/fetch-gpu-debs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(pkg-config pkgconf pkgconf-bin libpkgconf3
          libopenblas-dev libopenblas-pthread-dev libopenblas0 libopenblas0-pthread libgfortran5 libquadmath0
          libdnnl-dev libdnnl2 ocl-icd-libopencl1
          libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian libcli11-dev nlohmann-json3-dev zlib1g-dev)
rm -rf .gpu-debs
mkdir -p .gpu-debs
# apt-get download writes into the current directory; as root it warns that its sandbox user
# cannot write there, which is harmless.
(cd .gpu-debs && apt-get download -qq "${packages[@]}" 2>&1 | grep -v -i 'unsandboxed' || true)
count=$(ls .gpu-debs/*.deb 2>/dev/null | wc -l)
[ "$count" -eq "${#packages[@]}" ] || { echo "fetch-gpu-debs: got $count of ${#packages[@]} packages" >&2; exit 1; }
echo "fetch-gpu-debs: ${count} packages, $(du -sh .gpu-debs | cut -f1), in .gpu-debs/"
