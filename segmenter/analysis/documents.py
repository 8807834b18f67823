"""Per-document records of the numbers the paper's claims are aggregated from, one row per analysed text.

The pooled statistics of stats.py are sums over texts; the claims' bootstrap intervals resample texts
(one per document), so every sum a claim's number depends on is also kept per text: attention to
[SEP] per layer (averaged over heads), and for the high-similarity pairs (raw scalar product) per layer
their count, their summed token distance, how many lie within one sentence, and per head how often each
token is an end of a pair. `DocumentRecorder` collects them while texts are folded in; `DocumentStats`
holds them as arrays. Memory grows with the number of texts (the token counts with their pairs).
Leaves out: aggregating and resampling the records (bootstrap.py), the pooled sums (stats.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DocumentStats:
    """The records of n texts of an encoder with L layers and H heads.

    sep_attention:  (n, L) attention to [SEP] per layer, averaged over heads and query tokens; NaN for
                    a text whose attention was not captured
    pairs:          (n, L) high-similarity pairs counted, over all heads
    pair_distance:  (n, L) summed token distance j - i of those pairs
    within:         (n, L) pairs whose two tokens share a sentence id
    token_document, token_column, token_count: (m,) sparse end counts: text `token_document[e]` has
                    `token_count[e]` pair ends at column `token_column[e]` of a (L, H, V') array whose
                    last axis is `vocabulary` (the token ids that end any pair, ascending)
    vocabulary:     (V',) those token ids
    """

    n_layers: int
    n_heads: int
    sep_attention: np.ndarray
    pairs: np.ndarray
    pair_distance: np.ndarray
    within: np.ndarray
    token_document: np.ndarray
    token_column: np.ndarray
    token_count: np.ndarray
    vocabulary: np.ndarray

    @property
    def n_documents(self) -> int:
        return int(self.pairs.shape[0])


class DocumentRecorder:
    """Collects the per-text records; `stats()` returns them as a `DocumentStats`.

    Call `add_text` once per text, then `add_pairs` for each of its layers (the pairs of the primary
    similarity), in any order.
    """

    def __init__(self, n_layers: int, n_heads: int, vocab_size: int):
        self.n_layers, self.n_heads, self.vocab_size = n_layers, n_heads, vocab_size
        self._sep: list[np.ndarray] = []
        self._pairs: list[np.ndarray] = []
        self._distance: list[np.ndarray] = []
        self._within: list[np.ndarray] = []
        self._token_keys: list[np.ndarray] = []
        self._token_counts: list[np.ndarray] = []
        self._token_documents: list[np.ndarray] = []

    def add_text(self, sep_attention: np.ndarray | None) -> None:
        """Open the record of the next text; `sep_attention` (L, H) or None when not captured."""
        sep = np.full(self.n_layers, np.nan) if sep_attention is None else sep_attention.mean(axis=1)
        self._sep.append(np.asarray(sep, dtype=np.float64))
        for rows in (self._pairs, self._distance, self._within):
            rows.append(np.zeros(self.n_layers, dtype=np.int64))

    def add_pairs(self, layer: int, i: np.ndarray, j: np.ndarray, ids: np.ndarray, sentence: np.ndarray):
        """Record the pairs (i, j), each (H, k), of the current text at 0-based `layer`."""
        heads, k = i.shape
        if k == 0:
            return
        self._pairs[-1][layer] += heads * k
        self._distance[-1][layer] += int((j - i).sum())
        self._within[-1][layer] += int((sentence[i] == sentence[j]).sum())
        head = np.broadcast_to(np.arange(heads)[:, None], (heads, k))
        rows = (layer * self.n_heads + head).astype(np.int64)
        keys = np.concatenate(
            [(rows * self.vocab_size + ids[i]).ravel(), (rows * self.vocab_size + ids[j]).ravel()]
        )
        keys, counts = np.unique(keys, return_counts=True)
        self._token_keys.append(keys)
        self._token_counts.append(counts.astype(np.int64))
        self._token_documents.append(np.full(keys.size, len(self._pairs) - 1, dtype=np.int64))

    def stats(self) -> DocumentStats:
        """The records so far as arrays (the token columns renumbered over the tokens that occur)."""
        layers = self.n_layers
        keys = _concatenate(self._token_keys)
        head_rows, tokens = np.divmod(keys, self.vocab_size)
        vocabulary, compact = np.unique(tokens, return_inverse=True)
        return DocumentStats(
            n_layers=layers,
            n_heads=self.n_heads,
            sep_attention=_stack(self._sep, layers, np.float64),
            pairs=_stack(self._pairs, layers, np.int64),
            pair_distance=_stack(self._distance, layers, np.int64),
            within=_stack(self._within, layers, np.int64),
            token_document=_concatenate(self._token_documents),
            token_column=head_rows * vocabulary.size + compact.reshape(-1),
            token_count=_concatenate(self._token_counts),
            vocabulary=vocabulary,
        )


def _stack(rows: list[np.ndarray], width: int, dtype) -> np.ndarray:
    return np.stack(rows).astype(dtype) if rows else np.zeros((0, width), dtype=dtype)


def _concatenate(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
