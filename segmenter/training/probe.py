"""Train a boundary probe from gold documents: gap features, labels, fit, threshold, meta.

Every document is used under each of `conditions`: as given (clean, sentences joined by spaces),
corrupted (lowercase, no punctuation), so one probe serves punctuated and unpunctuated text, and, for a
probe that reads line breaks, laid out in lines (LAYOUTS: each paragraph on a line of its own; the
same hard-wrapped at 60-90 characters, where most line breaks fall inside sentences); the conditions
are named in `segmenter.text.conditions`. With `unmarked_share` > 0 the clean copy of each training document
has that share of its sentences without their final punctuation (`without_final_punctuation`);
held-out documents stay as given. With `members` > 1, that many MLPs are fitted with consecutive seeds
and averaged into one (a cheap ensemble: it lowers the seed-to-seed variance of a single fit). A share
of the documents is held out to choose the decision threshold and to report dev scores in the probe's
meta file.
Fitting with scikit-learn is `segmenter.training.fitting`'s; reading data files and the CLI live
elsewhere; this module takes `Document`s.
"""

from __future__ import annotations

import datetime as _dt
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from segmenter.config import FeatureConfig, WindowConfig
from segmenter.encoder.torch.encoder import Encoder
from segmenter.errors import ConfigError, InputError
from segmenter.gold.corpus import (
    Document,
    corrupt_document,
    with_line_breaks,
    without_final_punctuation,
    wrapped,
)
from segmenter.probe.meta import ProbeMeta
from segmenter.probe.probe import Probe
from segmenter.readers.extract import window_stream
from segmenter.text.conditions import (
    CLEAN,
    CORRUPT,
    LINES,
    TEXT_CONDITIONS,
    TRAINING_CONDITIONS,
    WRAPPED,
)
from segmenter.text.conditions import LAYOUTS as LAYOUTS  # re-exported: the CLI imports it from here
from segmenter.text.surface import with_surface
from segmenter.training.fitting import average, fit

CONDITIONS = TEXT_CONDITIONS  # the default training conditions (the name the CLI imports)
WRAP_WIDTHS = range(60, 91)  # a document's width in the wrapped layout: picked by a hash of its id


@dataclass(frozen=True)
class GapData:
    """Labelled candidate gaps: features (G, D) float32, labels (G,) int8, document index (G,) int32."""

    features: np.ndarray
    labels: np.ndarray
    documents: np.ndarray


@dataclass(frozen=True)
class TrainConfig:
    # the recipe of the shipped probes and of `segmenter train`'s defaults
    features: FeatureConfig = FeatureConfig(vectors=False, signals=True, hidden=True, surface=True)
    window: WindowConfig = WindowConfig(size=128, stride=96)
    conditions: tuple[str, ...] = CONDITIONS
    kind: str = "mlp"
    hidden_units: int = 128
    members: int = 1  # MLPs fitted with seeds seed, seed+1, ... and averaged into one (fitting.average)
    c: float = 0.005
    holdout: float = 0.2
    refit: bool = False  # after choosing thresholds on the held-out share, refit on every document
    batch_size: int = 16
    seed: int = 0
    split_seed: int | None = None  # seed of the held-out split; None: `seed`
    unmarked_share: float = 0.0  # of the sentences of clean training text, stripped of final punctuation

    def __post_init__(self) -> None:
        check_unmarked_share(self.unmarked_share)
        if self.members < 1:
            raise ConfigError(f"members must be at least 1, got {self.members}")
        if self.members > 1 and self.kind != "mlp":
            raise ConfigError("only MLP probes can be averaged; use members=1 with a logistic probe")


def check_unmarked_share(share: float) -> None:
    """ConfigError unless `share` (of sentences stripped of their final punctuation) is in [0, 1]."""
    if not 0.0 <= share <= 1.0:
        raise ConfigError(f"unmarked_share must be between 0 and 1, got {share}")


def conditioned(
    docs: Sequence[Document], conditions: Sequence[str], unmarked_share: float = 0.0
) -> list[tuple[str, Document]]:
    """(condition, document) pairs: each document under each condition (see the module docstring).
    The `lines` layout skips documents with one paragraph: it would repeat the clean text. In the
    clean condition `unmarked_share` of the sentences lose their final punctuation."""
    out = []
    for condition in conditions:
        for doc in docs:
            variant = _variant(doc, condition)
            if condition == CLEAN and unmarked_share > 0:
                variant = without_final_punctuation(variant, unmarked_share)
            if variant is not None and variant.sentences:
                out.append((condition, variant))
    return out


def _variant(doc: Document, condition: str) -> Document | None:
    if condition == CLEAN:
        return doc
    if condition == CORRUPT:
        return corrupt_document(doc)
    if condition == LINES:
        return with_line_breaks(doc) if doc.paragraph_starts else None
    if condition == WRAPPED:
        return wrapped(doc, wrap_width(doc))
    raise ConfigError(f"unknown training condition {condition!r}; use {', '.join(TRAINING_CONDITIONS)}")


def wrap_width(doc: Document) -> int:
    """The width of `doc` in the wrapped layout: one of WRAP_WIDTHS, picked by a hash of its id."""
    return WRAP_WIDTHS[zlib.crc32(doc.id.encode("utf-8")) % len(WRAP_WIDTHS)]


def gap_data(
    encoder: Encoder,
    docs: Sequence[Document],
    features: FeatureConfig,
    window: WindowConfig,
    batch_size: int = 16,
    progress: Callable[[int], None] | None = None,
) -> GapData:
    """Features and gold labels of every candidate gap (before a word-start token) of `docs`.

    A gap seen by several overlapping windows contributes one row per window.
    """
    tokens = [encoder.tokenize(doc.text) for doc in docs]
    if features.surface:
        tokens = [with_surface(t, doc.text, features.lines) for t, doc in zip(tokens, docs, strict=True)]
    gold = [set(doc.boundaries) for doc in docs]
    rows, labels, owners = [], [], []  # per window: (g, D) features, (g,) labels, (g,) document index
    for win, feats in window_stream(encoder, tokens, window, features, batch_size):
        toks = tokens[win.text]
        local = np.flatnonzero(toks.word_start[win.start + 1 : win.end])  # gaps before word starts
        if local.size:
            starts = toks.offsets[win.start + 1 + local, 0]
            rows.append(feats.gap_matrix(features.context)[local].astype(np.float32))
            labels.append(np.fromiter((s in gold[win.text] for s in starts.tolist()), dtype=np.int8))
            owners.append(np.full(local.size, win.text, dtype=np.int32))
        if progress is not None:
            progress(1)
    if not rows:
        return GapData(np.zeros((0, 0), np.float32), np.zeros(0, np.int8), np.zeros(0, np.int32))
    return GapData(np.concatenate(rows), np.concatenate(labels), np.concatenate(owners))


THRESHOLDS = np.round(np.concatenate([np.arange(0.002, 0.05, 0.002), np.arange(0.05, 0.951, 0.01)]), 3)


def best_threshold(probs: np.ndarray, labels: np.ndarray) -> tuple[float, dict]:
    """Threshold in THRESHOLDS (0.002 to 0.95; finer below 0.05, where unpunctuated text's boundary
    probabilities sit) maximising gap-level F1, and the scores at it."""
    best = (0.5, {"precision": 0.0, "recall": 0.0, "f1": 0.0})
    for threshold in THRESHOLDS.tolist():
        scores = prf(probs >= threshold, labels.astype(bool))
        if scores["f1"] > best[1]["f1"]:
            best = (threshold, scores)
    return best


def prf(predicted: np.ndarray, gold: np.ndarray) -> dict:
    tp = int((predicted & gold).sum())
    precision = tp / max(int(predicted.sum()), 1)
    recall = tp / max(int(gold.sum()), 1)
    f1 = 2 * precision * recall / max(precision + recall, 1e-12)
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def split_documents(docs: Sequence[Document], holdout: float, seed: int) -> tuple[list, list]:
    """(training documents, held-out documents): a random share `holdout` of the gold documents is held
    out, so that thresholds and held-out scores come from annotated text; silver documents (from raw
    text) always train, unless there is no gold document at all. Both lists keep the order of `docs`."""
    pool = [i for i, doc in enumerate(docs) if not doc.silver] or list(range(len(docs)))
    order = np.random.default_rng(seed).permutation(len(pool))
    n_holdout = int(round(len(pool) * holdout)) if len(pool) > 1 else 0
    held = {pool[int(i)] for i in order[:n_holdout]}
    return [d for i, d in enumerate(docs) if i not in held], [d for i, d in enumerate(docs) if i in held]


def split_seed(config) -> int:
    """The seed of the held-out split of `config` (a `TrainConfig` or `TuneConfig`): its `split_seed`,
    else its `seed`."""
    return config.seed if config.split_seed is None else config.split_seed


def collect_gaps(
    encoder: Encoder,
    docs: Sequence[Document],
    conditions: Sequence[str],
    features: FeatureConfig,
    window: WindowConfig,
    batch_size: int = 16,
    progress: Callable[[int], None] | None = None,
    unmarked_share: float = 0.0,
) -> dict[str, GapData]:
    """`gap_data` of `docs` under each condition that yields any gap (`conditioned`'s variants)."""
    by_condition = {}
    for condition in conditions:
        variants = [doc for _, doc in conditioned(docs, [condition], unmarked_share)]
        data = gap_data(encoder, variants, features, window, batch_size, progress)
        if data.labels.size:
            by_condition[condition] = data
    return by_condition


def held_out_thresholds(probe: Probe, held: dict[str, GapData]) -> tuple[float, dict, dict]:
    """(threshold for all text, threshold per condition, gap scores per condition at its threshold),
    each maximising gap F1 on the held-out gaps `held`; 0.5 and empty dicts without held-out gaps."""
    if not held:
        return 0.5, {}, {}
    probs = {c: probe.predict(d.features) for c, d in held.items()}
    threshold, _ = best_threshold(
        np.concatenate(list(probs.values())), np.concatenate([d.labels for d in held.values()])
    )
    thresholds, scores = {}, {}
    for condition, data in held.items():
        thresholds[condition], scores[condition] = best_threshold(probs[condition], data.labels)
    return threshold, thresholds, scores


def _fit(features: np.ndarray, labels: np.ndarray, config: TrainConfig) -> Probe:
    """One probe, or the average of `config.members` MLPs fitted with consecutive seeds. `features` are
    given up: a single fit standardises them in place."""
    members = [
        fit(
            features,
            labels,
            kind=config.kind,
            c=config.c,
            hidden=config.hidden_units,
            seed=config.seed + i,
            in_place=config.members == 1,
        )
        for i in range(config.members)
    ]
    return members[0] if config.members == 1 else average(members)


def train_probe(
    encoder: Encoder,
    docs: Sequence[Document],
    config: TrainConfig,
    sources: Sequence[str],
    progress: Callable[[int], None] | None = None,
) -> Probe:
    """Fit a probe on `docs` (under each condition), choose its threshold on a held-out share.

    sources: human-readable names of the training data, recorded in the meta file.
    """
    train_docs, held_docs = split_documents(docs, config.holdout, split_seed(config))

    def collect(subset, unmarked_share: float = 0.0) -> dict[str, GapData]:
        return collect_gaps(
            encoder,
            subset,
            config.conditions,
            config.features,
            config.window,
            config.batch_size,
            progress,
            unmarked_share,
        )

    train_data = collect(train_docs, config.unmarked_share)
    if not train_data:
        raise InputError("training documents hold no candidate gaps; give more text")
    labels = np.concatenate([d.labels for d in train_data.values()])
    features = np.concatenate([d.features for d in train_data.values()])
    # only a refit reads the per-condition arrays again: without one they go now, and a single fit
    # standardises `features` in place, so the features are held once
    kept = list(train_data.values()) if config.refit else []
    del train_data
    probe = _fit(features, labels, config)
    del features

    # Thresholds: one for all text, and one per condition (the segmenter picks by the text's look).
    held_data = collect(held_docs) if held_docs else {}
    threshold, thresholds, dev_scores = held_out_thresholds(probe, held_data)
    if held_data and config.refit:
        everything = [*kept, *held_data.values()]
        labels = np.concatenate([d.labels for d in everything])
        features = np.concatenate([d.features for d in everything])
        probe = _fit(features, labels, config)
        del features
    record = {
        "kind": config.kind,
        "hidden_units": config.hidden_units if config.kind == "mlp" else None,
        "members": config.members,  # averaged MLPs; the stored hidden layer has members * hidden_units
        "c": config.c,
        "seed": config.seed,
        "split_seed": split_seed(config),
        "conditions": list(config.conditions),
        "unmarked_share": config.unmarked_share,
        "training_data": list(sources),
        "n_documents": {"train": len(train_docs), "held_out": len(held_docs)},
        "refit_on_all_documents": bool(config.refit and held_data),
        "n_train_gaps": int(labels.size),
        "n_train_boundaries": int(labels.sum()),
        "held_out_gap_scores": dev_scores,  # per condition, at that condition's threshold
        "created": _dt.date.today().isoformat(),
    }
    meta = ProbeMeta(
        config.features,
        config.window,
        threshold,
        thresholds,
        backbone=encoder.name,
        precision=encoder.precision,  # of the features the thresholds were chosen on
        training=record,
    )
    return Probe(probe.mean, probe.scale, probe.weights, probe.biases, meta.to_json())
