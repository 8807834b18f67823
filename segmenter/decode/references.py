"""Entries of a reference list: one segment each, whatever the periods inside them suggest.

A model trained on prose reads "Geerts WH, Code KI, Jay RM: A prospective study of venous
thromboembolism. N Engl J Med 1994, 331:1601-6." as several sentences: it cuts after each author's
initials, after the title and before the journal. An editor, and the annotation guideline
(docs/annotation.md), keep a reference as one segment. The decoder (`segmenter.decode.decoder`)
asks two things of every candidate, reading READ_MAX characters on each side:

- `opens_entry`: the candidate starts a reference entry, which then opens a segment;
- `inside_entry`: the candidate falls inside one, so no boundary is made there.

An entry opens a line with an optional number ("12.", "[3]") and an author: a surname and initials
in the Vancouver style ("Geerts WH,", "Chen E:", "Franco L, et al") or in the APA and Harvard
styles ("Davies, D. J.", "Kaur, R., et al."), after a blank line, a "References" heading or a line
that ends an entry (with a period, a bracket or a digit). Both questions are answered only inside a
reference list: at least ENTRIES_NEAR entry openings within the characters read, and a year in the
entry. An entry runs to the next entry, or to the end of a line that ends with a period before a line
that starts with a capital letter, a digit or a bracket, and at most ENTRY_MAX characters.

This module only reads text; it knows nothing of probabilities.
"""

from __future__ import annotations

import re

READ_MAX = 512  # characters read on each side of a candidate
ENTRY_MAX = 600  # the longest entry read: a candidate further from an entry's start is left to the model
ENTRIES_NEAR = 2  # entry openings within the characters read that make a reference list

_SURNAME = r"[A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?"
_OPENER = re.compile(
    r"[ \t]*(?:\[\d{1,3}\][ \t]*|\d{1,3}\.[ \t]+)?"
    rf"{_SURNAME}(?: [A-Z]{{1,3}}[,:]| [A-Z]{{1,3}},? et al\b|, (?:[A-Z]\.[ -]?){{1,3}})"
)
# the heading a reference list opens under: its first entry follows it
_HEADING = re.compile(
    r"\W*(?:\d+\.?\s*)?(?:references|bibliography|works cited|literature(?: cited)?|sources|"
    r"referencias|literatur|bibliographie|riferimenti bibliografici)\W*",
    re.IGNORECASE,
)
_YEAR = re.compile(r"(?<!\d)(?:1[5-9]|20)\d\d[a-z]?(?!\d)")
_ENDS_ENTRY = re.compile(r"[.)\]\d]\s*$")  # the end of a line that may close an entry
_LINE_START = re.compile(r"(?:\r\n|[\n\r])")
_LINE_OPENER = re.compile(r"[\n\r]" + _OPENER.pattern)  # a line break and an opener after it


def _line_starts(window: str) -> list[int]:
    """Offsets in `window` just after each line break."""
    return [match.end() for match in _LINE_START.finditer(window)]


def _openings(window: str, text_start: bool) -> list[int]:
    """Offsets of the entry openings in `window` (the first non-space character of their line): a
    line that opens with an author after a blank line or a line that may end an entry."""
    found = []
    first = _OPENER.match(window) if text_start else None  # the window may begin inside a line
    later = _LINE_OPENER.finditer(window)  # one scan from line break to line break: few openers
    for opener, start in [(first, 0)] * (first is not None) + [(m, m.start() + 1) for m in later]:
        previous = window[:start].rstrip(" \t").splitlines()[-1:] if start else []
        numbered = window[start : opener.end()].lstrip()[:1] in "[0123456789"
        if (
            start
            and not numbered
            and previous
            and previous[0].strip()
            and not _ENDS_ENTRY.search(previous[0])
            and not _HEADING.fullmatch(previous[0])
        ):
            continue  # a wrapped line of an entry that happens to open with a name
        found.append(start + len(window[start:]) - len(window[start:].lstrip()))
    return found


def _entry_end(window: str, start: int, openings: list[int]) -> int:
    """Where the entry opening at `start` ends in `window` (see the module docstring)."""
    end = min([at for at in openings if at > start] + [start + ENTRY_MAX, len(window)])
    for line_start in _line_starts(window[start:end]):
        at = start + line_start
        line_end = window[:at].rstrip()
        if (
            line_end.endswith(".")
            and window[at : at + 1].strip()[:1] in "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789["
        ):
            return len(line_end)
    return end


def _read(text: str, at: int) -> tuple[str, int, bool]:
    """The window around `at`, the offset of `at` in it, and whether it begins at the text's start."""
    start = max(at - READ_MAX, 0)
    return text[start : min(at + READ_MAX, len(text))], at - start, start == 0


def _containing(window: str, at: int, text_start: bool) -> tuple[int, int, list[int]] | None:
    """(start, end, openings) of the entry around offset `at` of `window`, in a reference list; None
    when `at` lies in none."""
    openings = _openings(window, text_start)
    if len(openings) < ENTRIES_NEAR:
        return None
    before = [start for start in openings if start <= at]
    if not before:
        return None
    start = before[-1]
    end = _entry_end(window, start, openings)
    if not (start <= at < end) or _YEAR.search(window, start, end) is None:
        return None
    return start, end, openings


def opens_entry(text: str, at: int) -> bool:
    """Whether a boundary at `at` starts an entry of a reference list.

    >>> refs = "References\\n1. Geerts WH, Code KI: A study. N Engl J Med 1994, 331:1601-6.\\n"
    >>> refs += "2. Chen E, Szalai JP: Another study. Am J Surg 1989, 158:515-9.\\n"
    >>> opens_entry(refs, refs.index("2. Chen")), opens_entry(refs, refs.index("Another"))
    (True, False)
    """
    window, offset, text_start = _read(text, at)
    found = _containing(window, offset, text_start)
    return found is not None and found[0] == offset


def inside_entry(text: str, at: int) -> bool:
    """Whether a boundary at `at` falls strictly inside an entry of a reference list.

    >>> refs = "Geerts WH, Code KI: A study of\\nvenous thrombosis. N Engl J Med 1994, 331:1601-6.\\n"
    >>> refs += "Davies, D. J. (1981). The Welsh in America. Cardiff: University of Wales Press.\\n"
    >>> [inside_entry(refs, refs.index(s)) for s in ("Code", "N Engl", "Davies", "The Welsh")]
    [True, True, False, True]
    >>> inside_entry("It rained. Smith JD, the mayor, said so in 1994. Then", 11)
    False
    """
    window, offset, text_start = _read(text, at)
    found = _containing(window, offset, text_start)
    return found is not None and found[0] < offset
