#!/bin/bash
# Main at 1408543 (linear weights reordered once) on the 2-core Intel Xeon host with AMX (presets in bfloat16 on
# the matrix units), on a quiet host: every default system (the three presets, signals, the unsupervised
# strategies, the spaCy component and every baseline) on EWT test and golden rules, every condition (clean,
# unpunctuated, lines, wrapped), one thread each, three interleaved rounds in fresh processes, chars/s the
# median round. Alone on the machine.
set -eu
export HF_HUB_OFFLINE=1
out=benchmarks/results/ewt-test-golden-rules-amx-2026-12-07
systems=$(python -c "from segmenter.bench.systems import DEFAULT_SYSTEMS; print(' '.join(f'--system {s}' for s in DEFAULT_SYSTEMS))")
segmenter bench --dataset ewt-test --dataset golden-rules --condition all --threads 1 --repeats 3 --no-progress \
  $systems --out $out
