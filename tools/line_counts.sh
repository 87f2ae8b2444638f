#!/usr/bin/env bash
# Lines of code per layer (ARCHITECTURE.md: look at it when a layer jumps).
# Usage: tools/line_counts.sh
cd "$(dirname "$0")/.."
for dir in include/hwaro src/* tools examples tests bench scripts; do
  [ -d "$dir" ] || continue
  lines=$(find "$dir" -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.sh' -o -name '*.py' \) -print0 |
    xargs -0 cat 2>/dev/null | wc -l)
  printf '%6d  %s\n' "$lines" "$dir"
done
