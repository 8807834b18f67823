#!/bin/bash
# The `signals` preset distilled from `accurate` (2026-12-04), with spaCy's parser in the same run for the
# speed ratio: EWT test and golden rules, every condition, one thread each, alone on the 2-core AMD
# EPYC of ../ewt-test-golden-rules-stride-125 (whose other rows are in README.md).
set -eu
export HF_HUB_OFFLINE=1
segmenter bench --dataset ewt-test --dataset golden-rules --condition all --threads 1 --no-progress \
  --system attention-signals --system spacy-parser --out benchmarks/results/signals-distilled
