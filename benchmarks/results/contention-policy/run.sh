#!/bin/bash
# The speed runs behind docs/benchmarks.md's "A busy machine" (2026-12-03, the wait policy chosen at
# start-up): the wait policies side by side, start-up, and the default, `fast` and the parser at one
# and two threads, quiet and with one busy companion. Run alone on the machine, from anywhere.
cd "$(dirname "$0")/../../.."
HERE=benchmarks/results/contention-policy
benchmarks/results/contention/wait_policies.sh > $HERE/wait-policies.txt
echo "The cat sat on the mat. It was happy." > /tmp/one-line.txt
for i in 1 2 3 4 5; do
  /usr/bin/time -f "%e s wall %M KB" .venv/bin/segmenter segment /tmp/one-line.txt > /dev/null
done 2> $HERE/startup.txt
for threads in 1 2; do for busy in 0 1; do
  .venv/bin/segmenter bench --dataset ewt-test --condition clean --threads $threads --busy $busy \
    --no-progress --system attention --system attention-fast --system spacy-parser \
    --out $HERE/threads-$threads-busy-$busy > /dev/null
done; done
