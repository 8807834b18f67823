"""int8 linear layers against bfloat16 and float32: chars/s of the default preset at one thread.

    python training/int8_speed.py

Segments the first 120 EWT test documents (clean) with `accurate` in bfloat16, in float32, and in
float32 with every linear layer of the encoder dynamically quantised to int8
(`torch.ao.quantization.quantize_dynamic`); median of three passes after a warm-up; also counts the
documents whose spans equal float32's. Run it alone on the machine. A development tool: nothing in
`segmenter` imports it.
"""

from __future__ import annotations

import os

os.environ["OMP_NUM_THREADS"] = "1"  # before torch loads

import statistics  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402

from segmenter import Segmenter  # noqa: E402
from segmenter.bench.datasets import evaluation_items, load_dataset  # noqa: E402

DOCUMENTS = 120


def timed(segmenter: Segmenter, texts: list[str]) -> tuple[float, list[list[int]]]:
    """(chars/s, span starts per text) of `segmenter` over `texts`."""
    list(segmenter.pipe(texts[:2]))
    passes, spans = [], []
    for _ in range(3):
        start = time.perf_counter()
        spans = list(segmenter.pipe(texts))
        passes.append(time.perf_counter() - start)
    return sum(map(len, texts)) / statistics.median(passes), [[s.start for s in doc] for doc in spans]


def main() -> None:
    torch.set_num_threads(1)
    texts = [item.text for item in evaluation_items(load_dataset("ewt-test"), "clean")][:DOCUMENTS]
    speed, _ = timed(Segmenter(precision="bfloat16"), texts)
    print(f"bfloat16: {speed:,.0f} chars/s")
    segmenter = Segmenter(precision="float32")
    speed, reference = timed(segmenter, texts)
    print(f"float32: {speed:,.0f} chars/s")
    segmenter.encoder.model = torch.ao.quantization.quantize_dynamic(
        segmenter.encoder.model, {torch.nn.Linear}, dtype=torch.qint8
    )
    speed, quantised = timed(segmenter, texts)
    same = sum(a == b for a, b in zip(reference, quantised, strict=True))
    print(f"float32 + int8 linear layers: {speed:,.0f} chars/s; spans as float32 on {same}/{len(texts)}")


if __name__ == "__main__":
    main()
