"""Dev scores of the lone-word rule of `segmenter.decode` at a range of `lone_word_below` values.

    python training/short_segments.py accurate fast fastest [--ud ../shared/data/ud]

For each preset (at its automatic precision) the gap probabilities of every dev text are computed
once; the texts are then decoded without the rule and with `lone_word_below` at each value of
BELOW, each text with its own condition's threshold, so the rows differ only by the rule. The columns
are those of `training/dev_scores.py`. A development tool: nothing in `segmenter` imports it, and it
reads dev files only.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click
import numpy as np
from decode_rules import probabilities
from dev_scores import dev_cells, header, markdown_row, pooled_counts, summary, ud_option

from segmenter import Segmenter
from segmenter.decode import decode

BELOW = tuple(round(q, 2) for q in np.arange(0.30, 0.901, 0.05))  # the values the selection rule names


def rows(segmenter: Segmenter, cells: list, gaps: list, below: float | None) -> list[float]:
    """`summary`'s numbers for the dev cells decoded with `lone_word_below=below`."""
    counted = []
    for (name, texts), cell_gaps in zip(cells, gaps, strict=True):
        found = []
        for item, g in zip(texts, cell_gaps, strict=True):
            config = dataclasses.replace(segmenter.decoding_for(item.text), lone_word_below=below)
            found.append([span.start for span in decode(item.text, g.offsets, g.probs, config)])
        counted.append((name, pooled_counts(texts, found)))
    return summary(counted)


@click.command()
@click.argument("presets", nargs=-1, required=True)
@ud_option
def main(presets: tuple[str, ...], ud: Path) -> None:
    """Print dev rows for each preset in PRESETS: without the rule, then at each value of BELOW."""
    cells = dev_cells(ud)
    click.echo(header())
    for preset in presets:
        segmenter = Segmenter(preset=preset)
        gaps = [probabilities(segmenter, [item.text for item in texts]) for _, texts in cells]
        for below in (None, *BELOW):
            label = f"{preset}, " + ("no rule" if below is None else f"lone_word_below {below:.2f}")
            click.echo(markdown_row(label, rows(segmenter, cells, gaps, below)))


if __name__ == "__main__":
    main()
