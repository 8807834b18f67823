"""Recognise e-mail addresses and URLs, so that the decoder never cuts one in two.

A model reads "Jane.Doe@example.com" as the words "Jane", ".", "Doe" and may propose a sentence boundary
after the period. `splits_address(text, at)` says whether a boundary at offset `at` would fall inside an
address: inside a run of characters without whitespace that holds an e-mail address ("name@host.tld")
or a URL ("scheme://...", "www...."). Punctuation that ends the run ("... at www.example.com.") is not
part of the address.

This module only reads text; it knows nothing of models or probabilities.
"""

from __future__ import annotations

import re

RUN_MAX = 64  # characters read on each side of `at`: a longer run is not read beyond them

_CLOSING = r"[^\s.,;:!?'\"\u2019\u201d)\]}>]"  # the last character of an address
_ADDRESS = re.compile(
    r"[\w.+%-]+@[\w-]+(?:\.[\w-]+)+"  # e-mail
    rf"|(?:[A-Za-z][A-Za-z0-9+.-]*://|www\.)\S*{_CLOSING}"  # URL
)


def splits_address(text: str, at: int) -> bool:
    """Whether a boundary at offset `at` (the first character after it) falls inside an e-mail address
    or a URL: both characters around `at` are not whitespace and `at` lies strictly inside an address.

    >>> text = "Mail Jane.Doe@example.com. See www.example.com/a.b now."
    >>> splits_address(text, text.index("Doe")), splits_address(text, text.index(". See") + 2)
    (True, False)
    >>> splits_address(text, text.index("b now")), splits_address("It ends.Then more", 8)
    (True, False)
    """
    if at <= 0 or at >= len(text) or text[at - 1].isspace() or text[at].isspace():
        return False
    start = at - 1
    floor = max(at - RUN_MAX, 0)
    while start > floor and not text[start - 1].isspace():
        start -= 1
    end = at + 1
    ceiling = min(at + RUN_MAX, len(text))
    while end < ceiling and not text[end].isspace():
        end += 1
    run = text[start:end]
    return any(m.start() < at - start < m.end() for m in _ADDRESS.finditer(run))
