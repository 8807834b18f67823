#!/bin/bash
# Per-core speed with the parser's run-to-run swings averaged out: the attention presets and spaCy's
# parser on EWT test clean, one thread each, three interleaved rounds in fresh processes, the median
# round reported (results.json keeps each round). Then the same at two threads. Alone on the 2-core AMD
# EPYC host (AVX512-VNNI, no AMX), 2026-12-04.
set -eu
export HF_HUB_OFFLINE=1
out=benchmarks/results/ewt-test-speed-repeats-3
systems="--system attention --system attention-bfloat16 --system attention-fast --system attention-fastest --system spacy-parser"
segmenter bench --dataset ewt-test --condition clean --threads 1 --repeats 3 --no-progress $systems --out $out
segmenter bench --dataset ewt-test --condition clean --threads 2 --repeats 3 --no-progress $systems --out $out/threads-2
