#!/bin/bash
# Main after the interrupt fix of 2026-12-05 (segmenter/io.py, segmenter/integrations/ray/output.py; models unchanged):
# every default system plus attention-float32 on EWT test and golden rules, clean and unpunctuated, one
# thread each, three interleaved rounds in fresh processes, chars/s the median round. Alone on the
# 2-core AMD EPYC host with AVX2 and no AVX512, VNNI or bfloat16 units (results.json's env names it).
set -eu
export HF_HUB_OFFLINE=1
systems=$(python -c "from segmenter.bench.systems import DEFAULT_SYSTEMS; print(' '.join(f'--system {s}' for s in DEFAULT_SYSTEMS))")
segmenter bench --dataset ewt-test --dataset golden-rules --condition both --threads 1 --repeats 3 --no-progress \
  $systems --system attention-float32 --out benchmarks/results/ewt-test-golden-rules-avx2-2026-12-05-late
