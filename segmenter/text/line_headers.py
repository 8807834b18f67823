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

_DATE = r"(?:\d{4}-\d\d-\d\d[ T]|\d{1,2}[/.]\d{1,2}[/.]\d{2,4},?[ \t]+)"  # 2009-10-20, 12/03/24,
_WEEKDAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]{0,6}\.?,?[ \t]+"  # "[Mon 08:47]"
_TIMESTAMP = (
    rf"[\[(]?(?:{_WEEKDAY})?\d{{1,2}}:\d\d(?::\d\d)?(?:[.,]\d{{1,3}})?(?:[ \t]?[AaPp]\.?[Mm]\.?)?[\])]?"
)
# a line's channel, date and time, as chat logs and exports open lines ("ubuntu 2009-10-20 [14:31]",
# "12/03/24, 21:14", "[Mon 08:47]", "09:15 pm")
STAMP = rf"(?:[\w#.-]+ )?{_DATE}?{_TIMESTAMP}"
_NICKNAME = r"[^\s:<>]{1,32}:"  # after a stamp, any name before a colon: "~lemon~:", "dani.k:", "Nan:"
_LABEL = (
    r"(?:<[^<>\s]{1,32}>|\*\s?[\w-]{1,32}"
    r"|(?:[A-Z]{1,2}\d?|[A-Za-z]+ \d{1,3}|[A-Z][A-Za-z]+(?: [A-Z][A-Za-z]*\d?){1,2}"
    r"|[A-Z][A-Z.'-]+(?: [A-Z][A-Z.'-]+){0,2}"
    r"|\[[^\[\]\n]{1,30}\]):)"
)
# from a line's start; a match ends where what is said begins
HEADER = (
    rf"[ \t]*(?:{STAMP}[ \t]+(?:-[ \t]+)?(?:(?:{_LABEL}|{_NICKNAME})[ \t]+)?|{_LABEL}[ \t]+)"
    r"(?:[\w-]{1,32}[:,][ \t]+)?"
)
_HEADERS = re.compile(f"^{HEADER}", re.MULTILINE)
_LINE_HEADER = re.compile(HEADER)


def header_share(text: str) -> float:
    """The share of `text`'s non-blank lines that open with a header (0.0 for a text without any).

    >>> header_share("A: so um\\nB: yeah\\n\\nand then we left")
    0.6666666666666666
    """
    lines = [line for line in text.split("\n") if line.strip()]
    return sum(_LINE_HEADER.match(line) is not None for line in lines) / len(lines) if lines else 0.0


def without_headers(text: str) -> str:
    """`text` with the header of every line removed.

    >>> without_headers("A: so um we shipped it\\nspeaker 2: yeah\\n[09:15] <Jo> Mira: hi")
    'so um we shipped it\\nyeah\\nhi'
    >>> without_headers("12/03/24, 21:14 - Nan: Has anyone seen it\\n[Mon 08:47] ~lemon~: hi")
    'Has anyone seen it\\nhi'
    """
    return _HEADERS.sub("", text)
