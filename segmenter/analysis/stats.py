"""The statistics of the attention-head analysis, each defined in its function's docstring: numpy in, out.

Per text and layer, `HeadAccumulator.add` folds attention probabilities `(L, H, T, T)` and head context
vectors `(L, T, H, d)` into fixed-size running sums; `HeadAccumulator.summary` turns the sums into the
reported numbers. Their memory is bounded by (layers x heads x max(max_tokens, vocabulary)), never by
the number of texts; beside them, the per-text records the claims' bootstrap resamples (a few sums per
layer, and the token counts of each head's pairs) go to a `DocumentRecorder` (documents.py), which grows
with the texts. Every statistic is defined in the docstring of the function that computes it.
Leaves out: running the model, choosing texts, plots, claims.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

from segmenter.analysis.documents import DocumentRecorder, DocumentStats
from segmenter.analysis.inputs import SentenceText

SIMILARITIES = ("dot", "cosine")
PRIMARY_SIMILARITY = "dot"  # the one the per-layer numbers, the claims and their records use


# --------------------------------------------------------------------------- per text, per layer


def attention_share(attention: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """(H,) attention mass on the `targets` keys, summed over those keys and averaged over all queries.

    attention: (H, T, T) probabilities, rows = queries; targets: (T,) bool key mask.
    Averaging this over texts gives the attention-to-[SEP] (or [CLS], or periods) of Clark et al. 2019.

    >>> att = np.zeros((1, 3, 3)); att[0, :, 2] = 1.0
    >>> attention_share(att, np.array([False, False, True])).tolist()
    [1.0]
    """
    return attention[:, :, targets].sum(axis=-1).mean(axis=-1)


def similarity_matrices(contexts: np.ndarray, kind: str = "dot") -> np.ndarray:
    """(H, T, T) context similarity per head from head vectors `contexts` (T, H, d).

    kind "dot": S = C C^T, the raw scalar product; "cosine": the same on unit-normalised vectors.
    (numpy in and out; the product runs in torch, several times faster than numpy's batched matmul.)

    >>> s = similarity_matrices(np.array([[[3.0, 4.0]], [[1.0, 0.0]]]), "cosine")
    >>> s.shape, s[0].astype(float).round(2).tolist()
    ((1, 2, 2), [[1.0, 0.6], [0.6, 1.0]])
    """
    if kind not in SIMILARITIES:
        raise ValueError(f"unknown similarity {kind!r}; use one of {SIMILARITIES}")
    heads = torch.from_numpy(np.ascontiguousarray(contexts.transpose(1, 0, 2), dtype=np.float32))  # (H, T, d)
    if kind == "cosine":
        heads = torch.nn.functional.normalize(heads, dim=-1, eps=1e-12)
    return torch.bmm(heads, heads.transpose(1, 2)).numpy()


@lru_cache(maxsize=64)
def candidate_pairs(n_tokens: int) -> tuple[np.ndarray, np.ndarray]:
    """Unordered off-diagonal pairs (i < j) of a text of `n_tokens`, position 0 ([CLS]) excluded.

    >>> [a.tolist() for a in candidate_pairs(4)]
    [[1, 1, 2], [2, 3, 3]]
    """
    i, j = np.triu_indices(max(n_tokens - 1, 0), k=1)
    i, j = i + 1, j + 1
    i.setflags(write=False)
    j.setflags(write=False)
    return i, j


def n_selected(n_candidates: int, top_percent: float) -> int:
    """How many pairs form the top `top_percent` %: max(1, round(p/100 * n)), at most n.

    >>> n_selected(4950, 1.0), n_selected(3, 1.0), n_selected(0, 1.0)
    (50, 1, 0)
    """
    if n_candidates == 0:
        return 0
    return min(n_candidates, max(1, round(n_candidates * top_percent / 100.0)))


def top_pairs(similarity: np.ndarray, top_percent: float) -> tuple[np.ndarray, np.ndarray]:
    """Per head, the high-similarity pairs: the top `top_percent` % of candidate pairs by S.

    similarity: (H, T, T). Returns (i, j), each (H, k) with i < j, [CLS] (position 0) never included.
    Ties at the cut are broken arbitrarily (but deterministically).
    """
    heads, n_tokens, _ = similarity.shape
    ci, cj = candidate_pairs(n_tokens)
    k = n_selected(ci.size, top_percent)
    if k == 0:
        empty = np.zeros((heads, 0), dtype=np.int64)
        return empty, empty
    values = torch.from_numpy(np.ascontiguousarray(similarity[:, ci, cj]))  # (H, n)
    chosen = torch.topk(values, k, dim=1, sorted=False).indices.numpy()  # (H, k)
    return ci[chosen], cj[chosen]


def chance_pair_stats(sentence: np.ndarray) -> tuple[float, float]:
    """(within-sentence share, mean distance) of a uniformly random candidate pair of one text.

    sentence: (T,) sentence id per token, position 0 being [CLS].

    >>> chance_pair_stats(np.array([-1, 0, 0, 1, 1]))
    (0.3333333333333333, 1.6666666666666667)
    """
    n = sentence.size - 1
    if n < 2:
        return 0.0, 0.0
    pairs = n * (n - 1) / 2
    _, sizes = np.unique(sentence[1:], return_counts=True)
    within = float((sizes * (sizes - 1) / 2).sum() / pairs)
    return within, (n + 1) / 3.0


# --------------------------------------------------------------------------- running sums


class PairAccumulator:
    """Running counts over the high-similarity pairs of one similarity kind, per layer and head.

    distance:   (L, H, D) int64 histogram of j - i (D = max_tokens)
    pairs:      (L, H) pairs counted
    within:     (L, H) pairs whose tokens share a sentence id
    same_token: (L, H) pairs whose tokens have the same id
    sep_pairs:  (L, H) pairs of two [SEP] tokens (a subset of same_token)
    tokens:     (L, H, V) how often each vocabulary id is an end of a pair (both ends counted)
    text_sums:  (2, L) sums over texts of the text's mean distance and within-sentence share (pooled
                over heads), and text_count (L,) texts counted: the text-weighted variants
    """

    def __init__(self, n_layers: int, n_heads: int, max_tokens: int, vocab_size: int):
        self.distance = np.zeros((n_layers, n_heads, max_tokens), dtype=np.int64)
        self.pairs = np.zeros((n_layers, n_heads), dtype=np.int64)
        self.within = np.zeros((n_layers, n_heads), dtype=np.int64)
        self.same_token = np.zeros((n_layers, n_heads), dtype=np.int64)
        self.sep_pairs = np.zeros((n_layers, n_heads), dtype=np.int64)
        self.tokens = np.zeros((n_layers, n_heads, vocab_size), dtype=np.int64)
        self.text_sums = np.zeros((2, n_layers))
        self.text_count = np.zeros(n_layers, dtype=np.int64)

    def add(
        self, layer: int, i: np.ndarray, j: np.ndarray, ids: np.ndarray, sentence: np.ndarray, sep_id: int
    ):
        """Count the pairs (i, j), each (H, k), of one text at layer index `layer` (0-based)."""
        heads, k = i.shape
        if k == 0:
            return
        head = np.broadcast_to(np.arange(heads)[:, None], (heads, k))
        np.add.at(self.distance[layer], (head, j - i), 1)
        left, right = ids[i], ids[j]  # (H, k)
        within = sentence[i] == sentence[j]
        self.pairs[layer] += k
        self.within[layer] += within.sum(axis=1)
        self.text_sums[:, layer] += ((j - i).mean(), within.mean())
        self.text_count[layer] += 1
        self.same_token[layer] += (left == right).sum(axis=1)
        self.sep_pairs[layer] += ((left == sep_id) & (right == sep_id)).sum(axis=1)
        np.add.at(self.tokens[layer], (head, left), 1)
        np.add.at(self.tokens[layer], (head, right), 1)


@dataclass(frozen=True)
class Example:
    """One short text kept whole for the similarity figure: its ids, sentence ids, contexts (L, T, H, d)."""

    text: SentenceText
    contexts: np.ndarray

    def similarity(self, layer: int, head: int, kind: str = "dot") -> np.ndarray:
        """(T, T) similarity matrix of 0-based `layer`, `head` on this text."""
        return similarity_matrices(self.contexts[layer][:, head : head + 1], kind)[0]


class HeadAccumulator:
    """Fold texts into fixed-size sums for every statistic; `summary()` gives the reported numbers.

    attention sums (L, H) for [SEP], [CLS] and periods; a `PairAccumulator` per similarity kind;
    chance-level references; one example text for the figures; the per-text records of the claims'
    numbers (`documents()`).
    """

    def __init__(
        self,
        n_layers: int,
        n_heads: int,
        vocab_size: int,
        max_tokens: int,
        cls_id: int,
        sep_id: int,
        period_ids: tuple[int, ...],
        top_percent: float,
        example_max_tokens: int = 120,
    ):
        self.n_layers, self.n_heads = n_layers, n_heads
        self.cls_id, self.sep_id = cls_id, sep_id
        self.period_ids = np.asarray(period_ids, dtype=np.int64)
        self.top_percent = top_percent
        self.example_max_tokens = example_max_tokens
        self.attention = {name: np.zeros((n_layers, n_heads)) for name in ("sep", "cls", "period")}
        self.attention_texts = 0
        self.pair_stats = {
            kind: PairAccumulator(n_layers, n_heads, max_tokens, vocab_size) for kind in SIMILARITIES
        }
        self.chance = np.zeros(3)  # weighted within share, weighted mean distance, weight
        self.texts = 0
        self.tokens = 0
        self.sentences = 0
        self.example: Example | None = None
        self._example_rank = -1
        self._documents = DocumentRecorder(n_layers, n_heads, vocab_size)

    def add(self, text: SentenceText, attentions: np.ndarray | None, contexts: np.ndarray) -> None:
        """Fold in one text: attentions (L, H, T, T) or None, contexts (L, T, H, d), both cut to len(text)."""
        n = len(text)
        if contexts.shape[:2] != (self.n_layers, n) or contexts.shape[2] != self.n_heads:
            raise ValueError(f"contexts {contexts.shape} do not match {self.n_layers} layers x {n} tokens")
        self.texts += 1
        self.tokens += n
        self.sentences += text.n_sentences
        sep = None if attentions is None else self._add_attention(text, attentions)
        self._documents.add_text(sep)
        for layer in range(self.n_layers):
            for kind, acc in self.pair_stats.items():
                i, j = top_pairs(similarity_matrices(contexts[layer], kind), self.top_percent)
                acc.add(layer, i, j, text.ids, text.sentence, self.sep_id)
                if kind == PRIMARY_SIMILARITY:
                    self._documents.add_pairs(layer, i, j, text.ids, text.sentence)
        k = n_selected(candidate_pairs(n)[0].size, self.top_percent)
        within, distance = chance_pair_stats(text.sentence)
        self.chance += (k * within, k * distance, k)
        self._consider_example(text, contexts)

    def _add_attention(self, text: SentenceText, attentions: np.ndarray) -> np.ndarray:
        """Add one text's attention shares; returns its (L, H) attention to [SEP]."""
        targets = {
            "sep": text.ids == self.sep_id,
            "cls": text.ids == self.cls_id,
            "period": np.isin(text.ids, self.period_ids),
        }
        shares = {name: np.zeros((self.n_layers, self.n_heads)) for name in targets}
        for layer in range(self.n_layers):
            for name, mask in targets.items():
                shares[name][layer] = attention_share(attentions[layer], mask)
        for name, share in shares.items():
            self.attention[name] += share
        self.attention_texts += 1
        return shares["sep"]

    def _consider_example(self, text: SentenceText, contexts: np.ndarray) -> None:
        short = len(text) <= self.example_max_tokens
        rank = 2 if short and text.n_sentences >= 3 else 1 if short else 0
        if rank > self._example_rank:
            self.example = Example(text, np.array(contexts, dtype=np.float32, copy=True))
            self._example_rank = rank

    def documents(self) -> DocumentStats:
        """The per-text records of the texts added so far, for the claims' bootstrap intervals."""
        return self._documents.stats()

    def summary(self, repetition_threshold: float = 0.5) -> dict:
        """Every reported statistic as numpy arrays / numbers (see `summarize_pairs` for the pair ones)."""
        texts = max(self.attention_texts, 1)
        weight = max(self.chance[2], 1.0)
        out = {
            "n_texts": self.texts,
            "n_tokens": self.tokens,
            "n_sentences": self.sentences,
            "sep_attention": self.attention["sep"] / texts,
            "cls_attention": self.attention["cls"] / texts,
            "period_attention": self.attention["period"] / texts,
            "chance_within_sentence_fraction": float(self.chance[0] / weight),
            "chance_mean_pair_distance": float(self.chance[1] / weight),
        }
        for kind, acc in self.pair_stats.items():
            out[kind] = summarize_pairs(acc, repetition_threshold)
        return out


# --------------------------------------------------------------------------- summaries (pure)


def summarize_pairs(acc: PairAccumulator, repetition_threshold: float) -> dict:
    """The pair statistics of one similarity kind, from its running counts.

    mean_pair_distance (L,), mean_pair_distance_by_head (L, H), distance_histogram (L, D) pooled over
    heads, distance_ratio_last_first, within_sentence_fraction (L,) and by head (L, H), anchor_tokens
    (L, H) ids with anchor_share (L, H), anchor_uniqueness (L,), repetition_share (L, H),
    sep_pair_share (L, H), repetition_heads [(layer, head), ...] 1-based; text_weighted: the mean
    distance and within-sentence share (L,) averaged over texts instead of pooled over pairs.
    """
    mean_distance = mean_pair_distance(acc.distance)
    anchors, anchor_share = anchor_tokens(acc.tokens)
    repetition = safe_divide(acc.same_token, acc.pairs)
    return {
        "mean_pair_distance": mean_distance,
        "mean_pair_distance_by_head": mean_pair_distance(acc.distance, by_head=True),
        "distance_histogram": acc.distance.sum(axis=1),
        "distance_ratio_last_first": ratio_last_first(mean_distance),
        "within_sentence_fraction": safe_divide(acc.within.sum(axis=1), acc.pairs.sum(axis=1)),
        "within_sentence_fraction_by_head": safe_divide(acc.within, acc.pairs),
        "anchor_tokens": anchors,
        "anchor_share": anchor_share,
        "anchor_uniqueness": anchor_uniqueness(anchors),
        "repetition_share": repetition,
        "sep_pair_share": safe_divide(acc.sep_pairs, acc.pairs),
        "repetition_heads": repetition_heads(repetition, repetition_threshold),
        "n_pairs": acc.pairs,
        "text_weighted": {
            "mean_pair_distance": safe_divide(acc.text_sums[0], acc.text_count),
            "within_sentence_fraction": safe_divide(acc.text_sums[1], acc.text_count),
        },
    }


def safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den elementwise, NaN where den is 0."""
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def mean_pair_distance(histogram: np.ndarray, by_head: bool = False) -> np.ndarray:
    """Mean token distance |i - j| of high-similarity pairs from a histogram (L, H, D) over distance.

    Pooled over heads (every pair weighs the same) -> (L,); with `by_head` -> (L, H). NaN without pairs.

    >>> hist = np.zeros((1, 2, 5), dtype=int); hist[0, 0, 1] = 3; hist[0, 1, 4] = 1
    >>> mean_pair_distance(hist).tolist(), mean_pair_distance(hist, by_head=True).tolist()
    ([1.75], [[1.0, 4.0]])
    """
    distances = np.arange(histogram.shape[-1])
    if not by_head:
        histogram = histogram.sum(axis=1)
    return safe_divide((histogram * distances).sum(axis=-1), histogram.sum(axis=-1))


def ratio_last_first(per_layer: np.ndarray) -> float:
    """per_layer[-1] / per_layer[0] (NaN when undefined)."""
    first, last = float(per_layer[0]), float(per_layer[-1])
    return last / first if first > 0 else float("nan")


def anchor_tokens(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Anchor token of every head: the id most often at an end of its high-similarity pairs.

    counts: (L, H, V) end counts. Returns (anchor ids (L, H), anchor share (L, H)) where share is the
    anchor's count over all ends; id -1 and share NaN for a head without pairs. Ties go to the lower id.

    >>> c = np.zeros((1, 2, 4), dtype=int); c[0, 0, 3] = 5; c[0, 0, 1] = 1; c[0, 1, 2] = 2
    >>> [a.tolist() for a in anchor_tokens(c)]
    [[[3, 2]], [[0.8333333333333334, 1.0]]]
    """
    anchors = counts.argmax(axis=-1)
    top = np.take_along_axis(counts, anchors[..., None], axis=-1)[..., 0]
    total = counts.sum(axis=-1)
    anchors = np.where(total > 0, anchors, -1)
    return anchors, safe_divide(top, total)


def anchor_uniqueness(anchors: np.ndarray) -> np.ndarray:
    """(L,) share of a layer's heads whose anchor token is the anchor of no other head in that layer.

    Heads without pairs (anchor -1) count as not unique.

    >>> anchor_uniqueness(np.array([[5, 6, 7, 5], [1, 1, 1, 1]])).tolist()
    [0.5, 0.0]
    """
    out = np.zeros(anchors.shape[0])
    for layer, row in enumerate(anchors):
        values, counts = np.unique(row, return_counts=True)
        unique = {int(v) for v, c in zip(values, counts, strict=True) if c == 1 and v >= 0}
        out[layer] = np.mean([int(a) in unique for a in row])
    return out


def repetition_heads(share: np.ndarray, threshold: float) -> list[tuple[int, int]]:
    """Heads (1-based layer, head) whose share of identical-token pairs exceeds `threshold`.

    >>> repetition_heads(np.array([[0.9, 0.1], [0.5, 0.7]]), 0.5)
    [(1, 1), (2, 2)]
    """
    layers, heads = np.nonzero(np.nan_to_num(share, nan=0.0) > threshold)
    return [(int(layer) + 1, int(head) + 1) for layer, head in zip(layers, heads, strict=True)]


def layer_thirds(n_layers: int) -> tuple[list[int], list[int]]:
    """0-based indices of the first and the last third of the layers (at least one layer each).

    >>> layer_thirds(6), layer_thirds(12)[1]
    (([0, 1], [4, 5]), [8, 9, 10, 11])
    """
    size = max(1, round(n_layers / 3))
    return list(range(size)), list(range(n_layers - size, n_layers))
