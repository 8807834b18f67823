#!/bin/bash
# Per-core speed once the default reads punctuated text with its narrowed probe: the attention presets
# and spaCy's parser on EWT test clean and unpunctuated, one thread each, three interleaved rounds in
# fresh processes, the median round (results.json keeps each round); then clean at two threads, and at
# one thread beside one busy process. Alone on the 2-core AMD EPYC host (AVX512-VNNI, no AMX), 2026-12-04.
set -eu
export HF_HUB_OFFLINE=1
out=benchmarks/results/ewt-test-speed-punctuated-probe
systems="--system attention --system attention-fast --system attention-fastest --system spacy-parser"
segmenter bench --dataset ewt-test --condition both --threads 1 --repeats 3 --no-progress $systems --out $out
segmenter bench --dataset ewt-test --condition clean --threads 2 --repeats 3 --no-progress $systems --out $out/threads-2
segmenter bench --dataset ewt-test --condition clean --threads 1 --busy 1 --repeats 3 --no-progress --system attention --system spacy-parser --out $out/threads-1-busy-1
