#!/usr/bin/env bash
# The README's first command: set up and build, then run the main job on the best device.
# For now the main job is `hwaro info` and the CPU demo of guide §3 (examples/move_to_device).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
build/bin/hwaro info
build/examples/move_to_device
