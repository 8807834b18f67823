#!/bin/bash
# The run behind README.md's results table from 2026-12-04: every default system on EWT test and golden
# rules, every condition, one thread each, alone on a 2-core AMD EPYC (AVX512-BF16, no AMX), with
# `accurate` reading windows every 125 tokens, `fast` at its dev-chosen thresholds and the new
# `fastest`; then our presets and the parser with one busy companion process
# (../ewt-test-threads-1-busy-1-stride-125).
set -eu
export HF_HUB_OFFLINE=1
segmenter bench --dataset ewt-test --dataset golden-rules --condition all --threads 1 --no-progress \
  --out benchmarks/results/ewt-test-golden-rules-stride-125
segmenter bench --dataset ewt-test --condition clean --threads 1 --busy 1 --no-progress --system attention \
  --system attention-fast --system attention-fastest --system spacy-parser \
  --out benchmarks/results/ewt-test-threads-1-busy-1-stride-125
