#!/bin/bash
# Every default system and attention-int8 (the default preset with --precision int8) on EWT test and
# golden rules, clean and unpunctuated, one thread each, alone on the 2-core AMD EPYC host (2026-12-04, rerun at the end of the --teacher-model work).
set -eu
export HF_HUB_OFFLINE=1
systems=$(python -c "from segmenter.bench.systems import DEFAULT_SYSTEMS; print(' '.join(f'--system {s}' for s in DEFAULT_SYSTEMS))")
segmenter bench --dataset ewt-test --dataset golden-rules --condition both --threads 1 --no-progress \
  $systems --system attention-int8 --out benchmarks/results/ewt-test-golden-rules-rerun-2026-12-04
