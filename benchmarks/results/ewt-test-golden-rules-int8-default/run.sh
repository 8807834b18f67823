#!/bin/bash
# Every default system (the default preset now runs int8 on this CPU: AVX512-VNNI, no AMX) and
# attention-bfloat16 (the default preset in bfloat16, the previous default) on EWT test and golden
# rules, every condition (clean, unpunctuated, lines, wrapped), one thread each, alone on the 2-core AMD EPYC host (2026-12-04).
set -eu
export HF_HUB_OFFLINE=1
systems=$(python -c "from segmenter.bench.systems import DEFAULT_SYSTEMS; print(' '.join(f'--system {s}' for s in DEFAULT_SYSTEMS))")
segmenter bench --dataset ewt-test --dataset golden-rules --condition all --threads 1 --no-progress \
  $systems --system attention-bfloat16 --out benchmarks/results/ewt-test-golden-rules-int8-default
