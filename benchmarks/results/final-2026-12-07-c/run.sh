#!/bin/sh
# Check after the chunking library (Segmenter.chunk) and the sentence-vector padding: real documents (dev), EWT test and the Golden
# Rules in every condition, one thread per system, each in a fresh process, alone on the machine.
segmenter bench --dataset realworld-dev --dataset ewt-test --dataset golden-rules \
  --condition all --threads 1 --isolate \
  --system attention --system attention-fast --system attention-fastest --system pysbd \
  --system spacy-parser --system spacy-sentencizer --system punkt --system syntok --system blingfire \
  --system sentencex \
  --out benchmarks/results/final-2026-12-07-c
