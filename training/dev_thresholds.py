"""Choose a probe's two decoding thresholds on the six dev files, and write them into its meta.

    python training/dev_thresholds.py PROBE_FOLDER [--write] [--precision int8] [--model NAME] [--ud DIR]

`segmenter train` picks the thresholds on held-out training documents. This script searches them on
the dev rows of `dev_scores.py` instead: the segmenter reads a text with `thresholds.clean` unless
it looks unpunctuated (then `thresholds.corrupt`), so the search is coordinate-wise on a 0.05 grid
plus the trained value: first the clean threshold (the unpunctuated one as trained) for the highest
score, then the unpunctuated threshold for the highest score with that clean one. A probe that names a
punctuated probe (which reads the texts judged punctuated, at its own threshold) has only its
unpunctuated threshold searched, with the clean texts at the punctuated probe's. Since each step
tries the value it starts from, the chosen pair never scores below the trained one. A probe trained
on one condition (`--conditions clean`) has only that one searched and written. Gap probabilities
are computed once per dev text; every grid point only decodes. Prints the row at the trained
thresholds, the row at the chosen ones and the pair; `--write` stores the pair in the probe's
meta.json: for a float precision as `thresholds.clean`, `thresholds.corrupt` and `threshold` (with
`thresholds_from` saying where they came from); for int8 under `thresholds_by_precision.int8` (with
`int8_thresholds_from`), which the segmenter reads when its encoder runs at int8. The search starts
from the float pair either way. A probe read with a partner (its meta's `paired_with`,
`segmenter.readers.tree`) has the thresholds of the mean searched, from and into `paired_with.thresholds`.
A development tool; it reads dev files only.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import click
import numpy as np
from dev_scores import dev_cells, header, markdown_row, pooled_counts, summary

from segmenter import Segmenter
from segmenter.config import PRECISIONS
from segmenter.decode.decoder import decode

GRID = tuple(round(float(t), 2) for t in np.arange(0.05, 0.96, 0.05))


def row(segmenter: Segmenter, cells: list, thresholds: dict[str, float]) -> list[float]:
    """`summary` of the dev cells, (text, gap probabilities, condition) each, decoded with
    `thresholds` ("clean", "corrupt"; a spoken text at its own threshold)."""
    counted = []
    for name, texts in cells:
        found = []
        for text, gaps, condition in texts:
            own = segmenter.decoding_for(text.text)  # spoken text keeps its own (spoken_threshold.py)
            config = replace(own, threshold=thresholds.get(condition, own.threshold))
            found.append([span.start for span in decode(text.text, gaps.offsets, gaps.probs, config)])
        counted.append((name, pooled_counts([text for text, _, _ in texts], found)))
    return summary(counted)


def search(
    segmenter: Segmenter, cells: list, start: dict[str, float], searched: list[str]
) -> dict[str, float]:
    """The thresholds with the highest dev score, coordinate-wise from `start` for the conditions of
    `searched` in order (each on GRID and its starting value; ties: the one nearest the start)."""
    best = dict(start)
    for which in searched:
        candidates = sorted({*GRID, best[which]})  # the start too: the search cannot lose to it
        scores = {t: row(segmenter, cells, {**best, which: t})[-3] for t in candidates}
        best[which] = max(scores, key=lambda t: (scores[t], -abs(t - start[which])))
        click.echo(f"{which}: " + " ".join(f"{t:.2f}:{s:.4f}" for t, s in scores.items()), err=True)
    return best


@click.command()
@click.argument("probe", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--write", is_flag=True, help="Store the chosen thresholds in the probe's meta.json.")
@click.option(
    "--precision",
    type=click.Choice(PRECISIONS),
    default="auto",
    show_default=True,
    help="Encoder precision to search at; --write stores the pair for the precision the encoder ran at.",
)
@click.option(
    "--ud",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default="../shared/data/ud",
    show_default=True,
)
@click.option("--model", default=None, help="Backbone of the probe (default: the packaged all-MiniLM-L6-v2).")
def main(probe: Path, write: bool, precision: str, ud: Path, model: str | None) -> None:
    """Print the dev rows at the trained and at the chosen thresholds of PROBE."""
    segmenter = Segmenter(model=model, probe=probe, precision=precision)
    cells = []
    for name, texts in dev_cells(ud):
        gaps = segmenter.gap_probabilities([t.text for t in texts])
        conditions = [segmenter.condition_for(t.text) for t in texts]  # which threshold reads each text
        cells.append((name, list(zip(texts, gaps, conditions, strict=True))))
    trained_meta = segmenter.probe.meta
    paired = segmenter.partner is not None
    if paired:  # the thresholds of the mean: where the search starts, and what --write replaces
        trained = {c: float(trained_meta["paired_with"]["thresholds"][c]) for c in ("clean", "corrupt")}
    else:  # a probe trained on one condition (--conditions clean) reads the other with its one threshold
        one = trained_meta["threshold"]
        trained = {c: float(trained_meta["thresholds"].get(c, one)) for c in ("clean", "corrupt")}
    searched = [c for c in ("clean", "corrupt") if c in trained_meta.get("conditions", ("clean", "corrupt"))]
    routed = segmenter.scorers["clean"] is not segmenter.scorer  # clean texts are its punctuated probe's
    if routed:
        trained["clean"] = segmenter.decodings["clean"].threshold
        searched = [c for c in searched if c != "clean"]
    best = search(segmenter, cells, trained, searched)
    click.echo(header())
    click.echo(markdown_row(f"{probe.name}, trained thresholds {trained}", row(segmenter, cells, trained)))
    click.echo(markdown_row(f"{probe.name}, dev thresholds {best}", row(segmenter, cells, best)))
    if write:
        meta_path = probe / "meta.json"
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        source = "the six UD English dev files (training/dev_thresholds.py)"
        chosen = {c: best[c] for c in searched}
        if paired:
            meta["paired_with"]["thresholds"] = chosen
            meta["paired_thresholds_from"] = source
        elif segmenter.encoder.precision == "int8":
            by_precision = meta.setdefault("thresholds_by_precision", {})
            kept = by_precision.get("int8", {}).get("thresholds", {})  # a routed probe's clean one stays
            one = best["clean"] if routed else best[searched[0]]
            by_precision["int8"] = {"threshold": one, "thresholds": {**kept, **chosen}}
            meta["int8_thresholds_from"] = source
        else:
            meta["thresholds"] = {**meta.get("thresholds", {}), **chosen}
            meta["threshold"] = best[searched[0]]
            meta["thresholds_from"] = source
        meta_path.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        click.echo(f"wrote {meta_path}", err=True)


if __name__ == "__main__":
    main()
