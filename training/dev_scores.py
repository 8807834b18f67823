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
  marks (`benchmarks.metrics.is_marked`), EWT and GUM + LinES pooled.

It reads the treebanks from --ud (the UD_English-* folders). A development tool: nothing in `segmenter`
imports it, and it only reads dev files.
"""

from __future__ import annotations

from pathlib import Path

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


def boundary_counts(segmenter: Segmenter, items: list[tuple[str, list[int]]]) -> tuple[Counts, Counts]:
    """Pooled counts over (text, gold boundary offsets) pairs: at all boundaries, at unmarked ones."""
    counts, unmarked = Counts(), Counts()
    for (text, gold), spans in zip(items, segmenter.pipe([text for text, _ in items]), strict=True):
        predicted = [span.start for span in spans]
        counts = counts + score(text, gold, predicted)
        unmarked = unmarked + unmarked_counts(text, gold, predicted)
    return counts, unmarked


def held_out(ud: Path) -> tuple[list[Document], list[Document]]:
    """The held-out gold documents of EWT dev, and those of GUM and LinES dev."""
    ewt = list(load_dataset("ewt-dev").documents)
    others = [doc for name in ("GUM", "LinES") for doc in load_dataset(dev_file(ud, name)).documents]
    _, held = split_documents(ewt + others, *SPLIT)
    from_ewt = {id(doc) for doc in ewt}
    return [d for d in held if id(d) in from_ewt], [d for d in held if id(d) not in from_ewt]


def row(segmenter: Segmenter, ud: Path, held: tuple[list[Document], list[Document]]) -> list[float]:
    """The cells of one table row (see the module docstring), in order."""
    cells, unmarked = [], Counts()
    for name in UNSEEN:
        dataset = load_dataset(dev_file(ud, name))
        for condition in ("clean", "corrupt"):
            items = evaluation_items(dataset, condition)
            cells.append(boundary_counts(segmenter, [(item.text, item.gold) for item in items])[0].f1)
    for docs in held:
        for variant, variant_of in HELD_OUT_VARIANTS.items():
            variants = [v for v in map(variant_of, docs) if v.sentences]
            counts, at_unmarked = boundary_counts(segmenter, [(v.text, v.boundaries) for v in variants])
            cells.append(counts.f1)
            if variant == "clean":
                unmarked = unmarked + at_unmarked
    held_cells = [cells[6], cells[7], cells[10], cells[11]]
    return cells + [
        float(np.mean(cells[:6])),
        float(np.mean(held_cells)),
        (cells[8] + cells[12]) / 2,
        (cells[9] + cells[13]) / 2,
        unmarked.recall,
    ]


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
    held = held_out(ud)
    for probe in probes:
        segmenter = Segmenter(probe=probe) if Path(probe).is_dir() else Segmenter(preset=probe)
        c = row(segmenter, ud, held)
        pairs = [f"{c[i]:.3f} / {c[i + 1]:.3f}" for i in (0, 2, 4)]
        fours = [" / ".join(f"{x:.3f}" for x in c[i : i + 4]) for i in (6, 10)]
        means = [f"{x:.4f}" for x in c[14:18]] + [f"{c[18]:.3f}"]
        click.echo("| " + " | ".join([probe, *pairs, *fours, *means]) + " |")


if __name__ == "__main__":
    main()
