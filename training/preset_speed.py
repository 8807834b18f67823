"""Characters per second of presets or probe folders on EWT test text, one thread, alternated.

    python training/preset_speed.py accurate /path/to/candidate accurate@int8 [--rounds 3]
    python training/preset_speed.py accurate /path/to/candidate --condition corrupt
    python training/preset_speed.py --model all-mpnet-base-v2 /path/to/probe-folder

The speed side of the selection rules in models/README.md. Every probe is loaded once; then
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
from dev_scores import load, model_option  # noqa: E402  (a preset or probe folder, with an optional @PRECISION)

from segmenter import Segmenter  # noqa: E402
from segmenter.bench.datasets import evaluation_items, load_dataset  # noqa: E402


def ewt_test_texts(condition: str = "clean") -> list[str]:
    """The texts a speed row is timed on: EWT test, clean (every rule's speed bar) or unpunctuated."""
    return [item.text for item in evaluation_items(load_dataset("ewt-test"), condition)]


def alternated_rounds(segmenters: dict[str, Segmenter], texts: list[str], rounds: int) -> dict[str, str]:
    """Warm each segmenter up on two texts, then time `rounds` rounds of one `pipe` pass over `texts`
    per segmenter, in turn; per label, the markdown cells "median chars/s | seconds of each round"."""
    for segmenter in segmenters.values():
        list(segmenter.pipe(texts[:2]))  # pipe is lazy: list() runs it
    seconds: dict[str, list[float]] = {label: [] for label in segmenters}
    for _ in range(rounds):
        for label, segmenter in segmenters.items():
            start = time.perf_counter()
            list(segmenter.pipe(texts))
            seconds[label].append(time.perf_counter() - start)
    chars = sum(map(len, texts))
    return {
        label: f"{chars / statistics.median(passes):,.0f} | {', '.join(f'{s:.2f}' for s in passes)}"
        for label, passes in seconds.items()
    }


@click.command()
@click.argument("probes", nargs=-1, required=True)
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True)
@click.option(
    "--condition",
    type=click.Choice(["clean", "corrupt"]),
    default="clean",
    show_default=True,
    help="EWT test as written, or lowercased with its punctuation deleted.",
)
@model_option
def main(probes: tuple[str, ...], rounds: int, condition: str, model: str | None) -> None:
    """Print one markdown row per probe: median chars/s and the seconds of each round."""
    torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    cells = alternated_rounds(
        {probe: load(probe, model) for probe in probes}, ewt_test_texts(condition), rounds
    )
    threads = torch.get_num_threads()
    header = f"| probe | chars/s ({threads} thread, median, EWT test {condition}) | s per round |"
    click.echo(f"{header}\n|---|---|---|")
    for probe, row in cells.items():
        click.echo(f"| {probe} | {row} |")


if __name__ == "__main__":
    main()
