#!/usr/bin/env bash
# The README's first command: set up and build, fetch Fashion-MNIST, then run the main job.
# `hwaro train` is not written yet (issue 6); until then the main job is `hwaro info` and
# the CPU demo of guide §3 (examples/move_to_device), after the data set is in place.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
scripts/fetch-data.sh fashion-mnist
build/bin/hwaro info
build/examples/move_to_device
