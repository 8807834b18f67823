#!/usr/bin/env bash
# Start-up: `segmenter segment` on a one-line file, wall seconds and peak KB, five runs per setting,
# alternated, after one run of each (which builds the int8 graph and its cache entry if missing).
# Run alone on the machine, with the project's .venv: bash benchmarks/results/startup/run.sh > OUT.txt
set -euo pipefail
cd "$(dirname "$0")/../../.."
line="$(mktemp)"
trap 'rm -f "$line"' EXIT
echo "It rained all day. We stayed in." > "$line"
settings=("" "--precision bfloat16")  # runs-2026-12-04.txt had ("" "--precision int8"), before int8 was the default
for setting in "${settings[@]}"; do .venv/bin/segmenter segment $setting "$line" > /dev/null; done
echo "## start-up: segmenter segment [SETTING] on a one-line file, wall s and peak KB ($(date -u +%F))"
for _ in 1 2 3 4 5; do
  for setting in "${settings[@]}"; do
    /usr/bin/time -f "%e s wall %M KB  ${setting:-default}" \
      .venv/bin/segmenter segment $setting "$line" 2>&1 > /dev/null | tail -1
  done
done
