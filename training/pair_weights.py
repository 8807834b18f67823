"""Dev scores of the 12-layer pair with its two readers weighted: w for the 12-layer probe, 1 - w for MiniLM.

    python training/pair_weights.py [--ud ../shared/data/ud]

Computes each reader's gap probabilities on every dev text once (all-mpnet-base-v2's `accurate` read
alone, and MiniLM's `accurate` at its automatic precision), then for each weight of WEIGHTS takes the
weighted mean where both have a candidate (the one probability elsewhere), searches the two
thresholds as `training/dev_thresholds.py` does and prints the dev row at them
(models/README.md, "The pair's weights"). A development tool: nothing in `segmenter`
imports it, and it reads dev files only.
"""

from __future__ import annotations

from pathlib import Path

import click
from dev_scores import dev_cells, header, markdown_row, ud_option
from dev_thresholds import row, search

from segmenter import Segmenter
from segmenter.readers.candidates import GapProbabilities, mean_by_offset

WEIGHTS = (0.3, 0.4, 0.5, 0.6, 0.7)
START = {"clean": 0.5, "corrupt": 0.3}  # the pair's thresholds, where each search starts


def weighted(large: GapProbabilities, small: GapProbabilities, w: float) -> GapProbabilities:
    """w * large + (1 - w) * small at the offsets both have; the one probability where one has it."""
    offsets, probs = mean_by_offset([large.offsets, small.offsets], [large.probs, small.probs], [w, 1 - w])
    return GapProbabilities(offsets, probs)


@click.command()
@ud_option
def main(ud: Path) -> None:
    """Print one dev row per weight, at the thresholds searched for it."""
    # each reader loaded once; the decoding settings other than the thresholds are the same for all
    large, small = Segmenter(model="all-mpnet-base-v2", paired=False), Segmenter(preset="accurate")
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
                    (t, weighted(a, b, w), small.condition_for(t.text))
                    for t, a, b in zip(items, la, sm, strict=True)
                ],
            )
            for (name, items), (la, sm) in zip(texts, readers, strict=True)
        ]
        best = search(small, cells, START, ["clean", "corrupt"])
        click.echo(markdown_row(f"w {w:.1f}, thresholds {best}", row(small, cells, best)))


if __name__ == "__main__":
    main()
