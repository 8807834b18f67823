#!/bin/bash
# Main on an Intel Xeon host with AMX (amx_bf16, amx_int8, AVX512-BF16 and AVX512-VNNI), where the presets'
# automatic precision is bfloat16 on the matrix units (int8 ran 3.2x slower there for `accurate` in one
# round of `python training/preset_speed.py accurate accurate@int8 --rounds 1`): the three presets, the
# parser and pySBD on EWT test and golden rules, clean, unpunctuated and lines, one thread each, three
# interleaved rounds in fresh processes, chars/s the median round; then the default and the parser on EWT
# test clean with one busy companion process. Alone on the 2-core machine.
set -eu
export HF_HUB_OFFLINE=1
out=benchmarks/results/ewt-test-golden-rules-amx-2026-12-06
segmenter bench --dataset ewt-test --dataset golden-rules --condition all --threads 1 --repeats 3 --no-progress \
  --system attention --system attention-fast --system attention-fastest --system spacy-parser --system pysbd --out $out
segmenter bench --dataset ewt-test --condition clean --threads 1 --busy 1 --repeats 3 --no-progress \
  --system attention --system spacy-parser --out $out/busy-1
