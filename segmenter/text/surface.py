"""Surface features of each token, read from the caller's original characters.

Uncased backbones (all-MiniLM-L6-v2, bert-base-uncased) lowercase text before the model sees it, so
capitalisation, a strong boundary cue in edited text, never reaches the heads. This module restores it:
for every token, a handful of 0/1 flags computed from `text[start:end]`. In lowercase, unpunctuated text
all case and punctuation flags are 0 and the probe falls back on the encoder's signals. The punctuation
flags read the SURFACE_* sets of `segmenter.text.charclasses`, which every shipped probe was trained on.
A probe that reads line breaks gets the line features of `segmenter.text.line_features` after the flags.
It knows nothing about models or boundaries.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from segmenter.text.charclasses import (
    SURFACE_CLOSING_PUNCT,
    SURFACE_COMMA_LIKE,
    SURFACE_ELLIPSIS_DOTS,
    SURFACE_SENTENCE_PUNCT,
)
from segmenter.text.line_features import LINE_FEATURES, TEXT_START, LineState, line_features

if TYPE_CHECKING:
    from segmenter.text.tokens import Tokens

FLAGS = (
    "first_upper",  # token starts with an upper-case letter
    "all_upper",  # token has two or more letters, all upper case
    "first_lower",  # token starts with a lower-case letter
    "first_digit",  # token starts with a digit
    "sentence_punct",  # token is one of SURFACE_SENTENCE_PUNCT (. ! ? …) or three SURFACE_ELLIPSIS_DOTS
    "closing_punct",  # token is one of SURFACE_CLOSING_PUNCT (a closing quote or bracket)
    "comma_like",  # token is one of SURFACE_COMMA_LIKE (, ; :)
)


def flag_count(lines: bool) -> int:
    """Surface features per token: FLAGS, then LINE_FEATURES when `lines`."""
    return len(FLAGS) + (len(LINE_FEATURES) if lines else 0)


def with_surface(tokens: Tokens, text: str, lines: bool = False, before: LineState = TEXT_START) -> Tokens:
    """`tokens` of `text` with their surface flags (`token_flags`) set: a Python pass over the tokens, so
    only for a probe that reads them."""
    return replace(tokens, surface=token_flags(text, tokens.offsets, lines, before))


def token_flags(
    text: str, offsets: np.ndarray, lines: bool = False, before: LineState = TEXT_START
) -> np.ndarray:
    """(N, flag_count(lines)) float32 flags of the tokens at `offsets` (N, 2) in `text`; with `lines`,
    their line features last (`before`: what the text before `text` left open, for a stream's pieces)."""
    flags = _case_punct_flags(text, offsets)
    if not lines:
        return flags
    return np.concatenate([flags, line_features(text, offsets, before)], axis=1)


def _case_punct_flags(text: str, offsets: np.ndarray) -> np.ndarray:
    """(N, len(FLAGS)) float32 FLAGS of the tokens at `offsets` (N, 2) in `text`.

    Vectorised over characters: each distinct character is classified once (str methods), then every
    token reads its first character and, through prefix sums, how many of its characters are letters
    and upper-case letters.
    """
    n = offsets.shape[0]
    flags = np.zeros((n, len(FLAGS)), dtype=np.float32)
    if n == 0 or not text:
        return flags
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    table, inverse = np.unique(codes, return_inverse=True)
    kinds = np.array([_kind(chr(c)) for c in table.tolist()], dtype=np.uint8)[inverse]  # (len(text),)
    letters = np.concatenate([[0], np.cumsum((kinds & _ALPHA) > 0)])
    uppers = np.concatenate([[0], np.cumsum((kinds & _ALPHA_UPPER) == _ALPHA_UPPER)])
    start, end = offsets[:, 0], offsets[:, 1]
    real = end > start
    first = np.where(real, kinds[np.minimum(start, len(codes) - 1)], 0)
    length = end - start
    n_letters = letters[end] - letters[start]
    single = np.where(length == 1, first, 0)
    ellipsis = (length == 3) & (first & _DOT > 0) & (kinds[np.minimum(start + 2, len(codes) - 1)] & _DOT > 0)
    ellipsis &= kinds[np.minimum(start + 1, len(codes) - 1)] & _DOT > 0
    flags[:, 0] = first & _UPPER > 0
    flags[:, 1] = (n_letters > 1) & (uppers[end] - uppers[start] == n_letters)
    flags[:, 2] = first & _LOWER > 0
    flags[:, 3] = first & _DIGIT > 0
    flags[:, 4] = (single & _SENTENCE_MARK > 0) | ellipsis
    flags[:, 5] = single & _CLOSING_MARK > 0
    flags[:, 6] = single & _COMMA_MARK > 0
    flags[~real] = 0.0
    return flags


# Bits of a character's kind.
_UPPER, _LOWER, _DIGIT, _ALPHA = 1, 2, 4, 8
_ALPHA_UPPER = _ALPHA | _UPPER
_SENTENCE_MARK, _CLOSING_MARK, _COMMA_MARK, _DOT = 16, 32, 64, 128


def _kind(char: str) -> int:
    return (
        (_UPPER if char.isupper() else 0)
        | (_LOWER if char.islower() else 0)
        | (_DIGIT if char.isdigit() else 0)
        | (_ALPHA if char.isalpha() else 0)
        | (_SENTENCE_MARK if char in SURFACE_SENTENCE_PUNCT else 0)
        | (_CLOSING_MARK if char in SURFACE_CLOSING_PUNCT else 0)
        | (_COMMA_MARK if char in SURFACE_COMMA_LIKE else 0)
        | (_DOT if char in SURFACE_ELLIPSIS_DOTS else 0)
    )
