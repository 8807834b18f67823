#!/bin/bash
# The speed rows again (EWT test clean, one thread each, alone), twice, right after
# ewt-test-golden-rules-int8-default: the default (int8 here), the same preset in bfloat16, the parser.
set -eu
export HF_HUB_OFFLINE=1
for run in 1 2; do
  segmenter bench --dataset ewt-test --condition clean --threads 1 --no-progress \
    --system attention --system attention-bfloat16 --system spacy-parser \
    --out benchmarks/results/ewt-test-int8-default-repeats/run-$run
done
