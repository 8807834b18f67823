"""The header of a chat or transcript line: what comes before what is said.

A channel and a date, a timestamp ("[00:01:23]", "09:15"), a nickname ("<jo_b>", "* jo_b"), a speaker
label ("A:", "PM:", "speaker 1:", "Grad A:", "Project Manager:", "DR. SMITH:"; not one capitalised
word, which may be a sentence's lead-in: "Questions: If you ...") and an addressee ("ogra: ",
"jenny, "). Two readers: the decoder never cuts inside a header or right after it
(`segmenter.decode.units`), and the text conditions ignore headers, so that the capitals of "A:" or
"<Bob>" do not make an unpunctuated transcript look punctuated (`segmenter.text.conditions`).

This module only reads text.
"""

from __future__ import annotations

import re

_TIMESTAMP = r"[\[(]?\d{1,2}:\d\d(?::\d\d)?(?:[.,]\d{1,3})?[\])]?"
_LABEL = (
    r"(?:<[^<>\s]{1,32}>|\*\s?[\w-]{1,32}"
    r"|(?:[A-Z]{1,2}\d?|[A-Za-z]+ \d{1,3}|[A-Z][A-Za-z]+(?: [A-Z][A-Za-z]*\d?){1,2}"
    r"|[A-Z][A-Z.'-]+(?: [A-Z][A-Z.'-]+){0,2}"
    r"|\[[^\[\]\n]{1,30}\]):)"
)
# from a line's start; a match ends where what is said begins
HEADER = (
    rf"[ \t]*(?:(?:[\w#.-]+ )?(?:\d{{4}}-\d\d-\d\d[ T])?{_TIMESTAMP}[ \t]+(?:{_LABEL}[ \t]+)?|{_LABEL}[ \t]+)"
    r"(?:[\w-]{1,32}[:,][ \t]+)?"
)
_HEADERS = re.compile(f"^{HEADER}", re.MULTILINE)


def without_headers(text: str) -> str:
    """`text` with the header of every line removed.

    >>> without_headers("A: so um we shipped it\\nspeaker 2: yeah\\n[09:15] <Jo> Mira: hi")
    'so um we shipped it\\nyeah\\nhi'
    """
    return _HEADERS.sub("", text)
