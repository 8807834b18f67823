"""Pieces: the units a chunk is made of, with their token counts.

A piece is a sentence span, unless the sentence alone holds more than the budget: then it is cut at
its inner whitespace gaps into the fewest parts that fit, and among those cuts at the gaps the
segmenter finds most likely to end a sentence (a line break in the gap counts as one more); a run of
text without whitespace longer than the budget (a long URL, a base64 blob) is cut at the longest prefix
that fits, the one place a chunk may end inside a word. Pieces are in order, never overlap, never start
or end with whitespace, and together cover every non-whitespace character of the text, as sentence spans
do.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from segmenter.chunking.counting import Counter

LINE_BONUS = 1.0  # a gap with a line break in it is preferred over any gap without one
INSIDE_WORD = -1.0  # a cut inside a run of text without whitespace: the last resort

InnerGaps = Callable[[str], tuple[np.ndarray, np.ndarray]]


HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")


@dataclass(frozen=True)
class Piece:
    """`text[start:end]` and its `tokens`; `paragraph`: it opens the text, follows a blank line or is a
    markdown heading (a good place for a chunk to start); `heading`: it is a markdown heading line (a
    chunk should not end with it)."""

    start: int
    end: int
    tokens: int
    paragraph: bool = False
    heading: bool = False


def is_heading(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]` is one ATX heading line ("## Install") at the start of a line."""
    gap_start = _gap_start(text, start)
    line_start = gap_start == 0 or "\n" in text[gap_start:start]
    return line_start and HEADING.match(text, start) is not None and "\n" not in text[start:end]


def opens_paragraph(text: str, start: int) -> bool:
    """Whether the piece at `start` opens the text, follows a blank line, or starts a line with "#"."""
    gap_start = _gap_start(text, start)
    if gap_start == 0:
        return True
    breaks = text.count("\n", gap_start, start)
    return breaks >= 2 or (breaks == 1 and text.startswith("#", start))


def pieces_of(
    text: str, spans: Sequence[tuple[int, int]], count: Counter, budget: int, inner_gaps: InnerGaps
) -> list[Piece]:
    """Pieces of `text` from its sentence `spans` ((start, end) pairs) under `budget` tokens.
    inner_gaps(sentence) -> (offsets (G,), probabilities (G,)) of the candidate gaps inside a sentence."""
    out: list[Piece] = []
    for start, end in spans:
        tokens = count(text[start:end])
        if tokens <= budget:
            out.append(Piece(start, end, tokens, opens_paragraph(text, start), is_heading(text, start, end)))
            continue
        for index, (a, b, parts_tokens) in enumerate(split_long(text[start:end], count, budget, inner_gaps)):
            paragraph = opens_paragraph(text, start + a) if index == 0 else False
            out.append(Piece(start + a, start + b, parts_tokens, paragraph))
    return out


def split_long(
    sentence: str, count: Counter, budget: int, inner_gaps: InnerGaps
) -> list[tuple[int, int, int]]:
    """`sentence` (over `budget`, no edge whitespace) as (start, end, tokens) parts that each fit."""
    preference = {0: 0.0}  # offset of a word start after whitespace -> preference of cutting there
    for offset in range(1, len(sentence)):
        if sentence[offset - 1].isspace() and not sentence[offset].isspace():
            line = "\n" in sentence[_gap_start(sentence, offset) : offset]
            preference[offset] = LINE_BONUS if line else 0.0
    offsets, probs = inner_gaps(sentence)
    for offset, prob in zip(np.asarray(offsets).tolist(), np.asarray(probs).tolist(), strict=True):
        if offset in preference and offset:
            preference[offset] += float(prob)
    starts = sorted(preference)
    words = []  # (start, end, tokens, preference of cutting before it)
    for a, b in zip(starts, [*starts[1:], len(sentence)], strict=True):
        for index, (x, y) in enumerate(
            _fitting_prefixes(sentence, a, _gap_start(sentence, b), count, budget)
        ):
            words.append((x, y, count(sentence[x:y]), preference[a] if index == 0 else INSIDE_WORD))
    return _fitted(sentence, words, count, budget)


def _fitted(sentence: str, words, count: Counter, budget: int) -> list[tuple[int, int, int]]:
    """`words` as parts whose real counts fit `budget`: planned on summed counts, and a part whose own
    text counts more (the whitespace between words, merges across them) planned again, tighter."""
    out = []
    for first, stop in _fewest_best(words, budget):
        a, b = words[first][0], words[stop - 1][1]
        tokens = count(sentence[a:b])
        if tokens <= budget or stop - first == 1:  # one word fits alone: `_fitting_prefixes` saw to it
            out.append((a, b, tokens))
            continue
        tighter = budget - (tokens - budget)
        while tighter > 0 and len(_fewest_best(words[first:stop], tighter)) == 1:
            tighter -= 1
        if tighter > 0:
            out.extend(_fitted(sentence, words[first:stop], count, tighter))
        else:
            out.extend((words[i][0], words[i][1], words[i][2]) for i in range(first, stop))
    return out


def _gap_start(text: str, offset: int) -> int:
    """The start of the whitespace run that ends at `offset`."""
    while offset > 0 and text[offset - 1].isspace():
        offset -= 1
    return offset


def _fitting_prefixes(sentence: str, a: int, b: int, count: Counter, budget: int) -> list[tuple[int, int]]:
    """[a, b) as consecutive ranges of at most `budget` tokens each: the longest prefix that fits, again."""
    out = []
    while a < b:
        if count(sentence[a:b]) <= budget:
            out.append((a, b))
            break
        low, high = a + 1, b - 1  # the longest end in (a, b) that fits, and at least one character
        while low < high:
            middle = (low + high + 1) // 2
            if count(sentence[a:middle]) <= budget:
                low = middle
            else:
                high = middle - 1
        out.append((a, low))
        a = low
    return out


def _fewest_best(words: list[tuple[int, int, int, float]], budget: int) -> list[tuple[int, int]]:
    """(first, stop) word ranges: `words` joined into the fewest parts whose summed counts fit `budget`,
    ties broken by the highest total preference of the gaps cut at (exact dynamic programming)."""
    n = len(words)
    total = np.concatenate([[0], np.cumsum([w[2] for w in words])])  # (n+1,)
    preference = np.array([w[3] for w in words], dtype=np.float64)  # (n,)
    preference[0] = 0.0
    parts = np.zeros(n + 1, dtype=np.int64)  # (n+1,) fewest parts of words[:i]
    score = np.zeros(n + 1)  # (n+1,) their best total preference
    back = np.zeros(n + 1, dtype=np.int64)
    for end in range(1, n + 1):
        first = min(int(np.searchsorted(total, total[end] - budget, side="left")), end - 1)
        candidates = parts[first:end] + 1  # (w,)
        fewest = candidates.min()
        scores = np.where(candidates == fewest, score[first:end] + preference[first:end], -np.inf)
        pick = int(np.argmax(scores))
        parts[end], score[end], back[end] = fewest, scores[pick], first + pick
    edges, end = [], n
    while end > 0:
        edges.append((int(back[end]), end))
        end = int(back[end])
    return list(reversed(edges))
