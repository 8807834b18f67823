"""Characters per second of presets or probe folders on EWT test clean text, one thread, alternated.

    python training/preset_speed.py accurate /path/to/candidate accurate@int8 [--rounds 3]

The speed side of the selection rules in segmenter/models/README.md. Every probe is loaded once; then
each round runs one pass of `Segmenter.pipe` over all texts per probe, in the order given, so that a
machine that slows down or speeds up during the run affects every probe alike; the row is the median
over rounds. Warm-up: two texts per probe before the first round. Run it alone on the machine. A
development tool: nothing in `segmenter` imports it.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import statistics  # noqa: E402
import time  # noqa: E402

import click  # noqa: E402
import torch  # noqa: E402
from dev_scores import load  # noqa: E402  (a preset or probe folder, with an optional @PRECISION)

from segmenter.bench.datasets import evaluation_items, load_dataset  # noqa: E402


@click.command()
@click.argument("probes", nargs=-1, required=True)
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True)
def main(probes: tuple[str, ...], rounds: int) -> None:
    """Print one markdown row per probe: median chars/s and the seconds of each round."""
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    texts = [item.text for item in evaluation_items(load_dataset("ewt-test"), "clean")]
    chars = sum(map(len, texts))
    segmenters = {probe: load(probe) for probe in probes}
    for segmenter in segmenters.values():
        list(segmenter.pipe(texts[:2]))  # pipe is lazy: list() runs it
    seconds: dict[str, list[float]] = {probe: [] for probe in probes}
    for _ in range(rounds):
        for probe, segmenter in segmenters.items():
            start = time.perf_counter()
            list(segmenter.pipe(texts))
            seconds[probe].append(time.perf_counter() - start)
    threads = torch.get_num_threads()
    click.echo(f"| probe | chars/s ({threads} thread, median) | s per round |\n|---|---|---|")
    for probe, passes in seconds.items():
        rounds_text = ", ".join(f"{s:.2f}" for s in passes)
        click.echo(f"| {probe} | {chars / statistics.median(passes):,.0f} | {rounds_text} |")


if __name__ == "__main__":
    main()
