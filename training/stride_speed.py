"""Characters per second of presets at other window strides, on EWT test clean text, one thread.

    python training/stride_speed.py accurate fast --stride 96 --stride 125

The speed side of the window-overlap lever (its accuracy side: `training/dev_scores.py --stride`).
Timed as `segmenter bench` times a system: warm-up on two texts, then the median of three passes of
`Segmenter.pipe` over all texts. Run it alone on the machine. A development tool: nothing in
`segmenter` imports it.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import statistics  # noqa: E402
import time  # noqa: E402

import click  # noqa: E402
import torch  # noqa: E402

from segmenter import Segmenter  # noqa: E402
from segmenter.bench.datasets import evaluation_items, load_dataset  # noqa: E402
from segmenter.config import WindowConfig  # noqa: E402

PASSES = 3


@click.command()
@click.argument("presets", nargs=-1, required=True)
@click.option("--stride", "strides", type=click.IntRange(min=1), multiple=True, required=True)
def main(presets: tuple[str, ...], strides: tuple[int, ...]) -> None:
    """Print one markdown row per preset and stride: chars/s and seconds per pass."""
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    texts = [item.text for item in evaluation_items(load_dataset("ewt-test"), "clean")]
    chars = sum(map(len, texts))
    threads = torch.get_num_threads()
    click.echo(f"| preset | stride | chars/s ({threads} thread) | s per pass |\n|---|---|---|---|")
    for preset in presets:
        segmenter = Segmenter(preset=preset)
        size = segmenter.window.size
        for stride in strides:
            segmenter.scorer.window = WindowConfig(size=size, stride=stride)
            list(segmenter.pipe(texts[:2]))  # pipe is lazy: list() runs it
            passes = []
            for _ in range(PASSES):
                start = time.perf_counter()
                list(segmenter.pipe(texts))
                passes.append(time.perf_counter() - start)
            seconds = statistics.median(passes)
            click.echo(f"| {preset} | {stride} | {chars / seconds:,.0f} | {seconds:.2f} |")


if __name__ == "__main__":
    main()
