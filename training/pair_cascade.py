"""How much of the 12-layer pair's accuracy survives if its 12-layer reader reads only where MiniLM is
unsure: a simulation on the six dev files, nothing built.

    python training/pair_cascade.py [--ud ../shared/data/ud] [--band 0.1 0.9 ...]

Computes, once per dev text, MiniLM `accurate`'s gap probabilities (the pair's partner, as it reads)
and the all-mpnet-base-v2 probe's alone; their mean by character offset (`segmenter.paired`) is what
the pair decodes. For each band (lo, hi) the mean is kept at gaps where MiniLM's probability lies in
[lo, hi] and MiniLM's own probability is used elsewhere; every variant is decoded at the pair's
thresholds and scored as `dev_scores.py` scores. The cost of a band is the share of the 12-layer
reader's window tokens (its own tokenizer and windows) in windows that hold a gap inside the band, for
the clean and the unpunctuated texts: what a cascade would still encode. Prints one markdown row per
variant. A development tool: nothing in `segmenter` imports it, and it reads dev files only
(segmenter/models/README.md, "The 12-layer reading only where MiniLM is unsure").
"""

from __future__ import annotations

from pathlib import Path

import click
import numpy as np
from dev_scores import dev_cells, pooled_counts, summary

from segmenter import Segmenter
from segmenter.decode import decode
from segmenter.paired import mean_by_offset
from segmenter.windows import plan

DEFAULT_BANDS = ((0.2, 0.8), (0.1, 0.9), (0.05, 0.95), (0.02, 0.98))


def window_cost(reader: Segmenter, text: str, unsure: np.ndarray) -> tuple[int, int]:
    """(tokens in `reader`'s windows over `text` that hold an offset of `unsure`, tokens in all of them)."""
    tokens = reader.tokenize(text)
    starts = tokens.offsets[:, 0]  # (T,) first character of each token
    needed = total = 0
    for window in plan(len(tokens), reader.window):
        total += len(window)
        first, last = starts[window.start], tokens.offsets[window.end - 1, 1]
        if np.any((unsure > first) & (unsure < last)):
            needed += len(window)
    return needed, total


@click.command()
@click.option(
    "--ud",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default="../shared/data/ud",
    show_default=True,
)
@click.option("--band", "bands", type=(float, float), multiple=True, help="lo hi (repeatable).")
def main(ud: Path, bands: tuple[tuple[float, float], ...]) -> None:
    """Print the pair, MiniLM alone and each band's cascade as dev rows, with their cost."""
    pair = Segmenter(model="all-mpnet-base-v2")
    twelve = Segmenter(model="all-mpnet-base-v2", paired=False)
    minilm = pair.partner
    cells = []
    for name, texts in dev_cells(ud):
        plain = [t.text for t in texts]
        ours, theirs = minilm.gap_probabilities(plain), twelve.gap_probabilities(plain)
        cells.append((name, texts, ours, theirs))
        click.echo(f"read {name}", err=True)
    variants = {
        "pair": None,
        "MiniLM alone, at the pair's thresholds": (2.0, 2.0),
        **{f"band {lo} / {hi}": (lo, hi) for lo, hi in bands or DEFAULT_BANDS},
    }
    click.echo(
        "| variant | clean | unpunct. | score | EWT clean / unp. | 12-layer windows clean | unpunct. |"
    )
    click.echo("|---|---|---|---|---|---|---|")
    for label, band in variants.items():
        counted, cost = [], {"clean": [0, 0], "corrupt": [0, 0]}
        for name, texts, ours, theirs in cells:
            found = []
            for text, mini, big in zip(texts, ours, theirs, strict=True):
                offsets, mean = mean_by_offset([mini.offsets, big.offsets], [mini.probs, big.probs])
                probs = mean
                condition = pair.condition_for(text.text)
                if band is not None:
                    lo, hi = band
                    at = dict(zip(mini.offsets.tolist(), mini.probs.tolist(), strict=True))
                    # MiniLM's probability; a gap only the 12-layer reader tokenizes is none of MiniLM's
                    own = np.array([at.get(int(o), 0.0) for o in offsets])
                    unsure = (own >= lo) & (own <= hi)
                    probs = np.where(unsure, mean, own).astype(np.float32)
                    needed, total = window_cost(twelve, text.text, offsets[unsure])
                    cost[condition][0] += needed
                    cost[condition][1] += total
                config = pair.decoding_for(text.text)
                found.append([s.start for s in decode(text.text, offsets, probs, config)])
            counted.append((name, pooled_counts(texts, found)))
        c = summary(counted)
        shares = [f"{n / t:.2f}" if t else "1.00" for n, t in (cost["clean"], cost["corrupt"])]
        if band is None:
            shares = ["1.00", "1.00"]
        means = f"{c[-5]:.4f} | {c[-4]:.4f} | {c[-3]:.4f}"
        click.echo(f"| {label} | {means} | {c[0]:.3f} / {c[1]:.3f} | {' | '.join(shares)} |")


if __name__ == "__main__":
    main()
