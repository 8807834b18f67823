"""Dev scores of the decoder's structural rules, each on its own: one row per preset and rule set.

    python training/decode_rules.py accurate fast [--ud ../shared/data/ud]

The rules (`segmenter.decode.decoder`): "items" (every later item of an enumeration that opens the text, a
line or follows a colon opens a segment), "units" (no boundary inside a URL, address, number, path and
the other units of `segmenter.decode.units`),
"bullets" (a bulleted line of a list opens a segment) and "rule lines" (a line of symbols such as "--"
is a segment of its own). For each preset the gap probabilities of every dev text are computed once;
then the texts are decoded with no rule, with each rule alone and with all of them, so the rows differ
only by the decoder. The columns are those of `training/dev_scores.py`. A development tool: nothing in
`segmenter` imports it, and it reads dev files only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock

import click
from dev_scores import dev_cells, header, markdown_row, pooled_counts, summary, ud_option

from segmenter.api import TEXTS_PER_CHUNK, Segmenter
from segmenter.decode import line_rules, units
from segmenter.decode.decoder import Decoder

RULES = ("items", "units", "bullets", "rule lines")


@contextmanager
def only_rules(kept: tuple[str, ...]) -> Iterator[None]:
    """Switch off, for the duration, every rule of RULES not in `kept`."""
    switches = {
        "items": (Decoder, "_open_item", lambda self, pending, site: None),
        "units": (units, "unit_spans", lambda text, start, stop, before: ([], before)),
        "bullets": (line_rules, "bulleted_line", lambda line: False),
        "rule lines": (line_rules, "rule_line", lambda line: False),
    }
    with ExitStack() as stack:
        for rule in RULES:
            if rule not in kept:
                owner, name, off = switches[rule]
                stack.enter_context(mock.patch.object(owner, name, off))
        yield


def probabilities(segmenter: Segmenter, texts: list[str]) -> list:
    """Gap probabilities of `texts` in the chunks `Segmenter.pipe` batches together (the same numbers
    `training/dev_scores.py` decodes)."""
    found = []
    for start in range(0, len(texts), TEXTS_PER_CHUNK):
        found += segmenter.gap_probabilities(texts[start : start + TEXTS_PER_CHUNK])
    return found


@click.command()
@click.argument("presets", nargs=-1, required=True)
@ud_option
def main(presets: tuple[str, ...], ud: Path) -> None:
    """Print dev rows for each preset in PRESETS: no rule, each rule alone, all rules."""
    cells = dev_cells(ud)
    click.echo(header())
    variants = [("no rule", ()), *((f"{rule} only", (rule,)) for rule in RULES), ("all rules", RULES)]
    for preset in presets:
        segmenter = Segmenter(preset=preset)
        gaps = [probabilities(segmenter, [item.text for item in texts]) for _, texts in cells]
        for label, kept in variants:
            with only_rules(kept):
                counted = []
                for (name, texts), cell_gaps in zip(cells, gaps, strict=True):
                    spans = [segmenter.decode(item.text, g) for item, g in zip(texts, cell_gaps, strict=True)]
                    counted.append(
                        (name, pooled_counts(texts, [[s.start for s in found] for found in spans]))
                    )
            click.echo(markdown_row(f"{preset}, {label}", summary(counted)))


if __name__ == "__main__":
    main()
