"""Measure a [SEP]-insertion verification pass over a preset's uncertain gaps, on the dev rows.

    python training/sep_verification.py [--preset accurate] [--delta 0.75 --delta 1.5 --delta 3]
        [--c 0.01 --c 0.1] [--features attention --features both ...] [--ud ../shared/data/ud]

The idea (DESIGN.md): read a gap again with a [SEP] inserted there and let the backbone's attention
say whether a sentence ends. For every text of `dev_scores.py`'s cells the preset gives its gap
probabilities; a gap is *uncertain* when its logit lies within DELTA of the logit of the text's
threshold. The untuned backbone reads each uncertain gap as `[CLS] left [SEP] right [SEP]` (up to
CONTEXT characters each side, cut at a space; token types all 0, so it is one text with a [SEP]
inserted), and a logistic verifier over

- the preset's logit, a flag for the unpunctuated threshold, and their product ("none" adds nothing);
- "attention": per layer and head, the mean attention of the left tokens and of the right tokens to
  that [SEP], and the mean attention mass each side sends across the gap (6 x 12 x 4 for MiniLM);
- "hidden": the [SEP]'s hidden state after layers 2, 3 and 4; "both": the two together

replaces the preset's probability on the uncertain gaps (the verifier's 0.5 is mapped onto the text's
threshold); decoding is the segmenter's own. Every cell is cross-fitted: documents are split in two by
a hash of their id, and each half is verified by a verifier fitted on the other half's uncertain gaps.
Prints one row per setting in the columns of `dev_scores.py`. A development tool; it reads dev files
only.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import click
import numpy as np
import torch
from dev_scores import DevText, dev_cells, markdown_row, pooled_counts, summary
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from transformers import AutoModel, AutoTokenizer

from segmenter import Segmenter
from segmenter.encoder.torch.encoder import packaged_model_path
from segmenter.readers.candidates import GapProbabilities

FEATURES = ("none", "attention", "hidden", "both")
HIDDEN_LAYERS = (2, 3, 4)
BATCH = 32


def logit(p: np.ndarray | float) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def contexts(text: str, offset: int, size: int) -> tuple[str, str]:
    """Up to `size` characters on each side of `offset`, cut at a space where the text goes on."""
    left, right = text[max(0, offset - size) : offset], text[offset : offset + size]
    if offset > size and " " in left:
        left = left[left.index(" ") + 1 :]
    if offset + size < len(text) and " " in right:
        right = right[: right.rindex(" ")]
    return left.strip() or ".", right.strip() or "."


class SepReader:
    """The untuned backbone reading `[CLS] left [SEP] right [SEP]`: attention and hidden features."""

    def __init__(self) -> None:
        path = packaged_model_path()
        self.tokenizer = AutoTokenizer.from_pretrained(path)
        self.model = AutoModel.from_pretrained(path, attn_implementation="eager").eval()

    @torch.no_grad()
    def features(self, pairs: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
        """(attention (P, L*H*4), hidden (P, 3*D)) float32 for P (left, right) pairs."""
        attention, hidden = [], []
        for start in range(0, len(pairs), BATCH):
            chunk = pairs[start : start + BATCH]
            enc = self.tokenizer(
                [left for left, _ in chunk],
                [right for _, right in chunk],
                padding=True,
                truncation="longest_first",
                max_length=160,
                return_tensors="pt",
            )
            enc["token_type_ids"] = torch.zeros_like(enc["token_type_ids"])
            out = self.model(**enc, output_attentions=True, output_hidden_states=True)
            probs = torch.stack(out.attentions, 1)  # (B, L, H, T, T)
            for i in range(len(chunk)):
                n = int(enc["attention_mask"][i].sum())
                sep = int((enc["input_ids"][i, :n] == self.tokenizer.sep_token_id).nonzero()[0])
                left = list(range(1, sep)) or [0]
                right = list(range(sep + 1, n - 1)) or [n - 1]
                a = probs[i, :, :, :n, :n]  # (L, H, n, n)
                parts = (
                    a[:, :, left, sep].mean(-1),
                    a[:, :, right, sep].mean(-1),
                    a[:, :, left][..., right].sum(-1).mean(-1),
                    a[:, :, right][..., left].sum(-1).mean(-1),
                )  # each (L, H)
                attention.append(torch.cat([x.flatten() for x in parts]).numpy())
                hidden.append(torch.cat([out.hidden_states[k][i, sep] for k in HIDDEN_LAYERS]).numpy())
        return np.array(attention, dtype=np.float32), np.array(hidden, dtype=np.float32)


class CellText:
    """One dev text with the preset's gaps, and features of the gaps within the widest band."""

    def __init__(self, item: DevText, gaps: GapProbabilities, threshold: float, band: float):
        self.item, self.gaps, self.threshold = item, gaps, threshold
        self.margin = logit(gaps.probs) - logit(threshold)  # (G,)
        self.read = np.flatnonzero(np.abs(self.margin) < band)  # gaps read again
        gold = set(item.gold)
        self.labels = np.array([int(gaps.offsets[g]) in gold for g in self.read], dtype=np.int8)
        self.fold = zlib.crc32(item.doc_id.encode("utf-8")) % 2
        self.attention = self.hidden = None

    def design(self, delta: float, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(gaps within `delta`, their features, their labels); the gaps are indices into the text's."""
        keep = np.abs(self.margin[self.read]) < delta
        if not keep.any():
            return self.read[keep], np.zeros((0, 0), dtype=np.float32), self.labels[keep]
        margin = self.margin[self.read][keep][:, None]
        flag = np.full_like(margin, float(self.threshold < 0.4))
        columns = [margin, flag, margin * flag]
        if kind in ("attention", "both"):
            columns.append(self.attention[keep])
        if kind in ("hidden", "both"):
            columns.append(self.hidden[keep])
        return self.read[keep], np.hstack(columns), self.labels[keep]


def fit_verifier(texts: list[CellText], delta: float, kind: str, c: float):
    designs = [d for d in (t.design(delta, kind) for t in texts) if d[0].size]
    x = np.vstack([d[1] for d in designs])
    y = np.concatenate([d[2] for d in designs])
    return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=3000)).fit(x, y)


def verified_boundaries(segmenter: Segmenter, text: CellText, verifier, delta: float, kind: str) -> list[int]:
    probs = text.gaps.probs.astype(np.float64)
    if verifier is not None:
        rows, x, _ = text.design(delta, kind)
        if rows.size:
            probs = probs.copy()
            shifted = verifier.decision_function(x) + logit(text.threshold)
            probs[rows] = 1.0 / (1.0 + np.exp(-shifted))
    spans = segmenter.decode(text.item.text, GapProbabilities(text.gaps.offsets, probs))
    return [span.start for span in spans]


def verified_counts(segmenter: Segmenter, cells, by_fold: dict, delta: float, kind: str) -> list:
    """`summary`'s input: per cell, the counts of the boundaries after verification, each text by
    `by_fold[fold of the text]` (an empty dict: the preset's own decisions)."""
    counted = []
    for name, texts in cells:
        found = [verified_boundaries(segmenter, t, by_fold.get(t.fold), delta, kind) for t in texts]
        counted.append((name, pooled_counts([t.item for t in texts], found)))
    return counted


@click.command()
@click.option("--preset", default="accurate", show_default=True, help="The preset whose gaps are verified.")
@click.option("--delta", "deltas", type=float, multiple=True, default=(0.75, 1.5, 3.0), show_default=True)
@click.option("--c", "cs", type=float, multiple=True, default=(0.01, 0.1), show_default=True)
@click.option(
    "--features", "kinds", type=click.Choice(FEATURES), multiple=True, default=FEATURES, show_default=True
)
@click.option("--context", type=click.IntRange(min=10), default=200, show_default=True)
@click.option(
    "--ud",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default="../shared/data/ud",
    show_default=True,
)
def main(preset, deltas, cs, kinds, context, ud):
    """Print the preset's dev row, then one row per (delta, features, C) with the verifier."""
    segmenter = Segmenter(preset=preset)
    reader = SepReader()
    cells = []
    for name, items in dev_cells(ud):
        gaps = segmenter.gap_probabilities([item.text for item in items])
        texts = [
            CellText(item, g, segmenter.decoding_for(item.text).threshold, max(deltas))
            for item, g in zip(items, gaps, strict=True)
        ]
        for text in texts:
            pairs = [contexts(text.item.text, int(text.gaps.offsets[g]), context) for g in text.read]
            if pairs:
                text.attention, text.hidden = reader.features(pairs)
        cells.append((name, texts))
        click.echo(f"read {name}", err=True)
    every = [t for _, texts in cells for t in texts]
    click.echo(markdown_row(preset, summary(verified_counts(segmenter, cells, {}, 0, "none"))))
    for delta in deltas:
        share = sum(int((np.abs(t.margin) < delta).sum()) for t in every) / sum(t.margin.size for t in every)
        for kind in kinds:
            for c in cs:
                by_fold = {f: fit_verifier([t for t in every if t.fold != f], delta, kind, c) for f in (0, 1)}
                counted = verified_counts(segmenter, cells, by_fold, delta, kind)
                label = f"delta {delta} ({share:.1%} of gaps), {kind}, C {c}"
                click.echo(markdown_row(label, summary(counted)))


if __name__ == "__main__":
    main()
