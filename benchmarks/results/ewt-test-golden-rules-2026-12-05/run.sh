#!/bin/bash
# The code of 2026-12-05 (the default as of 2026-12-04, unchanged): every
# default system plus attention-bfloat16 on EWT test and golden rules, every condition (clean,
# unpunctuated, lines, wrapped), one thread each, three interleaved rounds in fresh processes, chars/s
# the median round (each round in results.json). Alone on the 2-core AMD EPYC host (AVX512-VNNI, no AMX).
set -eu
export HF_HUB_OFFLINE=1
systems=$(python -c "from segmenter.bench.systems import DEFAULT_SYSTEMS; print(' '.join(f'--system {s}' for s in DEFAULT_SYSTEMS))")
segmenter bench --dataset ewt-test --dataset golden-rules --condition all --threads 1 --repeats 3 --no-progress \
  $systems --system attention-bfloat16 --out benchmarks/results/ewt-test-golden-rules-2026-12-05
