"""How much of the 12-layer pair's accuracy survives if its 12-layer reader reads only where MiniLM is
unsure: a simulation on the six dev files, nothing built.

    python training/pair_cascade.py [--ud ../shared/data/ud] [--band 0.1 0.9 ...]

Computes, once per dev text, MiniLM `accurate`'s gap probabilities (the pair's partner, as it reads)
and the all-mpnet-base-v2 probe's alone; their mean by character offset (`segmenter.readers.tree`) is what
the pair decodes. For each band (lo, hi) the mean is kept at gaps where MiniLM's probability lies in
[lo, hi] and MiniLM's own probability is used elsewhere; every variant is decoded at the pair's
thresholds and scored as `dev_scores.py` scores. The cost of a band is the share of the 12-layer
reader's window tokens (its own tokenizer and windows) in windows that hold a gap inside the band, for
the clean and the unpunctuated texts: what a cascade would still encode. Prints one markdown row per
variant. A development tool: nothing in `segmenter` imports it, and it reads dev files only
(models/README.md, "The 12-layer reading only where MiniLM is unsure").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click
import numpy as np
from dev_scores import DevText, dev_cells, pooled_counts, summary, ud_option

from segmenter import Segmenter
from segmenter.decode.decoder import decode
from segmenter.readers.candidates import mean_by_offset
from segmenter.readers.windows import plan

DEFAULT_BANDS = ((0.2, 0.8), (0.1, 0.9), (0.05, 0.95), (0.02, 0.98))


@dataclass(frozen=True)
class ReadText:
    """One dev text as both readers read it, computed once for every variant: the pair's candidate
    `offsets` (G,) and mean probabilities `mean` (G,), MiniLM's own probability at each (`own`, 0 where
    only the 12-layer reader has the gap), and the 12-layer reader's windows as (first character, end
    character, tokens) rows (W, 3)."""

    text: DevText
    condition: str
    offsets: np.ndarray
    mean: np.ndarray
    own: np.ndarray
    windows: np.ndarray

    def probs(self, band: tuple[float, float] | None) -> tuple[np.ndarray, np.ndarray]:
        """(probabilities to decode (G,), the gaps MiniLM is unsure of (G,) bool) for `band` (None:
        the pair, every gap read by both)."""
        if band is None:
            return self.mean, np.ones(len(self.offsets), dtype=bool)
        unsure = (self.own >= band[0]) & (self.own <= band[1])
        return np.where(unsure, self.mean, self.own).astype(np.float32), unsure

    def window_cost(self, unsure: np.ndarray) -> tuple[int, int]:
        """(tokens in windows that hold an offset of `unsure`, tokens in all windows)."""
        at = self.offsets[unsure]  # (U,)
        first, last, tokens = self.windows[:, :1], self.windows[:, 1:2], self.windows[:, 2]  # (W, 1) ...
        needed = ((at[None, :] > first) & (at[None, :] < last)).any(axis=1)  # (W,)
        return int(tokens[needed].sum()), int(tokens.sum())


def read(pair: Segmenter, twelve: Segmenter, texts: list[DevText]) -> list[ReadText]:
    """`texts` read by the pair's two readers: MiniLM (the pair's partner) and the 12-layer probe alone."""
    plain = [t.text for t in texts]
    ours, theirs = pair.partner.gap_probabilities(plain), twelve.gap_probabilities(plain)
    found = []
    for text, mini, big in zip(texts, ours, theirs, strict=True):
        offsets, mean = mean_by_offset([mini.offsets, big.offsets], [mini.probs, big.probs])
        at = dict(zip(mini.offsets.tolist(), mini.probs.tolist(), strict=True))
        # MiniLM's probability; a gap only the 12-layer reader tokenizes is none of MiniLM's
        own = np.array([at.get(int(o), 0.0) for o in offsets])
        tokens = twelve.tokenize(text.text)
        windows = np.array(
            [
                (tokens.offsets[w.start, 0], tokens.offsets[w.end - 1, 1], len(w))
                for w in plan(len(tokens), twelve.window)
            ],
            dtype=np.int64,
        ).reshape(-1, 3)
        found.append(ReadText(text, pair.condition_for(text.text), offsets, mean, own, windows))
    return found


@click.command()
@ud_option
@click.option("--band", "bands", type=(float, float), multiple=True, help="lo hi (repeatable).")
def main(ud: Path, bands: tuple[tuple[float, float], ...]) -> None:
    """Print the pair, MiniLM alone and each band's cascade as dev rows, with their cost."""
    pair = Segmenter(model="all-mpnet-base-v2")
    twelve = Segmenter(model="all-mpnet-base-v2", paired=False)
    cells = []
    for name, texts in dev_cells(ud):
        cells.append((name, read(pair, twelve, texts)))
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
        for name, texts in cells:
            found = []
            for text in texts:
                probs, unsure = text.probs(band)
                needed, total = text.window_cost(unsure)
                read_as = "clean" if text.condition == "clean" else "corrupt"  # spoken text: as corrupt
                cost[read_as][0] += needed
                cost[read_as][1] += total
                config = pair.decoding_for(text.text.text)
                found.append([s.start for s in decode(text.text.text, text.offsets, probs, config)])
            counted.append((name, pooled_counts([text.text for text in texts], found)))
        c = summary(counted)
        shares = [f"{n / t:.2f}" if t else "1.00" for n, t in (cost["clean"], cost["corrupt"])]
        if band is None:  # the pair reads every window
            shares = ["1.00", "1.00"]
        means = f"{c[-5]:.4f} | {c[-4]:.4f} | {c[-3]:.4f}"
        click.echo(f"| {label} | {means} | {c[0]:.3f} / {c[1]:.3f} | {' | '.join(shares)} |")


if __name__ == "__main__":
    main()
