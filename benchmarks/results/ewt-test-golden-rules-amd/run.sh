#!/bin/bash
# Every default system on EWT test and golden rules, clean and unpunctuated, one thread each, alone on
# a 2-core AMD EPYC (AVX512-BF16, no AMX), 2026-12-04, with the `fast` distilled from `accurate`.
set -eu
export HF_HUB_OFFLINE=1
segmenter bench --dataset ewt-test --dataset golden-rules --condition both --threads 1 --no-progress \
  --out benchmarks/results/ewt-test-golden-rules-amd
