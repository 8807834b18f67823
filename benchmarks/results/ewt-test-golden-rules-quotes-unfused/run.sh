#!/bin/bash
# The code of 2026-12-04 evening: quotes and brackets placed with their sentence, lists after a colon,
# int8 sessions without ONNX Runtime's SkipLayerNormalization fusion. Every default system plus
# attention-bfloat16 on EWT test and golden rules, every condition, one thread each; then two repeats of
# the speed rows; then two threads each, and one thread each with one busy companion process. Alone on
# the 2-core AMD EPYC host (AVX512-VNNI, no AMX).
set -eu
export HF_HUB_OFFLINE=1
out=benchmarks/results/ewt-test-golden-rules-quotes-unfused
systems=$(python -c "from segmenter.bench.systems import DEFAULT_SYSTEMS; print(' '.join(f'--system {s}' for s in DEFAULT_SYSTEMS))")
segmenter bench --dataset ewt-test --dataset golden-rules --condition all --threads 1 --no-progress \
  $systems --system attention-bfloat16 --out $out
speed="--system attention --system attention-bfloat16 --system spacy-parser"
for run in 1 2; do
  segmenter bench --dataset ewt-test --condition clean --threads 1 --no-progress $speed --out $out/repeat-$run
done
segmenter bench --dataset ewt-test --condition clean --threads 2 --no-progress $speed --out $out/threads-2
segmenter bench --dataset ewt-test --condition clean --threads 1 --busy 1 --no-progress $speed --out $out/threads-1-busy-1
