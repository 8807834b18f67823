"""Recognise the markers of enumerated lists ("1.", "2)", "(b)", "• 9.") in running text.

A list item's marker belongs to the item it labels, but a marker that ends in a period looks like the
end of a sentence, so a model readily proposes a boundary right after it ("... the first item 2." |
"The second item"). The decoder (`segmenter.decode.decoder`) uses this module to move such a boundary to the
marker's start. A marker counts only inside an enumeration: a marker of the same style whose label is
one lower comes before it, or one with the next label follows within `LOOKAHEAD` characters. A plain
marker ("2.", "b.", no bracket or bullet) counts only in an enumeration whose first marker opens the
text or a line or follows a colon, so "Read chapter 1. It explains the idea. Then read chapter 2."
keeps its boundaries. Labels are one or two digits or a single letter.

This module only reads text; it knows nothing of boundaries or probabilities.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from segmenter.text.charclasses import LIST_BULLETS, MARKER_LINE_BREAKS

LOOKAHEAD = 1000  # characters after a marker searched for the next item's marker
MARKER_MAX = 32  # characters a marker (with the whitespace after it) can span, and then some
REACH = LOOKAHEAD + MARKER_MAX  # text after a marker's start that deciding about it may read
LOOKBEHIND = 64  # text before a marker read to see whether it opens a line or follows a colon

_MARKER = re.compile(
    rf"(?P<bullet>[{re.escape(LIST_BULLETS)}][ \t]{{0,3}})?"
    r"(?:(?P<open>\()(?P<plabel>\d{1,2}|[A-Za-z])\)|(?P<label>\d{1,2}|[A-Za-z])(?P<delim>\.\)|\)|\.))"
    r"\s{1,8}(?=\S)"
)

_MARKER_START = re.compile(rf"(?<!\S)(?={_MARKER.pattern})")


@dataclass(frozen=True)
class Marker:
    """A list marker: its style (bullet, brackets, kind of label, delimiter), the label's position in
    its sequence, and `length`: characters from the marker's start to the first character after it
    and the whitespace that follows it."""

    style: tuple[str, str, str, str]
    value: int
    length: int

    def is_followed_by(self, other: Marker) -> bool:
        """Whether `other` is the next item's marker of the same list."""
        return other.style == self.style and other.value == self.value + 1

    @property
    def is_plain(self) -> bool:
        """A label and a period, nothing else: easily a number or letter ending a sentence."""
        bullet, bracket, _, delimiter = self.style
        return not bullet and not bracket and delimiter == "."


def opens_line(before: str) -> bool:
    """Whether a marker preceded by the text `before` (its last LOOKBEHIND characters will do) opens a
    line or follows a colon.

    >>> opens_line("Agenda\\n"), opens_line("Bring: "), opens_line("Read chapter ")
    (True, True, False)
    """
    stripped = before.rstrip()
    run = before[len(stripped) :]
    return any(char in MARKER_LINE_BREAKS for char in run) or stripped.endswith(":")


def marker_at(text: str, pos: int) -> Marker | None:
    """The list marker starting at `pos`, if one does: at the text's start or after whitespace.

    >>> marker_at("see 2.) The second", 4).length
    4
    >>> marker_at("ab. c", 1) is None  # inside a word
    True
    """
    if pos > 0 and not text[pos - 1].isspace():
        return None
    match = _MARKER.match(text, pos)
    if match is None:
        return None
    label = match["label"] or match["plabel"]
    kind = "digit" if label.isdigit() else ("lower" if label.islower() else "upper")
    value = int(label) if label.isdigit() else ord(label.lower()) - ord("a") + 1
    bullet = (match["bullet"] or "").strip()
    style = (bullet, match["open"] or "", kind, match["delim"] or ")")
    return Marker(style=style, value=value, length=match.end() - pos)


def marker_starts(text: str, start: int, stop: int) -> Iterator[int]:
    """Every position in [start, stop) where `marker_at` finds a marker, by one scan of the text.

    >>> list(marker_starts("a 1. b 2) c x3. d", 0, 17))
    [2, 7]
    """
    for found in _MARKER_START.finditer(text, start, min(stop + MARKER_MAX, len(text))):
        if found.start() >= stop:
            return
        yield found.start()


def next_item_follows(text: str, pos: int, marker: Marker) -> bool:
    """Whether the marker of the next item follows the `marker` at `pos` within LOOKAHEAD characters."""
    start = pos + marker.length
    ahead = text[: start + LOOKAHEAD]  # the markers read end here too
    for found in _MARKER_START.finditer(ahead, start):  # every start, overlapping ones too
        later = marker_at(ahead, found.start())
        if later is not None and marker.is_followed_by(later):
            return True
    return False
