"""Markdown block structure, read by markdown-it-py (CommonMark with GitHub tables): where blocks open
segments and which stretches are never cut.

`read_blocks(group, layout)` parses one group of whole lines (`segmenter.decode.layout` cuts the text
into groups at blank lines outside fenced code) and returns:

- `starts`: offsets in `group` where a segment opens: the first character of every block's first line
  (a heading, a paragraph, a list item at its marker, a block quote at its ">", a fenced code block,
  a thematic break, each table row and the table's delimiter row);
- `atomic`: (start, end) stretches no boundary falls strictly inside: a fenced code block from its
  opening fence to the end of its closing one (blank lines inside included), each table row line, an
  ATX heading line ("## 2.1 Setup") of at most HEADING_MAX characters, and a list item's marker with
  its task box up to the item's first word ("- [ ] Add tests"), so the marker stays with its item.
  A list of one item right under a line of text (a list item's included) is not read, unless the item
  opens with a task box: a hard wrap put a dash or a number at the line's start ("He came back⏎- as we
  expected - and left.").

Layouts (`LAYOUTS`): "auto" (the default) reads every block kind except indented code and raw HTML
blocks, which plain text has by accident (an indented paragraph, a line opening with "<tom@...>"):
what remains is harmless on plain text, where a paragraph is a paragraph. "markdown" reads indented
code blocks (one atomic stretch each) and HTML blocks too. "plain" reads no markdown at all.

A fenced block with no closing fence in its group is not atomic (CommonMark would run it to the end of
the document, so a stray "```" would freeze everything after it). This module only reads text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

from segmenter.config import LAYOUTS

__all__ = ["LAYOUTS", "Blocks", "read_blocks"]
HEADING_MAX = 200  # characters: a longer "# ..." line is read as text that happens to open with "#"

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")  # markdown-it's lines: split at CR, LF and CRLF only
_TASK_BOX = re.compile(r"\[[ xX]\][ \t]+")
_QUOTE_MARKERS = re.compile(r"[ \t]*(>)[ \t>]*")  # the block-quote markers that open a line
_MARKERS_ALONE = re.compile(r"[ \t>]*\r?\n?")  # a line of block-quote markers alone (or empty)
_OPENERS = {"heading_open", "paragraph_open", "blockquote_open", "hr", "html_block"}


@dataclass
class Blocks:
    """Block starts and atomic stretches of one group, as offsets into it."""

    starts: list[int] = field(default_factory=list)
    atomic: list[tuple[int, int]] = field(default_factory=list)


@cache
def _parser(layout: str):
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").enable("table")
    if layout == "auto":
        parser.disable(["code", "html_block"])
    parser.core.ruler.disable(["inline", "text_join"])  # block structure only: inline parsing costs time
    return parser


def read_blocks(group: str, layout: str, continued: bool = False) -> Blocks:
    """Block starts and atomic stretches of `group` (whole lines) under `layout`; `continued`: the
    group goes on from a line before it, so a paragraph on its first line opens no segment.

    >>> blocks = read_blocks("# Install\\n- [ ] Add tests\\n\\n```\\na\\n\\nb\\n```\\n", "auto")
    >>> blocks.starts, blocks.atomic
    ([0, 10, 27], [(0, 9), (10, 17), (27, 39)])
    """
    blocks = Blocks()
    if layout == "plain" or not group.strip():
        return blocks
    lines = [match.start() for match in _LINE.finditer(group)][:-1] or [0]  # each line's start
    lines.append(len(group))

    def first_char(line: int) -> int:
        start = lines[line]
        return start + len(group[start : lines[line + 1]]) - len(group[start : lines[line + 1]].lstrip())

    def line_end(line: int) -> int:
        return lines[line] + len(group[lines[line] : lines[line + 1]].rstrip())

    lists: list[list] = []  # open lists: their items' tokens
    paragraph_lines: set[int] = set()  # lines of paragraphs read so far
    for token in _parser(layout).parse(group):
        if token.type in ("bullet_list_close", "ordered_list_close"):
            items = lists.pop()
            first_line = items[0].map[0] if items else 0
            task = bool(items) and _is_task(group, lines[first_line], lines[first_line + 1])
            if len(items) == 1 and first_line - 1 in paragraph_lines and not task:
                continue  # one item right under a line of text: a dash or number a hard wrap put there
            for item in items:
                marker = _marker(group, lines[item.map[0]], lines[item.map[0] + 1], item)
                if marker is not None:
                    blocks.starts.append(marker[0])
                    blocks.atomic.append(marker)
            continue
        if token.type in ("bullet_list_open", "ordered_list_open"):
            lists.append([])
        if token.map is None:
            continue
        first, last = token.map[0], token.map[1] - 1
        if first >= len(lines) - 1:
            continue
        if token.type == "paragraph_open":
            paragraph_lines.update(range(first, last + 1))
        if token.type == "blockquote_open":  # it opens at its first line that says something
            while first <= last and _MARKERS_ALONE.fullmatch(group[lines[first] : lines[first + 1]]):
                first += 1
            if first > last or first >= len(lines) - 1:
                continue
        if token.type in _OPENERS:
            on_item_line = bool(lists and lists[-1] and lists[-1][-1].map[0] == first)
            if on_item_line and token.type == "paragraph_open":
                continue  # the item's own line: the item opens it, if its list is read
            if not (continued and first == 0 and token.type == "paragraph_open"):
                blocks.starts.append(first_char(first))
            atx = token.type == "heading_open" and token.markup.startswith("#")
            if atx and line_end(first) - first_char(first) <= HEADING_MAX:
                blocks.atomic.append((first_char(first), line_end(first)))
        elif token.type in ("fence", "code_block"):
            blocks.starts.append(first_char(first))
            if token.type == "code_block" or _closed(group[lines[last] : lines[last + 1]], token.markup):
                blocks.atomic.append((first_char(first), line_end(last)))
        elif token.type == "table_open":
            for line in range(first, last + 1):
                if "|" in group[lines[line] : lines[line + 1]]:
                    blocks.starts.append(first_char(line))
                    blocks.atomic.append((first_char(line), line_end(line)))
        elif token.type == "list_item_open":
            lists[-1].append(token)
    blocks.starts = sorted(set(blocks.starts))
    blocks.atomic.sort()
    return blocks


def _is_task(group: str, start: int, end: int) -> bool:
    """Whether the list item on the line group[start:end] opens with a task box ("- [ ] ", "1. [x] ")."""
    return re.match(r"\s*(?:[-*+]|\d{1,9}[.)])\s+\[[ xX]\]\s", group[start:end]) is not None


def _closed(line: str, fence: str) -> bool:
    """Whether `line` closes a block opened by `fence` ("```", "~~~~"): the same character, at least
    as many times, nothing else but whitespace and block-quote or list indentation before it."""
    content = line.strip().lstrip("> ").strip()
    return len(content) >= len(fence) and set(content) == {fence[0]}


def _marker(group: str, start: int, end: int, token) -> tuple[int, int] | None:
    """(marker start, first character of the item's content + 1) for a list item on the line
    group[start:end]: a boundary never falls between a marker (and its task box) and the item. An
    item in a block quote starts at the line's first ">" ("> * bash: ...")."""
    line = group[start:end]
    marker = (token.info or "") + token.markup  # "-", "*", "1.", "2)"
    quoted = _QUOTE_MARKERS.match(line)  # an item in a block quote opens at the line's first ">"
    at = line.find(marker, quoted.end() if quoted else 0)
    if at < 0:
        return None
    opens = quoted.start(1) if quoted else at
    content = at + len(marker)
    while content < len(line) and line[content] in " \t":
        content += 1
    box = _TASK_BOX.match(line, content)
    if box is not None:
        content = box.end()
    if content >= len(line.rstrip()):
        return None  # an empty item: nothing to keep the marker with
    return start + opens, start + content + 1
