#!/bin/bash
# On the AVX2 host (AMD EPYC family 25 model 1: AVX2, no AVX512, VNNI or bfloat16 units), once `fastest`
# runs int8 there too: `fastest` and spaCy's parser on EWT test and golden rules, every condition, one
# thread each; then the presets and the parser on EWT test clean at two threads each, and the default
# and the parser at one thread beside one busy process. Three interleaved rounds in fresh processes,
# the median round (results.json keeps each round). Alone on the machine, 2026-12-05.
set -eu
export HF_HUB_OFFLINE=1
out=benchmarks/results/ewt-test-speed-avx2-2026-12-05
segmenter bench --dataset ewt-test --dataset golden-rules --condition all --threads 1 --repeats 3 --no-progress \
  --system attention-fastest --system spacy-parser --out $out
systems="--system attention --system attention-fast --system attention-fastest --system spacy-parser"
segmenter bench --dataset ewt-test --condition clean --threads 2 --repeats 3 --no-progress $systems --out $out/threads-2
segmenter bench --dataset ewt-test --condition clean --threads 1 --busy 1 --repeats 3 --no-progress --system attention --system spacy-parser --out $out/threads-1-busy-1
