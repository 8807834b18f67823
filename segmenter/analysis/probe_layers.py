"""Boundary information per layer: one logistic probe per layer, trained and scored on gold documents.

For every word-start gap of a document's plain text (sentences joined by one space, no inserted [SEP]),
the features of layer l are the concatenated head context vectors of the two tokens around the gap,
[C_l(t-1); C_l(t)] of size 2*H*d. The probe of each layer is trained on the gaps of two documents in
three and its F1 (positive class: token t starts a gold sentence) measured on the gaps of the third.
Each split keeps a uniform sample of at most a fixed number of gaps, so memory stays bounded.
Leaves out: head statistics, plots, and the segmenter's own probe (segmenter/probe/probe.py), which
combines layers and is stored for inference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from segmenter.encoder.torch.encoder import Encoder
from segmenter.extras import require
from segmenter.gold.corpus import Document, corrupt_document

WINDOWS_PER_BATCH = 16


@dataclass(frozen=True)
class Window:
    """Tokens [start, end) of one document fed as `[CLS] tokens [SEP]`, with the gaps it scores.

    gaps:   (G,) positions t (relative to `start`, >= 1) of word-start tokens whose gap t-1 | t is scored
    labels: (G,) bool, True when token t starts a gold sentence
    """

    ids: np.ndarray
    gaps: np.ndarray
    labels: np.ndarray


def document_windows(doc: Document, tokenize: Callable, window: int) -> list[Window]:
    """Non-overlapping windows of `window - 2` tokens over `doc.text`; gaps across two windows are skipped."""
    tokens = tokenize(doc.text)
    starts = set(doc.boundaries)
    is_boundary = np.array([int(a) in starts for a in tokens.offsets[:, 0]], dtype=bool)
    content = window - 2
    out = []
    for start in range(0, len(tokens), content):
        end = min(start + content, len(tokens))
        gaps = np.nonzero(tokens.word_start[start + 1 : end])[0] + 1
        if gaps.size:
            out.append(Window(tokens.ids[start:end], gaps, is_boundary[start + gaps]))
    return out


class GapSet:
    """Gap features of one split, all layers at once: a uniform sample of at most `cap` gaps.

    Gaps beyond the cap replace kept ones by reservoir sampling (seeded), so the sample covers every
    document read, not just the first ones, and memory stays at cap x L x 2*H*d float16 values.
    """

    def __init__(self, cap: int, seed: int = 0):
        self.cap = cap
        self.seen = 0
        self.documents = 0
        self._rng = np.random.default_rng(seed)
        self._features: np.ndarray | None = None  # (cap, L, F) float16
        self._labels = np.zeros(cap, dtype=bool)

    def add(self, features: np.ndarray, labels: np.ndarray) -> None:
        """Offer gaps: features (G, L, F), labels (G,)."""
        if self._features is None:
            self._features = np.zeros((self.cap, *features.shape[1:]), dtype=np.float16)
        for row in range(len(labels)):
            slot = self.seen if self.seen < self.cap else int(self._rng.integers(0, self.seen + 1))
            if slot < self.cap:
                self._features[slot] = features[row]
                self._labels[slot] = labels[row]
            self.seen += 1

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(N, L, F) float16 features and (N,) bool labels of the kept gaps, N = min(seen, cap)."""
        kept = min(self.seen, self.cap)
        if self._features is None:
            return np.zeros((0, 0, 0), dtype=np.float16), np.zeros(0, dtype=bool)
        return self._features[:kept], self._labels[:kept]


def is_test_document(number: int, train_fraction: float) -> bool:
    """Documents alternate between the splits: number i is a test document when the running count of
    test documents, floor(i * (1 - f)), steps up at i + 1. For f = 2/3, every third document.

    >>> [is_test_document(i, 2 / 3) for i in range(6)]
    [False, False, True, False, False, True]
    """
    share = 1.0 - train_fraction
    return int((number + 1) * share + 1e-9) > int(number * share + 1e-9)


def window_features(contexts: np.ndarray, row: int, gaps: np.ndarray) -> np.ndarray:
    """(G, L, 2*H*d) features of `gaps` in batch row `row` of contexts (L, B, T, H, d).

    Window position p sits at input position p + 1 (after [CLS]); gap t joins tokens t-1 and t.
    """
    layers = contexts.shape[0]
    left = contexts[:, row, gaps].reshape(layers, len(gaps), -1)  # (L, G, H*d), input index t = token t-1
    right = contexts[:, row, gaps + 1].reshape(layers, len(gaps), -1)  # token t
    return np.concatenate([left, right], axis=-1).transpose(1, 0, 2)


def collect_gaps(
    enc: Encoder,
    docs: Sequence[Document],
    window: int,
    train_fraction: float,
    caps: tuple[int, int],
    on_document: Callable[[], None] | None = None,
) -> tuple[GapSet, GapSet]:
    """Gap features of every layer for the train and the test documents (see `is_test_document`).

    Every document is read; each split keeps a uniform sample of at most its cap of gaps.
    `on_document` is called after each document is queued.
    """
    splits = (GapSet(caps[0], seed=0), GapSet(caps[1], seed=1))
    layers = tuple(range(1, enc.n_layers + 1))
    pending: list[tuple[int, Window]] = []

    def flush() -> None:
        if not pending:
            return
        length = max(len(w.ids) for _, w in pending) + 2
        ids = np.full((len(pending), length), enc.pad_id, dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, (_, w) in enumerate(pending):
            ids[row, : len(w.ids) + 2] = np.concatenate([[enc.cls_id], w.ids, [enc.sep_id]])
            mask[row, : len(w.ids) + 2] = 1
        contexts = enc.forward(ids, mask, layers=layers).contexts  # (L, B, T, H, d)
        for row, (split, w) in enumerate(pending):
            splits[split].add(window_features(contexts, row, w.gaps), w.labels)
        pending.clear()

    for number, doc in enumerate(docs):
        split = int(is_test_document(number, train_fraction))
        splits[split].documents += 1
        for w in document_windows(doc, enc.tokenize, window):
            pending.append((split, w))
            if len(pending) >= WINDOWS_PER_BATCH:
                flush()
        if on_document is not None:
            on_document()
    flush()
    return splits


def f1_score(truth: np.ndarray, predicted: np.ndarray) -> float:
    """F1 of the positive class (NaN when there are no gold and no predicted positives).

    >>> f1_score(np.array([1, 0, 1, 0], bool), np.array([1, 1, 0, 0], bool))
    0.5
    """
    tp = int(np.sum(truth & predicted))
    denominator = int(truth.sum()) + int(predicted.sum())
    return 2 * tp / denominator if denominator else float("nan")


@dataclass(frozen=True)
class LayerScores:
    """Per layer: F1 at p >= 0.5 and average precision (threshold-free) on the test gaps, or None."""

    f1: list
    average_precision: list


def score_layers(train: GapSet, test: GapSet, n_layers: int, c: float) -> LayerScores:
    """Train a logistic probe per layer on `train` and score it on `test`.

    Unmeasurable (all None): no test gaps, no gold boundary among them, or a single class in `train`.
    """
    require("sklearn", "analysis", "the per-layer probe of segmenter analyze")
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import average_precision_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    x_train, y_train = train.arrays()
    x_test, y_test = test.arrays()
    if len(y_test) == 0 or not y_test.any() or len(np.unique(y_train)) < 2:
        return LayerScores([None] * n_layers, [None] * n_layers)
    f1, precision = [], []
    for layer in range(n_layers):
        model = make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=2000))
        model.fit(x_train[:, layer].astype(np.float32), y_train)
        probability = model.predict_proba(x_test[:, layer].astype(np.float32))[:, 1]
        f1.append(round(f1_score(y_test, probability >= 0.5), 4))
        precision.append(round(float(average_precision_score(y_test, probability)), 4))
    return LayerScores(f1, precision)


def condition_documents(docs: Sequence[Document], condition: str) -> list[Document]:
    """The documents as read in `condition`: "clean" as they are, "corrupt" via `corrupt_document`."""
    if condition == "clean":
        return list(docs)
    if condition == "corrupt":
        return [d for d in (corrupt_document(doc) for doc in docs) if d.sentences]
    raise ValueError(f"unknown probe condition {condition!r}")
