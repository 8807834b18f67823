"""Cut token sequences into overlapping encoder windows and average per-gap scores back.

Pure numpy: plans which tokens each window holds, builds padded `[CLS] ... [SEP]` batches, and
accumulates per-window gap scores into one score per gap of the whole text, weighting each window's
opinion by how far the gap lies from that window's edges (a token at a window's edge has seen only one
side of its context). Nothing here knows about models or features.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from segmenter.config import WindowConfig


@dataclass(frozen=True)
class Window:
    """Tokens [start, end) of text number `text` go into one encoder window."""

    text: int
    start: int
    end: int

    def __len__(self) -> int:
        return self.end - self.start


def plan(n_tokens: int, config: WindowConfig, text: int = 0) -> list[Window]:
    """Windows covering `n_tokens` tokens so that every gap between neighbours lies inside one.

    >>> [(w.start, w.end) for w in plan(10, WindowConfig(size=8, stride=4))]
    [(0, 6), (4, 10)]
    """
    if n_tokens == 0:
        return []
    content = config.content
    if n_tokens <= content:
        return [Window(text, 0, n_tokens)]
    starts = list(range(0, n_tokens - content, config.stride))
    starts.append(n_tokens - content)  # the last window ends exactly at the text's end
    return [Window(text, s, s + content) for s in dict.fromkeys(starts)]


def gap_weights(length: int) -> np.ndarray:
    """(length-1,) weight of each gap inside a window: its distance to the nearer window edge, plus one.

    >>> gap_weights(6).tolist()
    [1.0, 2.0, 3.0, 2.0, 1.0]
    """
    gaps = np.arange(1, length, dtype=np.float32)
    return np.minimum(gaps, length - gaps)


def batch_inputs(
    ids: list[np.ndarray],
    windows: list[Window],
    cls_id: int,
    sep_id: int,
    pad_id: int,
    multiple: int = 1,
    max_width: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Padded (B, T) input ids and attention mask for `windows`; ids[w.text] holds each text's tokens.

    Row b is `[CLS] tokens [SEP] [PAD]...`; T is the longest window plus two, rounded up to a multiple
    of `multiple` (at most `max_width`): few distinct shapes let the backend reuse its compiled kernels.
    """
    width = max(len(w) for w in windows) + 2
    rounded = -(-width // multiple) * multiple
    width = rounded if max_width is None else max(width, min(rounded, max_width))
    input_ids = np.full((len(windows), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(windows), width), dtype=np.int64)
    for row, window in enumerate(windows):
        n = len(window)
        input_ids[row, 0] = cls_id
        input_ids[row, 1 : n + 1] = ids[window.text][window.start : window.end]
        input_ids[row, n + 1] = sep_id
        mask[row, : n + 2] = 1
    return input_ids, mask


class GapAverager:
    """Weighted average of per-window gap scores for one text with `n_tokens` tokens.

    Gap i lies between token i and token i+1 (so there are n_tokens-1 gaps).
    """

    def __init__(self, n_tokens: int):
        n_gaps = max(n_tokens - 1, 0)
        self._sum = np.zeros(n_gaps, dtype=np.float64)
        self._weight = np.zeros(n_gaps, dtype=np.float64)

    def add(self, window: Window, scores: np.ndarray) -> None:
        """scores: (len(window)-1,) one score per gap inside the window."""
        weights = gap_weights(len(window))
        self._sum[window.start : window.end - 1] += weights * scores
        self._weight[window.start : window.end - 1] += weights

    def result(self) -> np.ndarray:
        """(n_tokens-1,) averaged scores."""
        return (self._sum / np.maximum(self._weight, 1e-12)).astype(np.float32)
