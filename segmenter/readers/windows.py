"""Cut token sequences into overlapping encoder windows and average per-gap scores back.

Pure numpy: plans which tokens each window holds (`WindowPlanner`, for a token sequence that may still
grow, and `plan` for a whole one), builds padded `[CLS] ... [SEP]` batches, and accumulates per-window
gap scores into one score per gap of the whole text (`GapAverager`), weighting each window's opinion by
how far the gap lies from that window's edges (a token at a window's edge has seen only one side of its
context). A streamed text and a whole one get the same windows and the same averages from these two
classes. Nothing here knows about models or features.
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
    return WindowPlanner(config, text).advance(n_tokens, final=True)


class WindowPlanner:
    """The windows `plan` makes for a token sequence that arrives in pieces, each as soon as it is
    certain: `advance(n, final)` returns the windows that `n` tokens so far decide (all the rest when
    `final`), so that the concatenation of its answers is `plan(n_final)`.

    >>> planner = WindowPlanner(WindowConfig(size=8, stride=4))
    >>> [(w.start, w.end) for w in planner.advance(7, final=False) + planner.advance(10, final=True)]
    [(0, 6), (4, 10)]
    """

    def __init__(self, config: WindowConfig, text: int = 0):
        self.content, self.stride, self.text = config.content, config.stride, text
        self.next_start = 0  # token index where the next window starts
        self._done = False

    def advance(self, n_tokens: int, final: bool) -> list[Window]:
        """New windows over the first `n_tokens` tokens (a count that never shrinks between calls)."""
        if self._done:
            return []
        content, windows = self.content, []
        # A start below n_now - content is below n_final - content: `plan` makes a window there too.
        while self.next_start < n_tokens - content:
            windows.append(Window(self.text, self.next_start, self.next_start + content))
            self.next_start += self.stride
        if final:
            self._done = True
            if n_tokens > content:  # the last window ends exactly at the text's end
                windows.append(Window(self.text, n_tokens - content, n_tokens))
            elif n_tokens > 0:  # the whole text fits one window
                windows.append(Window(self.text, 0, n_tokens))
            self.next_start = n_tokens
        return windows

    def first_start(self, n_tokens: int) -> int:
        """No window still to come starts before this token index (with `n_tokens` tokens so far):
        the next planned start, or the last window's start, which ends at the text's end."""
        return min(self.next_start, max(n_tokens - self.content, 0))


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
    """Weighted average of per-window gap scores for one text with `n_tokens` tokens (`grow` adds
    tokens to a text that arrives in pieces; `trim` forgets gaps no window will touch again).

    Gap i lies between token i and token i+1 (so there are n_tokens-1 gaps); indices are the text's
    token indices, whatever has been trimmed.
    """

    def __init__(self, n_tokens: int = 0):
        self._base = 0  # token index of the first gap kept
        self._sum = np.zeros(0, dtype=np.float64)  # (kept gaps,)
        self._weight = np.zeros(0, dtype=np.float64)
        self.grow(n_tokens)

    def grow(self, n_tokens: int) -> None:
        """The text now has `n_tokens` tokens."""
        more = max(n_tokens - 1, 0) - self._base - len(self._sum)
        if more > 0:
            self._sum = np.concatenate([self._sum, np.zeros(more)])
            self._weight = np.concatenate([self._weight, np.zeros(more)])

    def add(self, window: Window, scores: np.ndarray) -> None:
        """scores: (len(window)-1,) one score per gap inside the window."""
        weights = gap_weights(len(window))
        lo, hi = window.start - self._base, window.end - 1 - self._base
        self._sum[lo:hi] += weights * scores
        self._weight[lo:hi] += weights

    def averages(self, start: int, stop: int) -> np.ndarray:
        """(stop-start,) averaged scores of gaps start..stop-1 (not trimmed yet)."""
        lo, hi = start - self._base, stop - self._base
        return (self._sum[lo:hi] / np.maximum(self._weight[lo:hi], 1e-12)).astype(np.float32)

    def result(self) -> np.ndarray:
        """(n_tokens-1,) averaged scores of every gap (of a text nothing was trimmed from)."""
        return self.averages(self._base, self._base + len(self._sum))

    def trim(self, keep_from: int) -> None:
        """Forget the gaps before token index `keep_from`."""
        drop = keep_from - self._base
        if drop > 0:
            self._sum, self._weight = self._sum[drop:], self._weight[drop:]
            self._base = keep_from
