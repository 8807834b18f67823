"""Keep an e-mail address or a URL with the colon or comma that introduces it.

`introduced_address(text, at)` says whether a boundary at `at` would cut an address off from the colon
or comma that introduces it on the same line ("More details: | http://..."). A boundary inside an
address is ruled out by `segmenter.decode.units`.

This module only reads text; it knows nothing of models or probabilities.
"""

from __future__ import annotations

import re

from segmenter.text.charclasses import LINE_BREAKS

RUN_MAX = 64  # characters read on each side of `at`: a longer run is not read beyond them

_CLOSING = r"[^\s.,;:!?'\"\u2019\u201d)\]}>]"  # the last character of an address
_ADDRESS = re.compile(
    r"[\w.+%-]+@[\w-]+(?:\.[\w-]+)+"  # e-mail
    rf"|(?:[A-Za-z][A-Za-z0-9+.-]*://|www\.)\S*{_CLOSING}"  # URL
)


INTRODUCERS = frozenset(":,")  # the characters that introduce an address within a sentence


def introduced_address(text: str, at: int) -> bool:
    r"""Whether a boundary at offset `at` would separate an address that starts at `at` from the colon
    or comma right before it (whitespace between them, no line break in it).

    >>> text = "More details: http://example.com/news or mail: jo@example.org"
    >>> introduced_address(text, text.index("http")), introduced_address(text, text.index("jo@"))
    (True, True)
    >>> introduced_address("The end.\nhttp://example.com", 9), introduced_address("Links:\nwww.a.org", 7)
    (False, False)
    """
    if at <= 0 or at >= len(text) or not text[at - 1].isspace():
        return False
    before = at - 1
    while before >= 0 and text[before].isspace():
        if text[before] in LINE_BREAKS:
            return False
        before -= 1
    if before < 0 or text[before] not in INTRODUCERS:
        return False
    return _ADDRESS.match(text, at, _run_end(text, at, at)) is not None


def _run_end(text: str, at: int, end: int) -> int:
    """Where the run of characters without whitespace that goes on at `end` stops, read no further
    than RUN_MAX characters after `at`."""
    ceiling = min(at + RUN_MAX, len(text))
    while end < ceiling and not text[end].isspace():
        end += 1
    return end
