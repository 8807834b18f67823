"""Score probes on the dev data the shipped presets were chosen on, one table row per probe.

    python training/dev_scores.py accurate fast /path/to/probe-folder [--ud ../shared/data/ud]

Each argument is a preset of the default backbone or a probe folder. The row has the columns of the
tables in segmenter/models/README.md, all boundary F1 as `segmenter bench` computes it:

- ParTUT, ESLSpok and ATIS dev (no preset trains on them): clean / unpunctuated;
- the 71 gold documents of EWT, GUM and LinES dev that every tuned preset holds out (`segmenter train`'s
  split with `--split-seed 0`, holdout 0.2), EWT apart from GUM + LinES: clean / unpunctuated / in lines
  (each paragraph on a line of its own) / hard-wrapped (the width `segmenter train` gives the document);
- "mean of 6" over the first six cells, "held-out mean" over the four held-out clean and unpunctuated
  cells, and the means of the two held-out "lines" and "wrapped" cells;
- "unmarked R": the recall at the held-out clean gold boundaries that no sentence-final punctuation
  marks (`segmenter.corpus.is_marked`), EWT and GUM + LinES pooled.

It reads the treebanks from --ud (the UD_English-* folders). A development tool: nothing in `segmenter`
imports it, and it only reads dev files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import click
import numpy as np

from benchmarks.datasets import evaluation_items, load_dataset
from benchmarks.metrics import Counts, score, unmarked_counts
from segmenter import Segmenter
from segmenter.corpus import Document, corrupt_document, with_line_breaks, wrapped
from segmenter.train import split_documents, wrap_width

UNSEEN = ("ParTUT", "ESLSpok", "Atis")  # dev files no preset trains on
SPLIT = (0.2, 0)  # the held-out share and split seed of the shipped tuned presets
HELD_OUT_VARIANTS = {  # how each held-out cell presents a document
    "clean": lambda d: d,
    "unpunctuated": corrupt_document,
    "lines": with_line_breaks,
    "wrapped": lambda d: wrapped(d, wrap_width(d)),
}


def dev_file(ud: Path, name: str) -> str:
    """The dataset spec of the UD English `name` dev file under `ud`."""
    return f"conllu:{ud}/UD_English-{name}/en_{name.lower()}-ud-dev.conllu"


class DevText(NamedTuple):
    """One text of a dev cell: the text, its gold boundary offsets, and the id of its document."""

    text: str
    gold: Sequence[int]
    doc_id: str


def boundary_counts(segmenter: Segmenter, items: Sequence[DevText]) -> tuple[Counts, Counts]:
    """Pooled counts over `items`: at all gold boundaries, and at the unmarked ones."""
    spans = segmenter.pipe([item.text for item in items])
    return pooled_counts(items, [[span.start for span in found] for found in spans])


def pooled_counts(items: Sequence[DevText], predicted: Sequence[Sequence[int]]) -> tuple[Counts, Counts]:
    """Pooled counts of predicted boundary offsets, one list per item: at all boundaries, at unmarked ones."""
    counts, unmarked = Counts(), Counts()
    for item, offsets in zip(items, predicted, strict=True):
        counts = counts + score(item.text, item.gold, offsets)
        unmarked = unmarked + unmarked_counts(item.text, item.gold, offsets)
    return counts, unmarked


def held_out(ud: Path) -> tuple[list[Document], list[Document]]:
    """The held-out gold documents of EWT dev, and those of GUM and LinES dev."""
    ewt = list(load_dataset("ewt-dev").documents)
    others = [doc for name in ("GUM", "LinES") for doc in load_dataset(dev_file(ud, name)).documents]
    _, held = split_documents(ewt + others, *SPLIT)
    from_ewt = {id(doc) for doc in ewt}
    return [d for d in held if id(d) in from_ewt], [d for d in held if id(d) not in from_ewt]


def dev_cells(ud: Path) -> list[tuple[str, list[DevText]]]:
    """The 14 cells of a row, in order, as (name, texts): the names are "ParTUT clean", ...,
    "held-out EWT clean", ..., "held-out GUM+LinES wrapped"."""
    cells = []
    for name in UNSEEN:
        dataset = load_dataset(dev_file(ud, name))
        for condition in ("clean", "corrupt"):
            items = evaluation_items(dataset, condition)
            texts = [DevText(item.text, item.gold, f"{name}:{i}") for i, item in enumerate(items)]
            cells.append((f"{name} {condition}", texts))
    for group, docs in zip(("EWT", "GUM+LinES"), held_out(ud), strict=True):
        for variant, variant_of in HELD_OUT_VARIANTS.items():
            texts = [DevText(v.text, v.boundaries, d.id) for d in docs if (v := variant_of(d)).sentences]
            cells.append((f"held-out {group} {variant}", texts))
    return cells


def summary(cells: Sequence[tuple[str, tuple[Counts, Counts]]]) -> list[float]:
    """The 14 cells' F1, the four means and the held-out clean unmarked recall (module docstring)."""
    f1 = [counts.f1 for _, (counts, _) in cells]
    unmarked = sum(
        (
            at_unmarked
            for name, (_, at_unmarked) in cells
            if name.startswith("held-out") and name.endswith(" clean")
        ),
        Counts(),
    )
    return f1 + [
        float(np.mean(f1[:6])),
        float(np.mean([f1[6], f1[7], f1[10], f1[11]])),
        (f1[8] + f1[12]) / 2,
        (f1[9] + f1[13]) / 2,
        unmarked.recall,
    ]


def markdown_row(name: str, c: Sequence[float]) -> str:
    """One row of the models README's dev tables from `summary`'s numbers."""
    pairs = [f"{c[i]:.3f} / {c[i + 1]:.3f}" for i in (0, 2, 4)]
    fours = [" / ".join(f"{x:.3f}" for x in c[i : i + 4]) for i in (6, 10)]
    means = [f"{x:.4f}" for x in c[14:18]] + [f"{c[18]:.3f}"]
    return "| " + " | ".join([name, *pairs, *fours, *means]) + " |"


@click.command()
@click.argument("probes", nargs=-1, required=True)
@click.option(
    "--ud",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default="../shared/data/ud",
    show_default=True,
    help="Folder with the UD_English-* treebanks.",
)
def main(probes: tuple[str, ...], ud: Path) -> None:
    """Print a markdown row of dev scores for each preset or probe folder in PROBES."""
    cells = dev_cells(ud)
    for probe in probes:
        segmenter = Segmenter(probe=probe) if Path(probe).is_dir() else Segmenter(preset=probe)
        counted = [(name, boundary_counts(segmenter, texts)) for name, texts in cells]
        click.echo(markdown_row(probe, summary(counted)))


if __name__ == "__main__":
    main()
