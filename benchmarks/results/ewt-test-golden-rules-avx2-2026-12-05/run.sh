#!/bin/bash
# The code of 2026-12-05 with int8 as the automatic precision on AVX2 CPUs: every default system plus
# attention-float32 (the default's precision on this host before that change) on EWT test and golden
# rules, every condition (clean, unpunctuated, lines, wrapped), one thread each, three interleaved
# rounds in fresh processes, chars/s the median round (each round in results.json). Alone on a 2-core
# AMD EPYC host with AVX2 and no AVX512, VNNI or bfloat16 units (family 25, model 1).
set -eu
export HF_HUB_OFFLINE=1
systems=$(python -c "from segmenter.bench.systems import DEFAULT_SYSTEMS; print(' '.join(f'--system {s}' for s in DEFAULT_SYSTEMS))")
segmenter bench --dataset ewt-test --dataset golden-rules --condition all --threads 1 --repeats 3 --no-progress \
  $systems --system attention-float32 --out benchmarks/results/ewt-test-golden-rules-avx2-2026-12-05
