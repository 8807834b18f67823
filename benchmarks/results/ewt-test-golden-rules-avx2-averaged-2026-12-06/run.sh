#!/bin/bash
# Main after `accurate` began reading unpunctuated text with its own probe and a four-block probe averaged
# (models/README.md, "`accurate` reading unpunctuated text with a second, four-block probe"): every
# default system, attention-float32 and the 12-layer backbone paired with the default, on EWT test and golden
# rules, clean and unpunctuated, one thread each, three interleaved rounds in fresh processes, chars/s the median
# round. Alone on the 2-core AMD EPYC host with AVX2 and no AVX512, VNNI or bfloat16 units. The 12-layer backbone
# must be installed first (docs/mpnet.md).
set -eu
export HF_HUB_OFFLINE=1
systems=$(python -c "from segmenter.bench.systems import DEFAULT_SYSTEMS; print(' '.join(f'--system {s}' for s in DEFAULT_SYSTEMS))")
segmenter bench --dataset ewt-test --dataset golden-rules --condition both --threads 1 --repeats 3 --no-progress \
  $systems --system attention-float32 --system attention@all-mpnet-base-v2 \
  --out benchmarks/results/ewt-test-golden-rules-avx2-averaged-2026-12-06
