"""Speed of the default preset at one and two torch threads, alternated in one process.

    python training/thread_speed.py            # OpenMP's default wait policy (spinning)
    OMP_WAIT_POLICY=PASSIVE python training/thread_speed.py   # what the command line sets when busy

Prints chars/s of `Segmenter.pipe` over EWT test clean for 1, 2, 1, 2 threads (after a short warm-up),
so the effect of the thread count and of the OpenMP wait policy can be read on a quiet machine. A
development tool: nothing in `segmenter` imports it.
"""

from __future__ import annotations

import time

import torch

from segmenter import Segmenter
from segmenter.bench.datasets import evaluation_items, load_dataset


def main() -> None:
    texts = [item.text for item in evaluation_items(load_dataset("ewt-test"), "clean")]
    chars = sum(map(len, texts))
    segmenter = Segmenter()
    list(segmenter.pipe(texts[:20]))  # warm-up
    for threads in (1, 2, 1, 2):
        torch.set_num_threads(threads)
        start = time.perf_counter()
        list(segmenter.pipe(texts))
        print(f"{threads} thread(s): {chars / (time.perf_counter() - start):,.0f} chars/s")


if __name__ == "__main__":
    main()
