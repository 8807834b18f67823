#!/bin/bash
# The speed runs behind the README's "Speed at equal resources": start-up, contention, one thread
# against the parser. Run alone on the machine, from anywhere:
#   BASE_TREE=/path/to/checkout-of-c1c3381 benchmarks/results/contention/run.sh
# BASE_TREE is a checkout of the commit before the start-up work (its package comes first on
# PYTHONPATH). "default" runs the bench command without the CLI's entry point, which is what sets
# the passive OpenMP wait policy.
cd "$(dirname "$0")/../../.."
OUT=${OUT:-runs/speed}; mkdir -p $OUT
echo "The cat sat on the mat. It was happy." > $OUT/one.txt
{
for i in 1 2 3 4 5; do for tree in "$BASE_TREE" "$PWD"; do
  PYTHONPATH=$tree /usr/bin/time -f "$tree %e s wall %M KB" .venv/bin/segmenter segment $OUT/one.txt > /dev/null
done; done
} 2> $OUT/startup.txt
for t in 1 2; do for b in 0 1; do for policy in default PASSIVE; do
  [ $t = 1 ] && [ $policy = PASSIVE ] && continue
  if [ $policy = PASSIVE ]; then CMD=".venv/bin/segmenter bench"; else CMD=".venv/bin/python -c 'from benchmarks.cli import bench; bench()'"; fi
  echo "== policy=$policy threads=$t busy=$b" >> $OUT/contention.txt
  eval $CMD --system attention --system attention-fast --dataset ewt-test --condition clean --threads $t --busy $b --no-progress | grep "^| attention" >> $OUT/contention.txt
done; done; done
.venv/bin/segmenter bench --dataset ewt-test --condition clean --threads 1 --system attention --system attention-fast --system attention-signals --system spacy-parser --system pysbd --out benchmarks/results/ewt-test-threads-1 --no-progress > $OUT/bench1.txt 2>&1
.venv/bin/segmenter bench --dataset ewt-test --condition clean --threads 1 --busy 1 --system attention --system attention-fast --system spacy-parser --out benchmarks/results/ewt-test-threads-1-busy-1 --no-progress > $OUT/bench1busy.txt 2>&1
