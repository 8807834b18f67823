#!/bin/bash
# The README's results table: main at 676a412 (after the redesign) on the 2-core AMD EPYC host with
# AVX512-VNNI and AVX512-BF16, no AMX (accurate and fast at int8, fastest in bfloat16, the 12-layer
# pair in bfloat16 beside the default at int8): the presets, the 12-layer pair and the baselines the README
# shows, on EWT test and golden rules, every condition, one thread each, three interleaved rounds in fresh
# processes, chars/s the median round. Alone on the machine.
set -eu
export HF_HUB_OFFLINE=1
out=benchmarks/results/readme-vnni-2026-12-07
segmenter bench --dataset ewt-test --dataset golden-rules --condition all --threads 1 --repeats 3 --no-progress \
  --system attention --system attention-fast --system attention-fastest --system attention@all-mpnet-base-v2 \
  --system spacy-parser --system pysbd --system punkt --out $out
