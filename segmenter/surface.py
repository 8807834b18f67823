"""Surface features of each token, read from the caller's original characters.

Uncased backbones (all-MiniLM-L6-v2, bert-base-uncased) lowercase text before the model sees it, so
capitalisation, a strong boundary cue in edited text, never reaches the heads. This module restores it:
for every token, a handful of 0/1 flags computed from `text[start:end]`. In lowercase, unpunctuated text
all case and punctuation flags are 0 and the probe falls back on the encoder's signals.
The tokenizer also drops whitespace, so a probe that asks for it gets one more flag (LINE_FLAG): a line
break lies between this token and the previous one (in e-mails, lists and titles a line often ends a
sentence without punctuation; in hard-wrapped text it does not, which a probe learns from context).
It knows nothing about models or boundaries.
"""

from __future__ import annotations

import numpy as np

FLAGS = (
    "first_upper",  # token starts with an upper-case letter
    "all_upper",  # token has two or more letters, all upper case
    "first_lower",  # token starts with a lower-case letter
    "first_digit",  # token starts with a digit
    "sentence_punct",  # token is . ! ? or an ellipsis
    "closing_punct",  # token is a closing quote or bracket
    "comma_like",  # token is , ; or :
)
LINE_FLAG = "line_start"  # a line break lies in the whitespace before the token (or before the text's first)
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")  # str.splitlines()'s line boundaries
_SENTENCE = frozenset(".!?\u2026")
_CLOSING = frozenset("\"')]}\u201d\u2019\u00bb")
_COMMA = frozenset(",;:")


def flag_count(lines: bool) -> int:
    """Flags per token: FLAGS, and LINE_FLAG last when `lines`."""
    return len(FLAGS) + int(lines)


def token_flags(text: str, offsets: np.ndarray, lines: bool = False) -> np.ndarray:
    """(N, flag_count(lines)) float32 flags of the tokens at `offsets` (N, 2) in `text`.

    Vectorised over characters: each distinct character is classified once (str methods), then every
    token reads its first character and, through prefix sums, how many of its characters are letters
    and upper-case letters.
    """
    n = offsets.shape[0]
    flags = np.zeros((n, flag_count(lines)), dtype=np.float32)
    if n == 0 or not text:
        return flags
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    table, inverse = np.unique(codes, return_inverse=True)
    kinds = np.array([_kind(chr(c)) for c in table.tolist()], dtype=np.uint16)[inverse]  # (len(text),)
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
    if lines:
        breaks = np.concatenate([[0], np.cumsum((kinds & _LINE_BREAK) > 0)])
        previous_end = np.concatenate([[0], end[:-1]])  # the text's first token looks back to its start
        flags[:, -1] = breaks[np.maximum(start, previous_end)] > breaks[previous_end]
    return flags


# Bits of a character's kind.
_UPPER, _LOWER, _DIGIT, _ALPHA = 1, 2, 4, 8
_ALPHA_UPPER = _ALPHA | _UPPER
_SENTENCE_MARK, _CLOSING_MARK, _COMMA_MARK, _DOT, _LINE_BREAK = 16, 32, 64, 128, 256


def _kind(char: str) -> int:
    return (
        (_UPPER if char.isupper() else 0)
        | (_LOWER if char.islower() else 0)
        | (_DIGIT if char.isdigit() else 0)
        | (_ALPHA if char.isalpha() else 0)
        | (_SENTENCE_MARK if char in _SENTENCE else 0)
        | (_CLOSING_MARK if char in _CLOSING else 0)
        | (_COMMA_MARK if char in _COMMA else 0)
        | (_DOT if char == "." else 0)
        | (_LINE_BREAK if char in LINE_BREAKS else 0)
    )
