#!/bin/bash
# Main at f78a597 (after the redesign and its review) on the 2-core AMD EPYC host with AVX512-VNNI and
# AVX512-BF16, no AMX: every default system (the presets, signals, the unsupervised strategies, the spaCy
# component and every baseline) on EWT test and golden rules, clean and unpunctuated, one thread each,
# three interleaved rounds in fresh processes, chars/s the median round. Alone on the machine.
set -eu
export HF_HUB_OFFLINE=1
out=benchmarks/results/ewt-test-golden-rules-vnni-2026-12-07
systems=$(python -c "from segmenter.bench.systems import DEFAULT_SYSTEMS; print(' '.join(f'--system {s}' for s in DEFAULT_SYSTEMS))")
segmenter bench --dataset ewt-test --dataset golden-rules --condition both --threads 1 --repeats 3 --no-progress \
  $systems --out $out
