"""How far a window's boundary probabilities depend on what it is batched with (docs/decoding.md).

    python training/batch_invariance.py [--docs 40] [--batch 16] [--threads 1]
        [--precision bfloat16 float32 int8] [--pipe-precision auto int8]

Two measurements on UD English-EWT test documents (clean text), default preset:
1. windows: the first `--docs` documents' first windows, each scored alone and inside one batch of
   `--batch` windows (padded to the longest), in bfloat16 (where the CPU has it) and float32; counts
   windows whose probabilities differ bitwise, and the largest difference.
2. pipe against segment: every document, `Segmenter.pipe` (windows of many documents share batches)
   against `segment` on each document alone; counts documents whose offsets differ and whose scores
   differ.
Prints plain text; reads no training data and writes nothing.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from segmenter import Segmenter
from segmenter.gold.corpus import read_conllu
from segmenter.readers.windows import plan

TEST_FILE = Path(__file__).resolve().parents[1] / "benchmarks/data/ud_english_ewt/en_ewt-ud-test.conllu"


def window_differences(texts: list[str], precision: str, batch_size: int) -> tuple[int, int, float]:
    """(windows compared, windows whose probabilities differ bitwise, largest absolute difference)."""
    segmenter = Segmenter(precision=precision)
    scorer = segmenter.scorer
    tokens = [scorer.tokenize(text) for text in texts]
    windows = [plan(len(t), scorer.window, text=i)[0] for i, t in enumerate(tokens) if len(t) >= 2]
    differing, largest = 0, 0.0
    for start in range(0, len(windows), batch_size):
        batch = windows[start : start + batch_size]
        together = scorer.score(tokens, batch)
        for window, in_batch in zip(batch, together, strict=True):
            (alone,) = scorer.score(tokens, [window])
            if not np.array_equal(alone, in_batch):
                differing += 1
                largest = max(largest, float(np.abs(alone - in_batch).max()))
    return len(windows), differing, largest


def pipe_against_segment(texts: list[str], precision: str = "auto") -> tuple[int, int, int]:
    """(documents, documents whose offsets differ, documents whose scores differ)."""
    segmenter = Segmenter(precision=precision)
    offsets_differ = scores_differ = 0
    for text, pooled in zip(texts, segmenter.pipe(texts), strict=True):
        alone = segmenter.segment(text)
        offsets_differ += [(s.start, s.end) for s in alone] != [(s.start, s.end) for s in pooled]
        scores_differ += [s.score for s in alone] != [s.score for s in pooled]
    return len(texts), offsets_differ, scores_differ


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=40, help="documents whose first window is compared")
    parser.add_argument("--batch", type=int, default=16, help="windows per shared batch")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--precision", nargs="+", default=["bfloat16", "float32"], help="for measurement 1")
    parser.add_argument("--pipe-precision", nargs="+", default=["auto"], help="for measurement 2")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    texts = [doc.text for doc in read_conllu(TEST_FILE)]
    for precision in args.precision:
        n, differing, largest = window_differences(texts[: args.docs], precision, args.batch)
        print(
            f"windows, {precision}: {differing} of {n} differ alone vs in a batch of {args.batch} "
            f"(largest difference {largest:.2e})"
        )
    for precision in args.pipe_precision:
        n, offsets, scores = pipe_against_segment(texts, precision)
        print(
            f"pipe vs segment on EWT test clean ({precision}): offsets differ in {offsets} of {n} "
            f"documents, scores in {scores}"
        )


if __name__ == "__main__":
    main()
