"""The characters that break a line, and the whitespace the tokenizer would delete, in one place.

`LINE_BREAKS` is `str.splitlines()`'s set (\\n \\r \\v \\f \\x1c \\x1d \\x1e \\x85 \\u2028 \\u2029; \\r\\n is
one break): the line features read it, the decoder's blank-line rule counts it, the CLI's `lines`
output folds it. `TOKENIZER_DELETED_SPACE` is the whitespace that BERT's normaliser deletes as control
characters (\\v \\f \\x1c-\\x1f \\x85) instead of splitting words at, which would glue "bread\\x85\\x85then"
into one word; the encoder hands each to the tokenizer as a space (one character for one, so offsets
stay exact and the caller's text is never changed). Nothing here reads a model.
"""

from __future__ import annotations

import re
import unicodedata

LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_BREAK = re.compile(f"\r\n|[{LINE_BREAKS}]")
# every whitespace character lies below U+3001
TOKENIZER_DELETED_SPACE = "".join(
    c
    for c in map(chr, range(0x3001))
    if c.isspace() and c not in "\t\n\r" and unicodedata.category(c) == "Cc"
)


def count_line_breaks(text: str) -> int:
    """Line breaks in `text`, a CRLF counting once.

    >>> count_line_breaks("a\\r\\nb\\rc\\x85\\x85d")
    4
    """
    return len(_LINE_BREAK.findall(text))
