#!/bin/bash
# The `fast` distilled from `accurate` (2026-12-04) beside the default and two baselines, in one run,
# one thread per system, alone on a 2-core AMD EPYC (AVX512-BF16, no AMX): README.md's `fast` row.
set -eu
export HF_HUB_OFFLINE=1
segmenter bench --dataset ewt-test --dataset golden-rules --condition all --threads 1 --no-progress \
  --system attention --system attention-fast --system spacy-parser --system pysbd \
  --out benchmarks/results/fast-distilled
