"""Unpunctuated dev text read by two backbones together: the mean of their gap probabilities.

    python training/cross_ensemble.py [--cells unpunctuated|clean] [--ud ../shared/data/ud]

The gap probabilities of the MiniLM `accurate` preset (at its automatic precision; on punctuated text
its punctuated probe) and of the all-mpnet-base-v2 `accurate` probe on the six dev cells of one
condition (default: unpunctuated), matched by character offset:
their mean where both score a gap, the one probability where only one does. Prints the F1 of each
cell and their mean for each model alone at its own threshold, for each alone and the mean
at the threshold searched on a 0.05 grid over these cells (segmenter/models/README.md, "Unpunctuated
text read by the 12-layer and the 6-layer encoder together"). A development tool: nothing in
`segmenter` imports it, and it reads dev files only.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click
import numpy as np
from decode_rules import probabilities
from dev_scores import dev_cells, pooled_counts, ud_option
from dev_thresholds import GRID

from segmenter import Segmenter
from segmenter.decode import decode
from segmenter.paired import mean_gap_probabilities


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
def main(ud: Path, cells: str) -> None:
    """Print one markdown row per model and threshold: the six dev cells of --cells and their mean."""
    condition = cells
    cells = [(name, texts) for name, texts in dev_cells(ud) if name.endswith(f" {condition}")]
    small = Segmenter(preset="accurate")
    large = Segmenter(model="all-mpnet-base-v2", paired=False)  # its probe alone, as measured before the pair
    gaps = {
        "MiniLM accurate": [probabilities(small, [t.text for t in texts]) for _, texts in cells],
        "all-mpnet-base-v2 accurate": [probabilities(large, [t.text for t in texts]) for _, texts in cells],
    }
    gaps["mean of the two"] = [
        [mean_gap_probabilities([a, b]) for a, b in zip(x, y, strict=True)]
        for x, y in zip(gaps["MiniLM accurate"], gaps["all-mpnet-base-v2 accurate"], strict=True)
    ]
    click.echo("| reader | threshold | " + " | ".join(name for name, _ in cells) + f" | {condition} mean |")
    click.echo("|---" * (len(cells) + 3) + "|")
    for label, segmenter in (("MiniLM accurate", small), ("all-mpnet-base-v2 accurate", large)):
        row(label, segmenter, cells, gaps[label], None)
    for label in gaps:
        best = max(GRID, key=lambda t: row(label, small, cells, gaps[label], t))  # noqa: B023
        click.echo(f"best threshold for {label}: {best:.2f}")


if __name__ == "__main__":
    main()
