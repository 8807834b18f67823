#!/bin/bash
# The default (int8 on this CPU), the previous default (bfloat16) and spaCy's parser on EWT test clean:
# two threads each, then one thread each with one busy companion process (2-core AMD EPYC host, 2026-12-04).
set -eu
export HF_HUB_OFFLINE=1
out=benchmarks/results/ewt-test-threads-busy-int8-default
systems="--system attention --system attention-bfloat16 --system spacy-parser"
segmenter bench --dataset ewt-test --condition clean --threads 2 --no-progress $systems --out $out/threads-2
segmenter bench --dataset ewt-test --condition clean --threads 1 --busy 1 --no-progress $systems --out $out/threads-1-busy-1
