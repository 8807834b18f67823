"""Dev scores of the 12-layer pair with its two readers weighted: w for the 12-layer probe, 1 - w for MiniLM.

    python training/pair_weights.py [--ud ../shared/data/ud]

Computes each reader's gap probabilities on every dev text once (all-mpnet-base-v2's `accurate` read
alone, and MiniLM's `accurate` at its automatic precision), then for each weight of WEIGHTS takes the
weighted mean where both have a candidate (the one probability elsewhere), searches the two
thresholds as `training/dev_thresholds.py` does and prints the dev row at them
(segmenter/models/README.md, "The pair's weights"). A development tool: nothing in `segmenter`
imports it, and it reads dev files only.
"""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np
from dev_scores import dev_cells, header, markdown_row, ud_option
from dev_thresholds import GRID, row

from segmenter import Segmenter
from segmenter.segmenter import GapProbabilities

WEIGHTS = (0.3, 0.4, 0.5, 0.6, 0.7)
START = {"clean": 0.5, "corrupt": 0.3}  # the pair's thresholds, where each search starts


def weighted(large: GapProbabilities, small: GapProbabilities, w: float) -> GapProbabilities:
    """w * large + (1 - w) * small at the offsets both have; the one probability where one has it."""
    offsets = np.union1d(large.offsets, small.offsets)  # (G,)
    probs = np.zeros(len(offsets))
    weight = np.zeros(len(offsets))
    for gaps, share in ((large, w), (small, 1 - w)):
        at = np.searchsorted(offsets, gaps.offsets)
        probs[at] += share * np.asarray(gaps.probs, dtype=np.float64)
        weight[at] += share
    return GapProbabilities(offsets, (probs / weight).astype(np.float32))


@click.command()
@ud_option
def main(ud: Path) -> None:
    """Print one dev row per weight, at the thresholds searched for it."""
    pair = Segmenter(model="all-mpnet-base-v2")
    large, small = Segmenter(model="all-mpnet-base-v2", paired=False), pair.partner
    texts = dev_cells(ud)
    readers = []
    for _, items in texts:
        batch = [t.text for t in items]
        readers.append((large.gap_probabilities(batch), small.gap_probabilities(batch)))
    click.echo(header())
    for w in WEIGHTS:
        cells = [
            (
                name,
                [
                    (t, weighted(a, b, w), pair.condition_for(t.text))
                    for t, a, b in zip(items, la, sm, strict=True)
                ],
            )
            for (name, items), (la, sm) in zip(texts, readers, strict=True)
        ]
        best = dict(START)
        for which in ("clean", "corrupt"):
            scores = {t: row(pair, cells, {**best, which: t})[-3] for t in sorted({*GRID, best[which]})}
            best[which] = max(scores, key=lambda t: (scores[t], -abs(t - START[which])))  # noqa: B023
        click.echo(markdown_row(f"w {w:.1f}, thresholds {best}", row(pair, cells, best)))


if __name__ == "__main__":
    main()
