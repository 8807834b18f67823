"""Line features of each token: does a line break precede it, and how long was the line it ends?

The tokenizer drops whitespace, so a probe never sees line breaks unless they are handed to it. They
matter both ways: in e-mails, lists, titles and one-paragraph-per-line files a line often ends a
sentence without any punctuation; in hard-wrapped text most line breaks fall inside sentences. The
length of the line before the break tells the two apart: wrapped lines fill the width, a line that
ends a paragraph or holds a title is short, and a paragraph written on one line is long.

For every token, two features (LINE_FEATURES):
- `line_start`: 1.0 if a line break lies in the whitespace between the previous token and this one;
- `previous_line`: then the length in characters of the line that break ends (the last line with text
  on it), divided by LINE_SCALE and capped at LINE_CAP; 0.0 otherwise.

A text streamed in pieces gets the same features as in one piece: `LineState` carries what a piece
leaves open (the unfinished line, a line break after its last token) into the next. This module knows
nothing about models or boundaries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from segmenter.text.charclasses import LINE_BREAKS

LINE_FEATURES = ("line_start", "previous_line")
_BREAK = re.compile(f"[{LINE_BREAKS}]")
LINE_SCALE = 100.0  # characters
LINE_CAP = 2.0  # lines of 200 characters and more look alike


@dataclass(frozen=True)
class LineState:
    """What the text before a piece leaves open.

    line_chars:   characters of the line still open at the piece's start (after the last line break).
    pending:      a line break lies after the last token so far (the next token starts a line).
    pending_line: the length of the line that break ended.
    """

    line_chars: int = 0
    pending: bool = False
    pending_line: int = 0


TEXT_START = LineState()  # nothing before the text


def line_features(text: str, offsets: np.ndarray, before: LineState = TEXT_START) -> np.ndarray:
    """(N, len(LINE_FEATURES)) float32 features of the tokens at `offsets` (N, 2) in `text`, which
    follows the text that left `before`."""
    n = offsets.shape[0]
    out = np.zeros((n, len(LINE_FEATURES)), dtype=np.float32)
    if n == 0:
        return out
    breaks = _breaks(text)  # (K,) positions of line-break characters
    previous_end = np.concatenate([[0], offsets[:-1, 1]])  # the gap before token i: previous_end .. start
    first = np.searchsorted(breaks, previous_end)  # index of the gap's first break, if it is in the gap
    position = np.append(breaks, len(text) + 1)[first]
    starts = position < np.maximum(offsets[:, 0], previous_end)
    line_begins = np.append(breaks, 0)[np.maximum(first - 1, 0)] + 1  # after the break before that one
    length = np.where(first > 0, position - line_begins, position + before.line_chars)
    out[:, 0] = starts
    out[:, 1] = np.where(starts, np.minimum(length / LINE_SCALE, LINE_CAP), 0.0)
    if before.pending:
        out[0] = (1.0, min(before.pending_line / LINE_SCALE, LINE_CAP))
    return out


def line_state_after(text: str, offsets: np.ndarray, before: LineState = TEXT_START) -> LineState:
    """The state `text` (with tokens at `offsets`) leaves for the text that follows it."""
    breaks = _breaks(text)
    line_chars = len(text) - int(breaks[-1]) - 1 if breaks.size else before.line_chars + len(text)
    if offsets.shape[0] == 0 and before.pending:
        return LineState(line_chars, True, before.pending_line)
    last_end = int(offsets[-1, 1]) if offsets.shape[0] else 0
    after = breaks[breaks >= last_end]
    if after.size == 0:
        return LineState(line_chars)
    earlier = breaks[breaks < after[0]]
    ended = int(after[0]) - (int(earlier[-1]) + 1 if earlier.size else -before.line_chars)
    return LineState(line_chars, True, ended)


def _breaks(text: str) -> np.ndarray:
    """(K,) positions of the line-break characters of `text`, ascending."""
    return np.fromiter((match.start() for match in _BREAK.finditer(text)), dtype=np.int64)
