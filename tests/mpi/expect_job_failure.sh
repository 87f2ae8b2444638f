#!/usr/bin/env bash
# Usage: expect_job_failure.sh TEXT... -- MPIEXEC-COMMAND...
# Passes when the MPI job exits non-zero within 60 s (half the 120 s collective timeout the
# program sets, so the job's end came from the failing rank, not from a timeout) and its output
# carries every TEXT, and no rank reports finishing a collective alone.
set -u
needles=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do needles+=("$1"); shift; done
if [ $# -lt 2 ] || [ ${#needles[@]} -eq 0 ]; then
  echo "usage: expect_job_failure.sh TEXT... -- MPIEXEC-COMMAND..." >&2
  exit 2
fi
shift
start=$(date +%s)
output=$(timeout 60 "$@" 2>&1)
status=$?
echo "$output"
if [ "$status" -eq 124 ]; then echo "FAIL: the job hung for 60 s"; exit 1; fi
if [ "$status" -eq 0 ]; then echo "FAIL: the job exited 0"; exit 1; fi
for needle in "${needles[@]}"; do
  if ! grep -qF -- "$needle" <<<"$output"; then echo "FAIL: '$needle' is not in the output"; exit 1; fi
done
if grep -q "never should have" <<<"$output"; then echo "FAIL: rank 0 completed an all_reduce alone"; exit 1; fi
echo "the job ended after $(( $(date +%s) - start )) s with status $status and the expected messages"
