#!/bin/bash
# Two repeats of the EWT test clean speed rows of ../ewt-test-golden-rules-stride-125, run right after
# it, alone on the same 2-core AMD EPYC (2026-12-04), to show how much single runs move on this host.
set -eu
export HF_HUB_OFFLINE=1
for run in 1 2; do
  segmenter bench --dataset ewt-test --condition clean --threads 1 --no-progress --system attention \
    --system attention-fast --system attention-fastest --system spacy-parser --system pysbd \
    --out benchmarks/results/ewt-test-threads-1-stride-125-repeats/run-$run
done
