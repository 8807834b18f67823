#!/bin/bash
# Main after the paired reader (segmenter/readers/paired.py, segmenter/readers/stream.py, segmenter/api.py and the swallowed-
# interrupt change in segmenter/io.py; MiniLM models unchanged): every default system, attention-float32 and the
# 12-layer backbone paired with the default, on EWT test and golden rules, clean and unpunctuated, one thread each,
# three interleaved rounds in fresh processes, chars/s the median round. Alone on the 2-core AMD EPYC host with
# AVX2 and no AVX512, VNNI or bfloat16 units. The 12-layer backbone must be installed first (docs/mpnet.md).
set -eu
export HF_HUB_OFFLINE=1
systems=$(python -c "from segmenter.bench.systems import DEFAULT_SYSTEMS; print(' '.join(f'--system {s}' for s in DEFAULT_SYSTEMS))")
segmenter bench --dataset ewt-test --dataset golden-rules --condition both --threads 1 --repeats 3 --no-progress \
  $systems --system attention-float32 --system attention@all-mpnet-base-v2 \
  --out benchmarks/results/ewt-test-golden-rules-avx2-paired-2026-12-05
