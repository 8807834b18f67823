"""Which side of a boundary a quote or bracket belongs to, read from the whitespace around it.

A quote or bracket that follows whitespace and touches the next character opens what follows
(`He left. "Why?` : the quote starts the next sentence); one that touches the character before it and
is followed by whitespace closes what precedes it (`she said." Then` : the quote ends this one). The
decoder (`segmenter.decode.decoder`) uses this to move a boundary the model put on the wrong side of such a
character: from right after an opening one to right before it, and from right before a closing one
to the first character after the whitespace that follows it.

Straight quotes (`"`, `'`) count as both kinds; which one they are is read from the whitespace alone.
Nothing here reads the model or the rest of the text: each function looks at a few characters.
"""

from __future__ import annotations

from segmenter.text.charclasses import QUOTE_CLOSERS, QUOTE_OPENERS

QUOTES_AND_BRACKETS = frozenset(QUOTE_OPENERS + QUOTE_CLOSERS)  # the characters either function reads first
READ_MAX = 32  # longest whitespace run after a closing character that is read through


def opens_next(text: str, at: int) -> bool:
    """Whether text[at] is an opening quote or bracket: whitespace (or nothing) before it, and a
    character that is not whitespace right after it."""
    return (
        0 <= at < len(text) - 1
        and text[at] in QUOTE_OPENERS
        and (at == 0 or text[at - 1].isspace())
        and not text[at + 1].isspace()
    )


def after_closing(text: str, at: int) -> int | None:
    """If text[at] is a closing quote or bracket (a character that is not whitespace before it, and
    whitespace after it), the offset of the first character after that whitespace; else None (also
    when the whitespace runs on for READ_MAX characters or to the end of `text`)."""
    if not (0 < at < len(text) - 1 and text[at] in QUOTE_CLOSERS and not text[at - 1].isspace()):
        return None
    end = min(len(text), at + 1 + READ_MAX)
    for position in range(at + 1, end):
        if not text[position].isspace():
            return position if position > at + 1 else None
    return None
