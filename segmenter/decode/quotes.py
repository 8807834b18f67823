"""Which side of a boundary a quote or bracket belongs to, read from the whitespace around it.

A quote or bracket that follows whitespace and touches the next character opens what follows
(`He left. "Why?` : the quote starts the next sentence); one that touches the character before it and
is followed by whitespace closes what precedes it (`she said." Then` : the quote ends this one). The
decoder (`segmenter.decode.decoder`) uses this to move a boundary the model put on the wrong side of such a
character: from right after an opening one to right before it, and from right before a closing one
to the first character after the whitespace that follows it.

Straight quotes (`"`, `'`) count as both kinds; which one they are is read from the whitespace alone.
Markdown emphasis markers (a run of up to three `*` or `_`) are placed the same way, as one character:
`**Optional terms.** The` opens its segment at "The", `b. **Consent**` keeps "**" with "Consent".
Nothing here reads the model or the rest of the text: each function looks at a few characters.
"""

from __future__ import annotations

import re
import unicodedata

from segmenter.text.charclasses import EMOJI_MODIFIERS, QUOTE_CLOSERS, QUOTE_OPENERS

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


EMPHASIS = "*_"  # markdown emphasis markers, placed as quotes are (`emphasis_target`)
EMPHASIS_RUN = 3  # longest run of one marker read: "***"


def emphasis_target(text: str, at: int) -> int | None:
    """Where a boundary at `at` belongs when it touches a run of one emphasis marker: before an opening
    run (whitespace before it, a character after it), or past a closing run (a character before it,
    whitespace after it) and that whitespace; None when `at` touches no such run or is already there.

    >>> text = "b. **Consent.** The rest"
    >>> [emphasis_target(text, at) for at in (4, 5, 13, 14, 16)]
    [3, 3, 16, 16, None]
    >>> emphasis_target("snake_case_name", 6), emphasis_target("* item", 2)
    (None, None)
    """
    start = at
    while start > 0 and at - start < EMPHASIS_RUN and text[start - 1] in EMPHASIS:
        start -= 1
    end = at
    while end < len(text) and end - at < EMPHASIS_RUN and text[end] in EMPHASIS:
        end += 1
    if start == end or len(set(text[start:end])) != 1:
        return None
    space_before = start == 0 or text[start - 1].isspace()
    space_after = end == len(text) or text[end].isspace()
    if space_before and not space_after:
        return start if start != at else None
    if space_after and not space_before:
        stop = min(len(text), end + READ_MAX)
        for position in range(end, stop):
            if not text[position].isspace():
                return position if position != at else None
    return None


_LEAD_IN = re.compile(r":[*_]{1,3}[ \t]+$")  # "**Note:** |The": a bold or italic lead-in ending with a colon
# "(#7441)", "(GH-12)", "(v2.1)" closing its line (not "(Again.)", a sentence of its own)
_LINE_END_ASIDE = re.compile(r"\(#?[\w-]{1,20}(?:\.[\w-]{1,20}){0,3}\)[ \t]*(?:\r\n|[\n\r]|$)")
ASIDE_READ = 512  # characters read back for the start of an aside's line
LEAD_IN_READ = 8  # characters read before a candidate for a lead-in's end


def after_lead_in(text: str, at: int) -> bool:
    """Whether `at` follows an emphasised lead-in that ends with a colon ("**Day 2:** You may"):
    the lead-in and its sentence are one segment.

    >>> text = "2. **Day 2:** You may see bubbles. **Done.** Then"
    >>> after_lead_in(text, text.index("You")), after_lead_in(text, text.index("Then"))
    (True, False)
    """
    return _LEAD_IN.search(text, max(at - LEAD_IN_READ, 0), at) is not None


def line_end_aside(text: str, at: int) -> bool:
    """Whether `at` opens a one-word bracketed aside that ends its line after other text ("in their code.
    (#7441)\\n"): it goes with the sentence before it.

    >>> text = "Fixed typing in their code. (#7441)\\n(Optional) Install it."
    >>> line_end_aside(text, text.index("(#")), line_end_aside(text, text.index("(Opt"))
    (True, False)
    """
    if text[at : at + 1] != "(" or _LINE_END_ASIDE.match(text, at) is None:
        return False
    floor = max(at - ASIDE_READ, 0)
    line_start = max(text.rfind("\n", floor, at), text.rfind("\r", floor, at), floor - 1) + 1
    return text[line_start:at].strip() != ""  # an aside on a line of its own stands alone


def after_emoji(text: str, at: int) -> int | None:
    """If a boundary at `at` falls right before a run of emoji (symbols of category So, with their
    modifiers) that follows a word on the same line and is followed by more text there, the offset of
    that text: an emoji closes the sentence before it ("the finale 😭😭 | cannot believe it").

    >>> text = "omg the finale 😭😭 cannot believe it"
    >>> after_emoji(text, text.index("😭")) == text.index("cannot"), after_emoji("🎉 Big news", 0)
    (True, None)
    """
    if at == 0 or not _is_emoji(text[at]) or text[at - 1] not in " \t":
        return None
    if not text[max(at - READ_MAX, 0) : at].rstrip(" \t")[-1:].isalnum():
        return None  # the emoji opens its line or follows punctuation: it may open what follows
    end = at
    while end < len(text) and (_is_emoji(text[end]) or text[end] in EMOJI_MODIFIERS):
        end += 1
    stop = min(len(text), end + READ_MAX)
    for position in range(end, stop):
        if text[position] in "\n\r":
            return None
        if not text[position].isspace():
            return position if position > end else None
    return None


def _is_emoji(char: str) -> bool:
    return unicodedata.category(char) == "So"
