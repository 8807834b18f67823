"""Score probes on the six UD English dev files, the selection set of the shipped presets: one row each.

    python training/dev_scores.py accurate fast /path/to/probe-folder [--ud ../shared/data/ud]
    python training/dev_scores.py --model all-mpnet-base-v2 /path/to/probe-folder

Each argument is a preset or a probe folder of the backbone given by --model (default: the packaged
all-MiniLM-L6-v2), optionally with `@PRECISION` (`accurate@int8`: the preset with its encoder in
int8). The shipped presets train on the
UD English *train* splits (and silver text), so every dev file is unseen by all of them. A row has the
columns of the tables in models/README.md, all boundary F1 as `segmenter bench` computes it
(pooled over a cell's texts):

- EWT, GUM, LinES, ParTUT, ESLSpok and ATIS dev: clean / unpunctuated (the benchmark's `clean` and
  `corrupt` conditions);
- EWT and GUM dev (the two with paragraph markers) in lines / hard-wrapped at 72 columns (the
  benchmark's `lines` and `wrapped` conditions);
- "clean": the mean of the six clean cells; "unpunct.": the mean of the six unpunctuated cells;
  "score": the mean of those two means (the selection score); "layouts": the mean of the four layout
  cells;
- "unmarked R": the recall at the clean gold boundaries that no sentence-final punctuation marks
  (`segmenter.gold.corpus.is_marked`), pooled over the six clean cells.

It reads the treebanks from --ud (the UD_English-* folders). A development tool: nothing in `segmenter`
imports it, and it reads dev files only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import click
import numpy as np

from segmenter import Segmenter
from segmenter.bench.datasets import evaluation_items, load_dataset
from segmenter.bench.metrics import Counts, score, unmarked_counts
from segmenter.config import WindowConfig

DEV = ("EWT", "GUM", "LinES", "ParTUT", "ESLSpok", "Atis")  # the six dev files, in column order
WITH_PARAGRAPHS = ("EWT", "GUM")  # the dev files with `# newpar`, read in the two layouts too
CONDITIONS = {"clean": "clean", "unpunctuated": "corrupt"}  # cell name -> benchmark condition
LAYOUTS = ("lines", "wrapped")


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


def dev_cells(ud: Path) -> list[tuple[str, list[DevText]]]:
    """The 16 cells of a row, in column order, as (name, texts): "EWT clean", "EWT unpunctuated", ...,
    "Atis unpunctuated", then "EWT lines", "EWT wrapped", "GUM lines", "GUM wrapped"."""
    datasets = {name: load_dataset(dev_file(ud, name)) for name in DEV}
    plan = [(name, cell, condition) for name in DEV for cell, condition in CONDITIONS.items()]
    plan += [(name, layout, layout) for name in WITH_PARAGRAPHS for layout in LAYOUTS]
    cells = []
    for name, cell, condition in plan:
        items = evaluation_items(datasets[name], condition)
        cells.append((f"{name} {cell}", [DevText(it.text, it.gold, f"{name}:{it.id}") for it in items]))
    return cells


def summary(cells: Sequence[tuple[str, tuple[Counts, Counts]]]) -> list[float]:
    """The 16 cells' F1, then the clean mean, the unpunctuated mean, the score, the layouts mean and
    the clean unmarked recall (module docstring)."""
    f1 = [counts.f1 for _, (counts, _) in cells]
    clean = [f1[i] for i, (name, _) in enumerate(cells) if name.endswith(" clean")]
    unpunctuated = [f1[i] for i, (name, _) in enumerate(cells) if name.endswith(" unpunctuated")]
    layouts = [f1[i] for i, (name, _) in enumerate(cells) if name.endswith(LAYOUTS)]
    unmarked = sum((at for name, (_, at) in cells if name.endswith(" clean")), Counts())
    clean_mean, unpunctuated_mean = float(np.mean(clean)), float(np.mean(unpunctuated))
    return f1 + [
        clean_mean,
        unpunctuated_mean,
        (clean_mean + unpunctuated_mean) / 2,
        float(np.mean(layouts)),
        unmarked.recall,
    ]


def markdown_row(name: str, c: Sequence[float]) -> str:
    """One row of the models README's dev tables from `summary`'s numbers."""
    pairs = [f"{c[i]:.3f} / {c[i + 1]:.3f}" for i in range(0, 2 * len(DEV) + 2 * len(WITH_PARAGRAPHS), 2)]
    means = [f"{x:.4f}" for x in c[-5:-1]] + [f"{c[-1]:.3f}"]
    return "| " + " | ".join([name, *pairs, *means]) + " |"


def header() -> str:
    """The header and rule lines of the table `markdown_row` fills."""
    columns = [f"{name} clean / unp." for name in DEV]
    columns += [f"{name} lines / wrapped" for name in WITH_PARAGRAPHS]
    columns += ["clean", "unpunct.", "score", "layouts", "unmarked R"]
    return "| candidate | " + " | ".join(columns) + " |\n" + "|---" * (len(columns) + 1) + "|"


def load(probe: str, model: str | None = None, paired: bool = True) -> Segmenter:
    """A segmenter of `probe`: a probe folder or a preset, optionally `@PRECISION` (`accurate@int8`);
    `paired=False` reads a probe that names a partner without it."""
    name, _, precision = probe.partition("@")
    chosen = {"probe": name} if Path(name).is_dir() else {"preset": name}
    return Segmenter(model=model, precision=precision or "auto", paired=paired, **chosen)


ud_option = click.option(
    "--ud",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default="../shared/data/ud",
    show_default=True,
    help="Folder with the UD_English-* treebanks.",
)

model_option = click.option(
    "--model",
    default=None,
    help="Backbone the probes read (a name, an installed backbone or a local path); default: packaged.",
)


@click.command()
@click.argument("probes", nargs=-1, required=True)
@ud_option
@click.option(
    "--stride",
    type=click.IntRange(min=1),
    default=None,
    help="Tokens between window starts instead of the probe's own (less overlap: less compute).",
)
@click.option(
    "--window-size",
    type=click.IntRange(min=8),
    default=None,
    help="Tokens per window instead of the probe's own (with --stride, or the probe's stride).",
)
@model_option
def main(
    probes: tuple[str, ...], ud: Path, stride: int | None, window_size: int | None, model: str | None
) -> None:
    """Print a markdown row of dev scores for each preset or probe folder in PROBES."""
    cells = dev_cells(ud)
    click.echo(header())
    for probe in probes:
        segmenter = load(probe, model)
        label = probe
        if stride is not None or window_size is not None:
            size = window_size or segmenter.window.size
            segmenter.scorer.window = WindowConfig(size=size, stride=stride or segmenter.window.stride)
            label = f"{probe} (window {size}, stride {segmenter.window.stride})"
        counted = [(name, boundary_counts(segmenter, texts)) for name, texts in cells]
        click.echo(markdown_row(label, summary(counted)))


if __name__ == "__main__":
    main()
