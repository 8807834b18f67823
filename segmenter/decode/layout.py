"""Cut a text that arrives in pieces into groups of whole lines and read each group's markdown blocks.

Markdown's block structure is local: a blank line ends every block except a fenced code block (and a
loose list, whose items are still found one by one). `LayoutScanner` takes the text piece by piece,
classifies each complete line (blank, opening or closing a fence, other) and ends a group after a blank
line outside a fenced block; each finished group goes to `segmenter.decode.markdown.read_blocks`. The
groups depend on the text only, never on how it was cut into pieces, so a text decoded whole and the
same text streamed get the same blocks. Two reStructuredText blocks, which markdown does not know, are
read here as one block each, never cut: a directive with its options (".. contents::\n    :local:") and
the groups of indented lines after a paragraph that ends with "::" or after a code directive (a literal
block).

Two caps bound the memory a group holds: a fence open for more than FENCE_MAX characters stops being
waited for (its opening line is then taken for text), and a group ends at the end of the line that
takes it past GROUP_MAX characters. A group that does not start after a blank line does not open a
paragraph at its first line (it continues one). A single line longer than GROUP_MAX is cut at its
last whitespace before the cap; a group that starts or ends inside a line is not read as markdown.
"""

from __future__ import annotations

import re

from segmenter.decode.markdown import Blocks, read_blocks

FENCE_MAX = 1 << 15  # characters a fenced block may span before its opening line is taken for text
GROUP_MAX = 1 << 16  # characters a group may hold before it ends at the next line break

_FENCE = re.compile(r"[ \t>]*(`{3,}|~{3,})([^\r\n]*)")
_LINE_END = re.compile(r"\r\n|\r(?!$)|\n")  # a CR at the end of what is known may still meet its LF
# reStructuredText: a directive line (".. contents::", ".. code-block:: python") with its options, and
# what introduces a literal block: a paragraph ending with "::" or a code directive
_DIRECTIVE = re.compile(r"[ \t]*\.\. [\w:-]+::")
_INTRODUCES_LITERAL = re.compile(
    r"(?:^|\n)(?:[^\n]*\S::|[ \t]*\.\. (?:code|code-block|sourcecode|literalinclude|doctest|parsed-literal)::"
    r"[^\n]*(?:\n[ \t]+:[^\n]*)*)[ \t]*\s*$"
)
_INDENTED = re.compile(r"(?:[ \t]*\r?\n|(?: {2,}|\t)[^\r\n]*(?:\r?\n|$))*")  # lines indented or blank


class LayoutScanner:
    """Groups of whole lines and their blocks: `add(piece)` returns the blocks of the groups it
    finished, `finish()` those of the rest; offsets are global. `known`: the blocks before this offset
    are final (every group that starts before it has been read)."""

    def __init__(self, layout: str):
        self.layout = layout
        self.known = 0
        self._text = ""  # the text from self.known on: the open group
        self._scan = 0  # lines of the open group before this (local) offset are classified
        self._fence: tuple[str, int] | None = None  # the open fence's characters and where it opened
        self._after_blank = True  # the open group starts after a blank line (or at the text's start)
        self._literal = False  # an indented group here is a reStructuredText literal block
        self._in_line = False  # the open group starts inside a line (a cut long line)

    def add(self, piece: str) -> Blocks:
        self._text += piece
        if self.layout == "plain":
            return self._plain()
        found = Blocks()
        while True:
            match = _LINE_END.search(self._text, self._scan)
            if match is None:
                break
            line = self._text[self._scan : match.start()]
            self._scan = match.end()
            if self._ends_group(line):
                self._close(self._scan, found, in_line=False)
        if len(self._text) > GROUP_MAX and _LINE_END.search(self._text, self._scan) is None:
            cut = max(
                self._text.rfind(" ", self._scan, GROUP_MAX), self._text.rfind("\t", self._scan, GROUP_MAX)
            )
            self._close(cut + 1 if cut > self._scan else len(self._text), found, in_line=True)
        return found

    def finish(self) -> Blocks:
        found = Blocks()
        if self.layout == "plain":
            return self._plain()
        if self._text:
            self._close(len(self._text), found, in_line=False)
        return found

    def _plain(self) -> Blocks:
        self.known += len(self._text)
        self._text = ""
        return Blocks()

    def _ends_group(self, line: str) -> bool:
        """Classify one complete line; whether the open group ends after it."""
        start = self._scan  # the line's end: where the fence's span is measured to
        if self._fence is not None:
            fence, opened = self._fence
            content = line.strip().lstrip("> ").strip()
            if len(content) >= len(fence) and set(content) == {fence[0]}:
                self._fence = None
            elif start - opened > FENCE_MAX:
                self._fence = None  # never closed within reach: taken for text
            return False
        if not line.strip():
            return True
        opening = _FENCE.fullmatch(line)
        if opening is not None and not (opening[1][0] == "`" and "`" in opening[2]):
            self._fence = (opening[1], start)
            return False
        return self._scan > GROUP_MAX

    def _restructured(self, group: str) -> Blocks | None:
        """The one block of a group that is a reStructuredText literal block (indented, after "::") or
        a directive with its options (".. contents::\\n    :local:"): never cut; None for any other."""
        content = group.strip()
        if not content or not (
            (self._literal and _INDENTED.fullmatch(group))
            or _DIRECTIVE.match(group)
            and "\n\n" not in content
        ):
            return None
        start = len(group) - len(group.lstrip())
        return Blocks(starts=[start], atomic=[(start, start + len(content))])

    def _close(self, end: int, found: Blocks, in_line: bool) -> None:
        """End the open group at local offset `end`; add its blocks to `found`."""
        group = self._text[:end]
        if not (self._in_line or in_line):
            blocks = self._restructured(group) or read_blocks(
                group, self.layout, continued=not self._after_blank
            )
            found.starts.extend(self.known + at for at in blocks.starts)
            found.atomic.extend((self.known + a, self.known + b) for a, b in blocks.atomic)
        if group.strip():
            indented = self._literal and _INDENTED.fullmatch(group) is not None
            self._literal = not in_line and (indented or _INTRODUCES_LITERAL.search(group) is not None)
        self._after_blank = not group.strip() or not group.splitlines()[-1].strip() if not in_line else False
        self._in_line = in_line
        self.known += end
        self._text = self._text[end:]
        self._scan = max(self._scan - end, 0)
        if self._fence is not None:
            self._fence = (self._fence[0], self._fence[1] - end)
