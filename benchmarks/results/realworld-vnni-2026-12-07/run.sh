#!/bin/sh
# Real documents (dev and test) and the regression check on EWT test and the Golden Rules, one run,
# one thread per system, each in a fresh process, alone on the machine.
segmenter bench --dataset realworld-dev --dataset realworld-test --dataset ewt-test --dataset golden-rules \
  --condition all --threads 1 --isolate \
  --system attention --system attention-fast --system attention-fastest --system pysbd \
  --system spacy-parser --system spacy-sentencizer --system punkt --system syntok --system blingfire \
  --system sentencex \
  --out benchmarks/results/realworld-vnni-2026-12-07
