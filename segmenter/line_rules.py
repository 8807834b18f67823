"""Lines that open a segment whatever the model says: bulleted lines and rule lines.

A model trained on sentences reads a one-item-per-line list ("- milk\\n- eggs\\n- bread") as one
sentence, and a signature's "--" line as the end of the sign-off before it. The decoder
(`segmenter.decode`) asks `opens_segment` about each candidate boundary and makes it a boundary when:

- the candidate starts a line with a bullet (`LIST_BULLETS`) followed by a space or a tab, and the
  line before it or the line after it starts with the same bullet (a list of two items or more, so a
  dash that a hard wrap put at a line's start is not taken for a bullet);
- the candidate starts a rule line: a line holding only a run of symbols that stands alone ("--",
  "=====", see `stands_alone`);
- the candidate starts the line after a rule line.

This module only reads text; it knows nothing of boundaries or probabilities.
"""

from __future__ import annotations

from segmenter.breaks import count_line_breaks
from segmenter.charclasses import LIST_BULLETS, is_quiet_mark

READ_MAX = 128  # characters read on each side of a candidate: longer lines are not known in full


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
    bulleted line, a rule line or the line after a rule line.

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
    neighbours = (previous, lines[1] if len(lines) > 1 else None)  # only their first characters matter
    if bulleted_line(after) and any(line is not None and line[:2] == after[:2] for line in neighbours):
        return True
    return rule_line(this_line) or rule_line(previous)


def bulleted_line(line: str) -> bool:
    """Whether `line` opens with a bullet and a space or a tab."""
    return len(line) >= 2 and line[0] in LIST_BULLETS and line[1] in " \t"


def rule_line(line: str | None) -> bool:
    """Whether `line` (None: not known in full) holds only a run of symbols that stands alone."""
    return line is not None and not any(map(str.isalnum, line)) and stands_alone(line)


def _last_line(content: str, text_start: bool) -> str | None:
    """The last line of `content` (text before a line break), if it starts within `content`."""
    lines = content.splitlines()
    if not lines:
        return None
    return lines[-1] if len(lines) > 1 or text_start else None
