#!/usr/bin/env bash
# Builds a small consumer project against hwaro with find_package(hwaro), once from an
# install prefix and once from the build tree, and runs it. Usage: check-package.sh <build-dir>
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$here/consumer" -B "$work/from-install" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/from-install" >/dev/null
LD_LIBRARY_PATH="$work/prefix/lib" "$work/from-install/consumer"

cmake -S "$here/consumer" -B "$work/from-build" -G Ninja -Dhwaro_DIR="$build" >/dev/null
cmake --build "$work/from-build" >/dev/null
"$work/from-build/consumer"
echo "check-package: find_package(hwaro) works from an install prefix and from the build tree"
