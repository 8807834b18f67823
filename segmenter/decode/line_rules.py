"""Lines that open a segment whatever the model says: bulleted lines, rule lines, lists after a colon.

A model trained on sentences reads a one-item-per-line list ("- milk\\n- eggs\\n- bread") as one
sentence, and a signature's "--" line as the end of the sign-off before it. The decoder
(`segmenter.decode.decoder`) asks `opens_segment` about each candidate boundary and makes it a boundary when:

- the candidate starts a line with a bullet (`LIST_BULLETS`) followed by a space or a tab, and the
  line before it or the line after it starts with the same bullet (a list of two items or more, so a
  dash that a hard wrap put at a line's start is not taken for a bullet);
- the candidate starts a rule line: a line holding only a run of symbols that stands alone ("--",
  "=====", see `stands_alone`);
- the candidate starts the line after a line that ends with an emoji (a message or post ends there),
  or after an e-mail's attribution line ("... wrote:");
- the candidate starts the line after a rule line, or any line of a signature: the lines after a
  signature separator ("--" or "-- " alone on a line) up to the next blank line, at most
  SIGNATURE_LINES of them;
- the candidate starts a labelled line: one that opens with a timestamp ("[00:01:23]", "09:15"), a
  chat nickname ("<jo_b>", "* jo_b waves", "=== jo_b is now known as jo") or a speaker label
  ("A:", "Speaker 2:", "PROF. SMITH:", "jenny:"), where a line within LABEL_REACH lines before or
  after it opens with a label of the same kind (a transcript, a chat log, e-mail header lines), so
  that one "Note: ..." line in prose is left to the model;
- the candidate starts an item of a list after a colon, or the line after such a list: a heading
  line that ends with ":" and then two or more item lines in a row ("Shopping list:\\neggs\\nmilk"),
  the heading and each item at most LIST_LINE_WORDS words and LIST_LINE_CHARS characters, no item
  ending in sentence punctuation (`LIST_ITEM_NOT_FINAL`) or with a bullet. The character limit keeps
  out the lines of a hard-wrapped paragraph, which may hold few (long) words but fill the line. A
  list is read up to READ_MAX characters and LIST_MAX_LINES lines on each side of a line.

This module only reads text; it knows nothing of boundaries or probabilities.
"""

from __future__ import annotations

import re
import unicodedata

from segmenter.text.breaks import count_line_breaks
from segmenter.text.charclasses import EMOJI_MODIFIERS, LIST_BULLETS, LIST_ITEM_NOT_FINAL, is_quiet_mark
from segmenter.text.line_headers import STAMP

READ_MAX = 512  # characters read on each side of a candidate: longer lines are not known in full
LIST_LINE_WORDS = 6  # most words in a list's heading or item line
LIST_LINE_CHARS = 40  # most characters (whitespace around it aside) in a list's heading or item line
LIST_MAX_LINES = 32  # lines read on each side of a line for a list after a colon (bounds the work per line)
SIGNATURE_LINES = 10  # lines after a signature separator that open segments
LABEL_REACH = 6  # lines read on each side of a labelled line for another label of its kind
SIGNATURE_SEPARATORS = ("--", "-- ")

# the end of an e-mail's attribution line ("On Mon, ... Sarah Lee <sarah@example.org> wrote:")
ATTRIBUTION_END = re.compile(
    r"\b(?:wrote|writes|ha scritto|a écrit|schrieb|escribió|schreef)\s?:\s*$", re.IGNORECASE
)


MARKERS_ALONE = re.compile(r"[ \t]*>[ \t>]*")  # a line of e-mail quote markers alone

_LABELS = {  # kind -> what opens a labelled line
    "timestamp": re.compile(STAMP + r"\s"),
    "nickname": re.compile(r"<[^<>\s]{1,32}>\s|\* \w[\w-]{0,31} |={3} \w"),
    "speaker": re.compile(
        r"(?:[A-Za-z][\w.'-]*|[A-Za-z]+ \d{1,3}|[A-Z][\w.'-]*(?: [A-Z0-9][\w.'-]*){1,2}|\[[^\[\]]{1,30}\]):\s"
    ),
}


def _after_attribution(content: str, text_start: bool) -> bool:
    """Whether the line at the candidate is the first that says something after an e-mail's
    attribution line ("... wrote:"), lines of quote markers alone (">") between them skipped."""
    lines = _complete_lines(content, text_start)
    while lines and MARKERS_ALONE.fullmatch(lines[-1]):
        lines.pop()
    return bool(lines) and ATTRIBUTION_END.search(lines[-1]) is not None


def stands_alone(piece: str) -> bool:
    """True when `piece`, which holds no letter or digit, can be a segment of its own: at least two
    characters besides whitespace, one of them neither a quote, a bracket nor sentence punctuation
    (a rule "=====", a signature's "--", ":-)"). Lone quotes, brackets and ellipses never stand alone.

    >>> stands_alone(" ===== "), stands_alone("-- "), stands_alone('." '), stands_alone(". . . ")
    (True, True, False, False)
    """
    marks = "".join(piece.split())
    return len(marks) >= 2 and any(not is_quiet_mark(char) for char in marks)


def opens_segment(before: str, after: str, text_start: bool) -> bool:
    """Whether the candidate boundary between `before` and `after` (the last and next READ_MAX
    characters around it; `text_start`: `before` begins at the text's first character) starts a
    bulleted line, a rule line, the line after a rule line, or a line of a list after a colon or the
    line after such a list (`in_colon_list`).

    >>> opens_segment("Shopping:\\n", "- milk\\n- eggs", False), opens_segment("Tom\\n", "--\\nTom B", False)
    (True, True)
    >>> opens_segment("Tom\\n--\\n", "Tom Becker", False), opens_segment("- eggs\\n", "- bread", True)
    (True, True)
    >>> opens_segment("and\\n", "- as expected - it", False), opens_segment("Tom\\n", "Becker", False)
    (False, False)
    """
    content = before.rstrip()
    if count_line_breaks(before[len(content) :]) == 0:
        return False  # not at a line's start
    previous = _last_line(content, text_start)
    lines = after.splitlines()
    this_line = lines[0] if lines and (len(lines) > 1 or len(after) < READ_MAX) else None
    if this_line is not None and MARKERS_ALONE.fullmatch(this_line):
        return False  # quote markers alone open no segment: the quoted text after them does
    neighbours = (previous, lines[1] if len(lines) > 1 else None)  # only their first characters matter
    if bulleted_line(after) and any(line is not None and line[:2] == after[:2] for line in neighbours):
        return True
    if rule_line(this_line) or rule_line(previous):
        return True
    if previous is not None and ends_with_emoji(previous):
        return True
    if _after_attribution(content, text_start):
        return True
    complete_before = _complete_lines(content, text_start)
    if in_signature(complete_before):
        return True
    kind = label_kind(after)
    if kind is not None and any(
        label_kind(line) == kind for line in complete_before[-LABEL_REACH:] + lines[1 : LABEL_REACH + 1]
    ):
        return True
    if ":" not in content:
        return False  # no heading before: not in a list after a colon (and a word list stays cheap)
    complete_after = lines if len(after) < READ_MAX else lines[:-1]  # the last line may be cut
    before = _complete_lines(content, text_start)[-LIST_MAX_LINES:]
    return in_colon_list(before, this_line, complete_after[1 : LIST_MAX_LINES + 1])


def ends_with_emoji(line: str) -> bool:
    """Whether `line` ends with an emoji (a symbol of Unicode category So, its modifiers aside): a chat
    message or a post ends there, as a hard-wrapped line never does.

    >>> ends_with_emoji("watched the finale 😭😭 "), ends_with_emoji("thumbs 👍🏽"), ends_with_emoji("no :)")
    (True, True, False)
    """
    content = line.rstrip().rstrip(EMOJI_MODIFIERS)
    return bool(content) and unicodedata.category(content[-1]) == "So"


def in_signature(before: list[str]) -> bool:
    """Whether the line after the whole lines `before` (nearest last) is a line of a signature: a
    separator line ("--") lies at most SIGNATURE_LINES lines back with no blank line after it.

    >>> in_signature(["Best,", "Tom", "--", "Tom Becker, Ph.D."]), in_signature(["--", "", "Hi"])
    (True, False)
    """
    for line in reversed(before[-SIGNATURE_LINES:]):
        if line in SIGNATURE_SEPARATORS:
            return True
        if not line.strip():
            return False
    return False


def label_kind(line: str) -> str | None:
    """The kind of label `line` opens with ("timestamp", "nickname", "speaker"), if any.

    >>> label_kind("[00:01:23] A: so"), label_kind("<jo_b> hi"), label_kind("Speaker 2: yes")
    ('timestamp', 'nickname', 'speaker')
    >>> label_kind("Note that: x") is None, label_kind("The result is: good") is None
    (True, True)
    """
    for kind, pattern in _LABELS.items():
        if pattern.match(line):
            return kind
    return None


def in_colon_list(before: list[str], this_line: str | None, after: list[str]) -> bool:
    """Whether a line (`this_line`; None: not known in full) is an item of a list after a colon or the
    first line after such a list, given the whole lines `before` it (nearest last) and `after` it.

    >>> in_colon_list(["Shopping list:"], "eggs", ["milk", "bread"])
    True
    >>> in_colon_list(["Shopping list:", "eggs", "milk", "bread"], "We also need coffee.", [])
    True
    >>> in_colon_list(["Shopping list:"], "eggs", ["We also need coffee."])  # one item is no list
    False
    >>> in_colon_list(["Dear Ann:"], "Thanks for the call.", [])
    False
    """
    items_above = 0
    for line in reversed(before):
        if list_heading(line):
            break
        if not list_item(line):
            return False
        items_above += 1
    else:
        return False  # no heading within reach
    if this_line is None or not list_item(this_line):
        return items_above >= 2  # the line after the list
    items_below = 0
    for line in after:
        if not list_item(line):
            break
        items_below += 1
    return items_above + 1 + items_below >= 2


def list_heading(line: str) -> bool:
    """Whether `line` can head a list: a short line that ends with a colon."""
    text = line.strip()
    return text.endswith(":") and _short(text)


def list_item(line: str) -> bool:
    """Whether `line` can be an item of a list after a colon: a short line, not empty, that ends in
    neither sentence punctuation nor a colon and does not open with a bullet."""
    text = line.strip()
    return (
        bool(text)
        and _short(text)
        and text[-1] not in LIST_ITEM_NOT_FINAL
        and not text.endswith(":")
        and not bulleted_line(text)
    )


def _short(text: str) -> bool:
    return len(text) <= LIST_LINE_CHARS and len(text.split()) <= LIST_LINE_WORDS


def bulleted_line(line: str) -> bool:
    """Whether `line` opens with a bullet and a space or a tab."""
    return len(line) >= 2 and line[0] in LIST_BULLETS and line[1] in " \t"


def rule_line(line: str | None) -> bool:
    """Whether `line` (None: not known in full) holds only a run of symbols that stands alone."""
    return line is not None and not any(map(str.isalnum, line)) and stands_alone(line)


def _complete_lines(content: str, text_start: bool) -> list[str]:
    """The lines of `content` (text before a line break) that start within it."""
    lines = content.splitlines()
    return lines if text_start else lines[1:]


def _last_line(content: str, text_start: bool) -> str | None:
    """The last line of `content` (text before a line break), if it starts within `content`."""
    lines = _complete_lines(content, text_start)
    return lines[-1] if lines else None
