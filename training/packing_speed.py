"""Characters per second of presets with their bfloat16 linear weights reordered once and without.

    python training/packing_speed.py accurate fast fastest [--rounds 3] [--condition corrupt]

Measures `segmenter.encoder.torch.packed_linear`: per preset, a segmenter as it loads now and one loaded with
packing switched off, both at bfloat16, timed in alternated rounds of one `Segmenter.pipe` pass over
EWT test (one thread, as `preset_speed.py`); it also says whether their spans are the same (offsets
and scores). Run it alone on the machine. A development tool: nothing in `segmenter` imports it.
"""

from __future__ import annotations

import contextlib
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from unittest import mock  # noqa: E402

import click  # noqa: E402
from preset_speed import alternated_rounds, ewt_test_texts  # noqa: E402

from segmenter import Segmenter  # noqa: E402


def opened(preset: str, packed: bool, texts: list[str]) -> Segmenter:
    """A bfloat16 segmenter of `preset` with every encoder it reads opened (on a clean and an
    unpunctuated text), packed or not."""
    unpacked = mock.patch("segmenter.encoder.torch.packed_linear.packing_available", return_value=False)
    switch = contextlib.nullcontext() if packed else unpacked
    with switch:
        segmenter = Segmenter(preset=preset, precision="bfloat16")
        list(segmenter.pipe([*texts[:2], *ewt_test_texts("corrupt")[:2]]))
    return segmenter


@click.command()
@click.argument("presets", nargs=-1, required=True)
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--condition", type=click.Choice(["clean", "corrupt"]), default="clean", show_default=True)
def main(presets: tuple[str, ...], rounds: int, condition: str) -> None:
    texts = ewt_test_texts(condition)
    segmenters = {}
    for preset in presets:
        segmenters[f"{preset} packed"] = opened(preset, True, texts)
        segmenters[f"{preset} unpacked"] = opened(preset, False, texts)
    print(f"EWT test {condition}, one thread, {rounds} alternated rounds")
    for preset in presets:
        packed, unpacked = segmenters[f"{preset} packed"], segmenters[f"{preset} unpacked"]
        same = list(packed.pipe(texts)) == list(unpacked.pipe(texts))
        print(f"{preset}: same spans and scores: {same}")
    print("| segmenter | chars/s (median) | seconds per round |\n|---|---|---|")
    for label, cells in alternated_rounds(segmenters, texts, rounds).items():
        print(f"| {label} | {cells} |")


if __name__ == "__main__":
    main()
