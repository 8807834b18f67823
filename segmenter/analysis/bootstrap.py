"""Percentile bootstrap intervals over documents for numbers computed from the per-layer statistics.

`layer_values` aggregates the per-document records (documents.py) of a weighted set of documents into
one per-layer list exactly as `HeadAccumulator.summary` pools all of them (with every weight 1 it gives
the same numbers); `document_intervals` resamples the documents with replacement and returns the
percentile interval of each number a function of that list computes. Leaves out: what the numbers
mean and the verdicts (claims.py).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np

from segmenter.analysis.documents import DocumentStats
from segmenter.analysis.stats import anchor_tokens, anchor_uniqueness, safe_divide
from segmenter.extras import require

LAYER_KEYS = ("sep_attention_by_layer", "mean_pair_distance", "within_sentence_fraction", "anchor_uniqueness")

Numbers = Callable[[Sequence[float | None]], Sequence[float | None]]


def layer_values(documents: DocumentStats, key: str, weights: np.ndarray) -> np.ndarray:
    """(L,) the per-layer statistic `key` (one of LAYER_KEYS) of the documents weighted by `weights` (n,):
    a document drawn twice counts twice. NaN where a layer has nothing to average.

    sep_attention_by_layer: weighted mean over the documents whose attention was captured;
    mean_pair_distance, within_sentence_fraction: pooled over the pairs of all documents;
    anchor_uniqueness: from the anchor tokens of the summed token counts (stats.anchor_tokens).
    """
    weights = np.asarray(weights, dtype=np.float64)
    if key == "sep_attention_by_layer":
        values = documents.sep_attention
        known = ~np.isnan(values)
        return safe_divide(weights @ np.where(known, values, 0.0), weights @ known)
    if key == "mean_pair_distance":
        return safe_divide(weights @ documents.pair_distance, weights @ documents.pairs)
    if key == "within_sentence_fraction":
        return safe_divide(weights @ documents.within, weights @ documents.pairs)
    if key == "anchor_uniqueness":
        shape = (documents.n_layers, documents.n_heads, documents.vocabulary.size)
        counts = np.bincount(
            documents.token_column,
            weights=weights[documents.token_document] * documents.token_count,
            minlength=int(np.prod(shape)),
        )
        anchors, _ = anchor_tokens(counts.reshape(shape))
        return anchor_uniqueness(anchors)
    raise ValueError(f"unknown per-layer statistic {key!r}; use one of {LAYER_KEYS}")


def full_sample(documents: DocumentStats, key: str, numbers: Numbers) -> list[float | None]:
    """`numbers` of the per-layer statistic `key` over all documents, each once."""
    return _as_floats(numbers(_as_list(layer_values(documents, key, np.ones(documents.n_documents)))))


def document_intervals(
    documents: DocumentStats,
    key: str,
    numbers: Numbers,
    resamples: int,
    confidence: float,
    seed: int,
) -> list[tuple[float, float] | None]:
    """The `confidence` percentile bootstrap interval of each of `numbers(per-layer statistic key)`.

    Each of `resamples` resamples draws n documents with replacement (numpy Generator seeded with `seed`,
    so one seed gives one set of resamples for every key) and recomputes the per-layer statistic and the
    numbers from it, as for the full sample. With fewer than two documents there is nothing to resample:
    the interval is the full-sample value at both ends. None where a number is undefined (NaN) in the
    full sample or in some resample.
    """
    n = documents.n_documents
    if n < 2:
        return [None if v is None else (v, v) for v in full_sample(documents, key, numbers)]
    bootstrap = require("scipy.stats", "analysis", "segmenter analyze").bootstrap

    def statistic(indices: np.ndarray, axis: int = -1) -> np.ndarray:
        """(k, B) numbers of a batch of B resamples given as document indices (B, n)."""
        rows = np.asarray(indices).reshape(-1, n)
        values = [
            _as_floats(numbers(_as_list(layer_values(documents, key, np.bincount(row, minlength=n)))))
            for row in rows
        ]
        return np.array([[np.nan if v is None else v for v in row] for row in values], dtype=np.float64).T

    # The statistic needs several per-document arrays jointly (and sparse token counts that no array
    # sample can carry), so scipy resamples the document indices themselves, the way it implements
    # `paired=True`, and `statistic` maps each resample to document weights.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a NaN number: reported as None below
        result = bootstrap(
            (np.arange(n),),
            statistic,
            n_resamples=resamples,
            vectorized=True,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    low = np.atleast_1d(result.confidence_interval.low)
    high = np.atleast_1d(result.confidence_interval.high)
    return [
        None if np.isnan(lo) or np.isnan(hi) else (float(lo), float(hi))
        for lo, hi in zip(low, high, strict=True)
    ]


def _as_list(values: np.ndarray) -> list[float | None]:
    return [None if np.isnan(v) else float(v) for v in values]


def _as_floats(values: Sequence[float | None]) -> list[float | None]:
    return [None if v is None or np.isnan(v) else float(v) for v in values]
