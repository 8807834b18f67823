#!/bin/bash
# The redesign into sub-packages with one reader tree and one backend choice, checked against the commit
# before it on one host (2-core AMD EPYC with AVX512-VNNI and AVX512-BF16, no AMX: presets at int8): every
# default system and the 12-layer pair (attention@all-mpnet-base-v2) on EWT test and golden rules, every
# condition, one thread each, one round in fresh processes per commit, run one commit after the other on
# a quiet host. Then the speed of the default, `fastest` and the spaCy parser on EWT test clean, three
# interleaved rounds per commit, the two commits alternating.
#   BEFORE: a checkout of 4426b46 with its own virtual environment (pip install -e .), AFTER: this one.
# Usage: bash run.sh BEFORE_CHECKOUT BEFORE_PYTHON AFTER_CHECKOUT AFTER_PYTHON
set -eu
export HF_HUB_OFFLINE=1
here=$(cd "$(dirname "$0")" && pwd)
before=$1 before_python=$2 after=$3 after_python=$4
systems=$("$after_python" -c "from segmenter.bench.systems import DEFAULT_SYSTEMS; print(' '.join(f'--system {s}' for s in DEFAULT_SYSTEMS))")
systems="$systems --system attention@all-mpnet-base-v2"
for side in before after; do
  checkout=${!side} python=${side}_python
  (cd "$checkout" && "$(dirname "${!python}")/segmenter" bench --dataset ewt-test --dataset golden-rules \
    --condition all --threads 1 --no-progress $systems --out "$here/$side")
done
for round in 1 2 3; do
  for side in before after; do
    checkout=${!side} python=${side}_python
    (cd "$checkout" && "$(dirname "${!python}")/segmenter" bench --dataset ewt-test --condition clean --threads 1 \
      --no-progress --system attention --system attention-fastest --system spacy-parser \
      --out "$here/speed-$side-$round")
  done
done
