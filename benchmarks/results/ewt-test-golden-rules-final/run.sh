#!/bin/bash
# Every default system (all four presets as shipped at the end of 2026-12-04, with the baselines) on EWT
# test and golden rules, clean and unpunctuated, one thread each, alone on the 2-core AMD EPYC host.
set -eu
export HF_HUB_OFFLINE=1
segmenter bench --dataset ewt-test --dataset golden-rules --condition both --threads 1 --no-progress \
  --out benchmarks/results/ewt-test-golden-rules-final
