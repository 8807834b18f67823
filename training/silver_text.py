"""Write the raw English prose behind the shipped tuned presets, from two Debian packages.

    apt-get install debian-handbook=11.20220922 fortunes=1:1.99.1-7.3 fortunes-min=1:1.99.1-7.3
    python training/silver_text.py OUT_DIR

writes OUT_DIR/handbook.txt (about 250,000 characters of paragraphs from The Debian Administrator's
Handbook, English HTML edition; GPL-2.0+ or CC-BY-SA-3.0) and OUT_DIR/fortunes.txt (about 118,000
characters of prose fortune cookies; BSD). One paragraph per blank-line block, as `segmenter train
tune --data raw:PATH` (and `train probe`) reads it; the sentences are cut by its punctuation rule
(silver labels).

Selection: handbook paragraphs of at least 150 characters, at least three quarters letters, with a
full stop inside and no code-like characters or ellipses; fortunes without indented (verse) or
"Name:" (dialogue) lines, attribution lines dropped, at least 120 characters, at least 70% letters and
one sentence break. Both are shuffled with Python's `random` seeded with 0, in that order, and cut
after the character budget. The texts are not redistributed with this project; this script rebuilds
them. It is a development tool: nothing in `segmenter` imports it.
"""

from __future__ import annotations

import html.parser
import random
import re
import sys
from pathlib import Path

HANDBOOK = Path("/usr/share/doc/debian-handbook/html/en-US")
FORTUNES = Path("/usr/share/games/fortunes")
FORTUNE_FILES = [
    "fortunes",
    "humorists",
    "wisdom",
    "people",
    "literature",
    "love",
    "work",
    "politics",
    "science",
    "education",
    "men-women",
    "law",
    "medicine",
    "platitudes",
    "miscellaneous",
    "kids",
    "food",
    "linux",
    "computers",
    "pets",
    "sports",
    "startrek",
    "zippy",
    "cookie",
]
HANDBOOK_BUDGET, FORTUNES_BUDGET = 250_000, 150_000
_SPEAKER = re.compile(r"^\s*[A-Z][a-z]*:\s")


class _Paragraphs(html.parser.HTMLParser):
    """Text of every `<div class="para">` that holds no nested block (div, pre, table, list)."""

    def __init__(self):
        super().__init__()
        self.paragraphs: list[str] = []
        self._parts: list[str] | None = None
        self._depth = 0
        self._nested = False

    def handle_starttag(self, tag, attrs):
        if tag == "div":
            if self._parts is not None:
                self._depth += 1
                self._nested = True
            elif dict(attrs).get("class") == "para":
                self._parts, self._depth, self._nested = [], 0, False
        elif self._parts is not None and tag in ("pre", "table", "ul", "ol"):
            self._nested = True

    def handle_endtag(self, tag):
        if tag != "div" or self._parts is None:
            return
        if self._depth:
            self._depth -= 1
            return
        text = " ".join("".join(self._parts).split())
        if text and not self._nested:
            self.paragraphs.append(text)
        self._parts = None

    def handle_data(self, data):
        if self._parts is not None:
            self._parts.append(data)


def _letters(text: str) -> float:
    return sum(c.isalpha() for c in text) / len(text)


def handbook_paragraphs() -> list[str]:
    found = []
    for page in sorted(HANDBOOK.glob("*.html")):
        parser = _Paragraphs()
        parser.feed(page.read_text(encoding="utf-8"))
        found += parser.paragraphs
    return [
        t
        for t in found
        if len(t) >= 150 and ". " in t and not re.search(r"[{}<>$#]|\.\.\.", t) and _letters(t) > 0.75
    ]


def fortune_paragraphs() -> list[str]:
    found = []
    for name in FORTUNE_FILES:
        path = FORTUNES / name
        if not path.is_file():
            continue
        for entry in path.read_text(encoding="utf-8", errors="replace").split("\n%\n"):
            lines = [line for line in entry.split("\n") if line.strip()]
            if any(line.startswith(("\t", "    ")) or _SPEAKER.match(line) for line in lines):
                continue  # verse or dialogue
            text = " ".join(" ".join(line for line in lines if not line.strip().startswith("--")).split())
            if len(text) >= 120 and re.search(r"[.!?]\s+[A-Z]", text) and _letters(text) > 0.7:
                found.append(text)
    return found


def _first(paragraphs: list[str], budget: int) -> list[str]:
    """Paragraphs up to and including the one that takes the total past `budget` characters."""
    kept, total = [], 0
    for paragraph in paragraphs:
        kept.append(paragraph)
        total += len(paragraph)
        if total > budget:
            break
    return kept


def main(out_dir: str) -> None:
    if not HANDBOOK.is_dir() or not FORTUNES.is_dir():
        sys.exit("install the Debian packages first: apt-get install debian-handbook fortunes fortunes-min")
    handbook, fortunes = handbook_paragraphs(), fortune_paragraphs()
    random.seed(0)
    random.shuffle(handbook)
    random.shuffle(fortunes)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, paragraphs, budget in (
        ("handbook.txt", handbook, HANDBOOK_BUDGET),
        ("fortunes.txt", fortunes, FORTUNES_BUDGET),
    ):
        kept = _first(paragraphs, budget)
        (out / name).write_text("\n\n".join(kept) + "\n", encoding="utf-8")
        print(f"{out / name}: {len(kept)} paragraphs, {sum(map(len, kept)):,} characters")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
