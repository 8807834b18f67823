"""Gap features from one encoder window: the paper's signals and per-head context vectors.

For a window holding n text tokens (positions 1..n between [CLS] at 0 and [SEP] at n+1), this module
turns the captured heads of the chosen layers into

- token signals, per layer and head, for each text token t:
    received  attention t receives, averaged over all real queries of the window
    to_sep    attention t sends to the window's final [SEP]
    to_cls    attention t sends to [CLS]
    contrast  similarity contrast at the gap after t: mean cosine similarity of the head's context
              vectors inside the `span` tokens left of the gap and inside the `span` tokens right of
              it, minus the mean similarity across the gap (TextTiling on head vectors)
- token vectors: the per-head context vectors of every chosen layer, concatenated,

and describes the gap between tokens t and t+1 by the features of both tokens. It also offers the two
unsupervised scores built on the signals. It never sees text, offsets or labels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from segmenter.config import FeatureConfig
from segmenter.text.tokens import Capture

SIGNALS = ("received", "to_sep", "to_cls", "contrast")


@dataclass(frozen=True)
class WindowFeatures:
    """Per-token features of one window's n text tokens.

    signals: (n, S, L, H) float32 with S = len(SIGNALS), or None
    vectors: (n, L * H * d_head) float32, or None
    hidden:  (n, L * D) float32 block outputs, or None
    surface: (n, F) float32 case/punctuation flags of the original characters, or None
    """

    signals: np.ndarray | None
    vectors: np.ndarray | None
    hidden: np.ndarray | None = None
    surface: np.ndarray | None = None

    def gap_matrix(self, context: int = 1) -> np.ndarray:
        """(n-1, 2 * context * F) features of every gap: the features of the `context` tokens on each
        side, nearest last on the left and first on the right (positions past the window edge repeat
        the edge token)."""
        tokens = self.token_matrix()  # (n, F)
        return tokens[gap_picks(tokens.shape[0], context)].reshape(tokens.shape[0] - 1, -1)

    def token_matrix(self) -> np.ndarray:
        """(n, F) features of each token: signals, vectors, hidden states, surface flags, in that order."""
        parts = []
        if self.signals is not None:
            parts.append(self.signals.reshape(self.signals.shape[0], -1))
        if self.vectors is not None:
            parts.append(self.vectors)
        if self.hidden is not None:
            parts.append(self.hidden)
        if self.surface is not None:
            parts.append(self.surface)
        return np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]


def gap_picks(n: int, context: int) -> np.ndarray:
    """(n-1, 2 * context) token index of each slot of each gap's features: the gap after token t reads
    tokens t-c+1 .. t (left, nearest last) and t+1 .. t+c (right), clipped to the window's n tokens."""
    offsets = np.arange(-context + 1, context + 1)
    return np.clip(np.arange(n - 1)[:, None] + offsets[None, :], 0, n - 1)


def needs_attention(config: FeatureConfig) -> bool:
    return config.signals


def window_features(
    capture: Capture,
    row: int,
    n: int,
    config: FeatureConfig,
    surface: np.ndarray | None = None,
    contrast: np.ndarray | None = None,
) -> WindowFeatures:
    """Features of the n text tokens in batch row `row` of `capture`; `surface` (n, F) are their flags,
    `contrast` the row's slice of `batch_contrast` (needed when `config.signals`)."""
    vectors = None
    if config.vectors:
        contexts = capture.contexts[:, row, 1 : n + 1]  # (L, n, H, d)
        vectors = np.ascontiguousarray(contexts.transpose(1, 0, 2, 3)).reshape(n, -1)
    signals = None
    if config.signals:
        summary = capture.summaries[:, row, :, :, 1 : n + 1]  # (L, 3, H, n): received, to_sep, to_cls
        gaps = contrast[:, :, :n, None].transpose(0, 3, 1, 2)  # (L, 1, H, n)
        signals = np.concatenate([summary, gaps], axis=1).transpose(3, 1, 0, 2)  # (n, S, L, H)
    hidden = None
    if config.hidden:
        hidden = np.ascontiguousarray(capture.hidden[:, row, 1 : n + 1].transpose(1, 0, 2)).reshape(n, -1)
    flags = surface if config.surface else None
    return WindowFeatures(signals=signals, vectors=vectors, hidden=hidden, surface=flags)


def _standardise(values: np.ndarray) -> np.ndarray:
    """(n,) values relative to the window: (v - median) / std."""
    return (values - np.median(values)) / max(float(values.std()), 1e-6)


def sep_attention_score(features: WindowFeatures) -> np.ndarray:
    """(n-1,) unsupervised separator score of each gap, from the attention signals only.

    A token that ends a sentence behaves like a separator: it receives attention from the whole
    window, and attention toward the final [SEP] jumps across the gap after it. Score = standardised
    log attention received by the token before the gap + standardised jump in [SEP]-directed attention,
    each averaged over the chosen layers and heads and standardised within the window.
    """
    signals = features.signals  # (n, S, L, H)
    received = np.log(np.maximum(signals[:, 0].mean(axis=(1, 2)), 1e-9))  # (n,)
    to_sep = signals[:, 1].mean(axis=(1, 2))  # (n,)
    return _standardise(received[:-1]) + _standardise(to_sep[1:] - to_sep[:-1])


def similarity_score(features: WindowFeatures) -> np.ndarray:
    """(n-1,) unsupervised similarity score of each gap: the head-vector similarity contrast, averaged
    over the chosen layers and heads and standardised within the window."""
    contrast = features.signals[:, 3].mean(axis=(1, 2))  # (n,) contrast at the gap after each token
    return _standardise(contrast[:-1])
