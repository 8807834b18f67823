"""Turn per-gap boundary probabilities into spans of the caller's text.

Input: the text, the character offset of every candidate boundary (the first character after a gap)
and its probability. Output: `Span`s that satisfy the invariants every caller relies on:

- `span.text == text[span.start:span.end]`; spans are in order, non-overlapping and non-empty;
- no span starts or ends with whitespace, and every non-whitespace character lies in exactly one span.

Rules, in order: a gap at or above the threshold is a boundary; a blank line (a whitespace run holding
two or more line breaks) always is; of two boundaries with no letter or digit between them only the
more probable one stays (so a lone quote or bracket never becomes a segment); with `max_chars`, a
longer segment is split at its most probable candidate gaps. This module never reads the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from segmenter.config import DecodeConfig

FORCED = 2.0  # sorting key above any probability: forced boundaries always win
_WHITESPACE_RUN = re.compile(r"\s+")


@dataclass(frozen=True)
class Span:
    """One segment: `text[start:end]`.

    score: probability of the boundary that opens this span (1.0 for the first span and for spans
    opened by a blank line).
    """

    start: int
    end: int
    text: str
    score: float = 1.0


def blank_line_boundaries(text: str) -> list[int]:
    """Offsets just after every whitespace run that holds two or more line breaks.

    CRLF counts as one line break; a lone CR counts as one.

    >>> blank_line_boundaries("a\\n\\nb\\r\\n \\r\\nc\\nd")
    [3, 9]
    """
    found = []
    for match in _WHITESPACE_RUN.finditer(text):
        run = match.group()
        breaks = run.count("\n") + run.count("\r") - run.count("\r\n")
        if breaks >= 2 and match.end() < len(text):
            found.append(match.end())
    return found


def decode(text: str, offsets: np.ndarray, probs: np.ndarray, config: DecodeConfig) -> list[Span]:
    """Spans of `text` from candidate boundary `offsets` (G,) and their probabilities `probs` (G,)."""
    scores: dict[int, float] = {}
    for offset, prob in zip(offsets.tolist(), probs.tolist(), strict=True):
        if prob >= config.threshold and 0 < offset < len(text):
            scores[offset] = max(scores.get(offset, 0.0), prob)
    for offset in blank_line_boundaries(text):
        scores[offset] = FORCED
    chosen = _suppress_empty(text, scores)
    if config.max_chars is not None:
        chosen = _cap_length(text, chosen, offsets, probs, config.max_chars)
    return _spans(text, chosen)


def _suppress_empty(text: str, scores: dict[int, float]) -> dict[int, float]:
    """Keep, of consecutive boundaries with no letter or digit between them, the most probable one.

    Forced (blank-line) boundaries are always kept; a boundary with nothing alphanumeric before it
    at the start of the text, or after it at the end, is dropped unless forced. Linear in len(text):
    each character is looked at once, however many boundaries a run without letters or digits holds.
    """
    kept: dict[int, float] = {}
    last = 0  # the last kept boundary (0 while none is kept)
    scanned = 0  # text[last:scanned] has been looked at ...
    alnum = False  # ... and this says whether it holds a letter or digit
    for offset in sorted(scores):
        score = scores[offset]
        alnum = alnum or any(map(str.isalnum, text[scanned:offset]))
        scanned = offset
        if score >= FORCED or alnum:
            if kept and kept[last] < FORCED and not alnum:
                del kept[last]  # a forced boundary displaces a weaker one right before it
            kept[offset] = score
        elif kept and kept[last] < score:
            del kept[last]
            kept[offset] = score
        else:
            continue
        last, alnum = offset, False
    if kept and kept[last] < FORCED and not alnum and not any(map(str.isalnum, text[scanned:])):
        del kept[last]  # nothing but punctuation after it: a lone quote or bracket never is a segment
    return kept


def _cap_length(
    text: str, chosen: dict[int, float], offsets: np.ndarray, probs: np.ndarray, max_chars: int
) -> dict[int, float]:
    """Split every segment longer than max_chars at its most probable candidate gaps."""
    chosen = dict(chosen)
    offsets, probs = np.asarray(offsets, dtype=np.int64), np.asarray(probs, dtype=np.float64)
    rank = np.empty(len(probs), dtype=np.int64)  # 0 = most probable; ties: the earlier candidate
    rank[np.argsort(-probs, kind="stable")] = np.arange(len(probs))
    by_offset = np.argsort(offsets, kind="stable")
    sorted_offsets = offsets[by_offset]
    best = _RangeArgmin(rank[by_offset])
    edges = [0, *sorted(chosen), len(text)]
    for start, end in zip(edges[:-1], edges[1:], strict=True):
        pending = [(start, end)]
        while pending:
            a, b = pending.pop()
            if b - a <= max_chars:
                continue
            lo = int(np.searchsorted(sorted_offsets, a, side="right"))  # candidates with a < offset < b
            hi = int(np.searchsorted(sorted_offsets, b, side="left"))
            if lo >= hi:
                continue  # no candidate gap (one long word): leave it whole
            i = int(by_offset[best(lo, hi)])
            cut = int(offsets[i])
            chosen[cut] = float(probs[i])
            pending += [(a, cut), (cut, b)]
    return chosen


class _RangeArgmin:
    """Position of the smallest value in values[lo:hi], in O(1) after O(n log n) set-up (sparse table),
    so that capping a long text costs n log n instead of n^2."""

    def __init__(self, values: np.ndarray):
        self.values = values
        self.levels = [np.arange(len(values))]  # levels[k][i]: argmin of values[i : i + 2**k]
        while 2 ** len(self.levels) <= len(values):
            prev, half = self.levels[-1], 2 ** (len(self.levels) - 1)
            left, right = prev[:-half], prev[half:]
            self.levels.append(np.where(values[left] <= values[right], left, right))

    def __call__(self, lo: int, hi: int) -> int:
        k = (hi - lo).bit_length() - 1
        left, right = self.levels[k][lo], self.levels[k][hi - 2**k]
        return int(left if self.values[left] <= self.values[right] else right)


def _spans(text: str, boundaries: dict[int, float]) -> list[Span]:
    spans = []
    edges = [0, *sorted(boundaries), len(text)]
    for start, end in zip(edges[:-1], edges[1:], strict=True):
        score = min(boundaries.get(start, 1.0), 1.0)
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end:
            spans.append(Span(start, end, text[start:end], score))
    return spans
