"""Count line breaks: the ones `str.splitlines()` knows, a CRLF counting once.

The character sets live in `segmenter.text.charclasses` and stay importable from here: `LINE_BREAKS`
(`str.splitlines()`'s set: \\n \\r \\v \\f \\x1c \\x1d \\x1e \\x85 \\u2028 \\u2029), which the line features
read, the decoder's blank-line rule counts and the CLI's `lines` output folds, and
`TOKENIZER_DELETED_SPACE` (\\v \\f \\x1c-\\x1f \\x85), the whitespace that BERT's normaliser deletes, which
the encoder hands to the tokenizer as spaces. Nothing here reads a model.
"""

from __future__ import annotations

import re

from segmenter.text.charclasses import LINE_BREAKS, TOKENIZER_DELETED_SPACE

__all__ = ["LINE_BREAKS", "TOKENIZER_DELETED_SPACE", "count_line_breaks"]

_LINE_BREAK = re.compile(f"\r\n|[{LINE_BREAKS}]")


def count_line_breaks(text: str) -> int:
    """Line breaks in `text`, a CRLF counting once.

    >>> count_line_breaks("a\\r\\nb\\rc\\x85\\x85d")
    4
    """
    return len(_LINE_BREAK.findall(text))
