"""Dev text read by several readers together: the mean of their gap probabilities.

    python training/cross_ensemble.py [--cells unpunctuated|clean] [--reader SPEC ...] [--ud UD_FOLDER]

The gap probabilities of each reader on the six dev cells of one condition (default: unpunctuated),
matched by character offset: their mean where several score a gap, the one probability where only one
does. A reader SPEC is a preset or probe folder of the default backbone, or `MODEL:PRESET` for another
backbone, optionally `@PRECISION` (`blocks-4@int8`; default: its automatic precision), read alone
(a probe's `paired_with` partner is not added). Without --reader: the MiniLM `accurate` preset (on
punctuated text its punctuated probe) and the all-mpnet-base-v2 `accurate` probe
(models/README.md, "Unpunctuated text read by the 12-layer and the 6-layer encoder
together"). Prints the F1 of each cell and their mean for each reader at its own threshold, then, at
the threshold searched on a 0.05 grid over these cells, for each reader and for the mean of the first
k readers (k from 2 to all). Decoding settings other than the threshold are the first reader's. A
development tool: nothing in `segmenter` imports it, and it reads dev files only.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click
import numpy as np
from decode_rules import probabilities
from dev_scores import dev_cells, load, pooled_counts, ud_option
from dev_thresholds import GRID

from segmenter import Segmenter
from segmenter.decode.decoder import decode
from segmenter.readers.candidates import mean_gap_probabilities


def cell_f1(segmenter: Segmenter, texts: list, gaps: list, threshold: float | None) -> float:
    """Pooled F1 of one cell's texts decoded at `threshold` (None: the segmenter's own for each text)."""
    found = []
    for item, g in zip(texts, gaps, strict=True):
        config = segmenter.decoding_for(item.text)
        if threshold is not None:
            config = dataclasses.replace(config, threshold=threshold)
        found.append([span.start for span in decode(item.text, g.offsets, g.probs, config)])
    return pooled_counts(texts, found)[0].f1


def row(label: str, segmenter: Segmenter, cells: list, gaps: list, threshold: float | None) -> float:
    f1 = [cell_f1(segmenter, texts, g, threshold) for (_, texts), g in zip(cells, gaps, strict=True)]
    shown = "own" if threshold is None else f"{threshold:.2f}"
    click.echo(f"| {label} | {shown} | " + " | ".join(f"{x:.3f}" for x in f1) + f" | {np.mean(f1):.4f} |")
    return float(np.mean(f1))


@click.command()
@ud_option
@click.option(
    "--cells",
    type=click.Choice(["unpunctuated", "clean"]),
    default="unpunctuated",
    show_default=True,
    help="Which six dev cells to read.",
)
@click.option(
    "--reader",
    "readers",
    multiple=True,
    default=("accurate", "all-mpnet-base-v2:accurate"),
    show_default=True,
    help="A preset or probe folder, or MODEL:PRESET; repeat for each reader.",
)
def main(ud: Path, cells: str, readers: tuple[str, ...]) -> None:
    """Print one markdown row per reader and threshold: the six dev cells of --cells and their mean."""
    condition = cells
    cells = [(name, texts) for name, texts in dev_cells(ud) if name.endswith(f" {condition}")]
    segmenters = {spec: reader(spec) for spec in readers}
    gaps = {
        spec: [probabilities(segmenter, [t.text for t in texts]) for _, texts in cells]
        for spec, segmenter in segmenters.items()
    }
    for k in range(2, len(readers) + 1):
        # gaps[label][cell][text]: the mean of the first k readers' probabilities for that text
        gaps[f"mean of the first {k}"] = [
            [mean_gap_probabilities(list(each)) for each in zip(*per_reader, strict=True)]
            for per_reader in zip(*(gaps[spec] for spec in readers[:k]), strict=True)
        ]
    first = segmenters[readers[0]]
    click.echo("| reader | threshold | " + " | ".join(name for name, _ in cells) + f" | {condition} mean |")
    click.echo("|---" * (len(cells) + 3) + "|")
    for spec, segmenter in segmenters.items():
        row(spec, segmenter, cells, gaps[spec], None)
    for label in gaps:
        best = max(GRID, key=lambda t: row(label, first, cells, gaps[label], t))  # noqa: B023
        click.echo(f"best threshold for {label}: {best:.2f}")


def reader(spec: str) -> Segmenter:
    """The segmenter a --reader SPEC names, read alone (no `paired_with` partner)."""
    model, _, probe = ("", "", spec) if Path(spec.partition("@")[0]).is_dir() else spec.rpartition(":")
    return load(probe, model or None, paired=False)


if __name__ == "__main__":
    main()
