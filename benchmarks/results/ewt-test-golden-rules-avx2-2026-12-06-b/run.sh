#!/bin/bash
# Main after the averaged probe's member began opening on first use and the 12-layer pair's unpunctuated
# threshold was searched again (0.30 -> 0.35; models/README.md, "The pair's thresholds after its
# partner changed"): every default system, attention-float32 and the 12-layer backbone paired with the default,
# on EWT test and golden rules, clean and unpunctuated, one thread each, three interleaved rounds in fresh
# processes, chars/s the median round; then the default and the parser on EWT test clean with one busy
# companion process. Alone on the 2-core AMD EPYC host with AVX2 and no AVX512, VNNI or bfloat16 units. The
# 12-layer backbone must be installed first (docs/mpnet.md).
set -eu
export HF_HUB_OFFLINE=1
out=benchmarks/results/ewt-test-golden-rules-avx2-2026-12-06-b
systems=$(python -c "from segmenter.bench.systems import DEFAULT_SYSTEMS; print(' '.join(f'--system {s}' for s in DEFAULT_SYSTEMS))")
segmenter bench --dataset ewt-test --dataset golden-rules --condition both --threads 1 --repeats 3 --no-progress \
  $systems --system attention-float32 --system attention@all-mpnet-base-v2 --out $out
segmenter bench --dataset ewt-test --condition clean --threads 1 --busy 1 --repeats 3 --no-progress \
  --system attention --system spacy-parser --out $out/busy-1
