"""Surface features of each token, read from the caller's original characters.

Uncased backbones (all-MiniLM-L6-v2, bert-base-uncased) lowercase text before the model sees it, so
capitalisation, a strong boundary cue in edited text, never reaches the heads. This module restores it:
for every token, a handful of 0/1 flags computed from `text[start:end]`. In lowercase, unpunctuated text
all case and punctuation flags are 0 and the probe falls back on the encoder's signals.
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
_SENTENCE = frozenset(".!?\u2026")
_CLOSING = frozenset("\"')]}\u201d\u2019\u00bb")
_COMMA = frozenset(",;:")


def token_flags(text: str, offsets: np.ndarray) -> np.ndarray:
    """(N, len(FLAGS)) float32 flags of the tokens at `offsets` (N, 2) in `text`."""
    flags = np.zeros((offsets.shape[0], len(FLAGS)), dtype=np.float32)
    for i, (start, end) in enumerate(offsets.tolist()):
        piece = text[start:end]
        if not piece:
            continue
        first = piece[0]
        letters = [c for c in piece if c.isalpha()]
        flags[i] = (
            first.isupper(),
            len(letters) > 1 and all(c.isupper() for c in letters),
            first.islower(),
            first.isdigit(),
            piece in _SENTENCE or piece == "...",
            piece in _CLOSING,
            piece in _COMMA,
        )
    return flags
