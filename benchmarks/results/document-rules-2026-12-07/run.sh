#!/bin/sh
# Check after the document rules (reference lists, quote-marker lines, mail headers, chat stamps, emphasis,
# reStructuredText blocks, fillers) and the spoken threshold: real documents (dev, and test for reporting),
# EWT test and the Golden Rules in every condition, one thread per system, each in a fresh process.
segmenter bench --dataset realworld-dev --dataset realworld-test --dataset ewt-test --dataset golden-rules \
  --condition all --threads 1 --isolate \
  --system attention --system attention-fast --system attention-fastest --system pysbd \
  --system spacy-parser --system spacy-sentencizer --system punkt --system syntok --system blingfire \
  --system sentencex \
  --out benchmarks/results/document-rules-2026-12-07
