"""Build the topic corpus: real documents cut into sections by their authors, headings removed.

    python training/topic_corpus.py MIRRORS benchmarks/data/topics

MIRRORS is a folder of bare git repositories named `owner+name/repo` (as fetched); three are read at
the commits recorded in SOURCES.md:

- `articles`: research articles of PLOS's `allofplos` starter corpus (CC BY 4.0). A section is a
  top-level `<sec>` of the body with a title; its text is its paragraphs (`<p>`, figures, tables and
  boxed text left out), whitespace collapsed. Articles with fewer than three such sections are skipped.
- `book`: chapters of "The Rust Programming Language" (`rust-lang/book`, `src/chNN-MM-*.md`, MIT or
  Apache-2.0). A section is one of a chapter's files, the chapter's opening file included; headings,
  code blocks, HTML lines and mdBook directives are removed, block-quote markers dropped, and each
  paragraph or list item unwrapped to one line and shown as rendered (links as their text, no HTML
  comments, no emphasis markers). Chapters of one file are skipped.
- `meetings`: AMI and ICSI meetings of QMSum (`Yale-LILY/QMSum`, transcripts CC BY 4.0), sections
  from QMSum's topic annotations (`topic_list`: the turn spans of each topic, written by its
  annotators): a new section opens at each span whose topic differs from the span before it. Each turn
  is one line; every other meeting (by name, sorted) as written (`Speaker: text`, QMSum's tokenisation
  undone, `{...}` tags removed), the rest as speech recognisers give it (lowercase, no punctuation, no
  speaker labels).

Paragraphs (and turns) are joined by a blank line (one line break for turns), sections the same way, so
a section start is never told apart by the layout. `starts` are the character offsets of each section
after the first. Split: QMSum's own split (its train and val meetings to dev, test to test); articles
and chapters by a seeded shuffle, half each; at most 30 documents per genre and file. Written to OUT:
dev.jsonl, test.jsonl (one document per line: id, genre, source, licence, text, starts, titles) and
SPLIT.md.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from markdown_it import MarkdownIt

SEED = 20261207
PER_FILE = 30  # documents per genre and file, at most: the files ship with the package
COMMITS = {
    "PLOS+allofplos": "07fdeed",
    "rust-lang+book": "917544888",
    "Yale-LILY+QMSum": "83d7768",
}


def git(mirrors: Path, repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(mirrors / repo / "repo"), *args],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip


def full_commit(mirrors: Path, repo: str) -> str:
    return git(mirrors, repo, "rev-parse", COMMITS[repo]).strip()


def join_sections(sections: list[list[str]], separator: str) -> tuple[str, list[int]]:
    """Text of the sections' pieces joined by `separator`, and the offsets where sections 2.. start."""
    text, starts = "", []
    for number, pieces in enumerate(sections):
        if number:
            text += separator
            starts.append(len(text))
        text += separator.join(pieces)
    return text, starts


def document(
    id: str,
    genre: str,
    source: str,
    licence: str,
    sections: list[list[str]],
    titles: list[str],
    separator: str,
) -> dict:
    """One corpus record: the sections' pieces joined by `separator`, with the section starts."""
    text, starts = join_sections(sections, separator)
    return {
        "id": id, "genre": genre, "source": source, "licence": licence,
        "text": text, "starts": starts, "titles": titles,
    }  # fmt: skip


# --- articles -------------------------------------------------------------------------------------

SKIPPED_ELEMENTS = {"fig", "table-wrap", "boxed-text", "disp-formula", "supplementary-material"}


def paragraphs(section: ET.Element) -> list[str]:
    """Text of each `<p>` under `section` in document order, outside figures, tables and boxes."""
    out = []

    def walk(node: ET.Element) -> None:
        for child in node:
            if child.tag in SKIPPED_ELEMENTS:
                continue
            if child.tag == "p":
                text = " ".join("".join(child.itertext()).split())
                if text:
                    out.append(text)
            else:
                walk(child)

    walk(section)
    return out


def articles(mirrors: Path) -> list[dict]:
    repo, commit = "PLOS+allofplos", full_commit(mirrors, "PLOS+allofplos")
    names = git(mirrors, repo, "ls-tree", "--name-only", commit, "allofplos/starter_corpus/").split()
    docs = []
    for name in sorted(n for n in names if n.endswith(".xml")):
        root = ET.fromstring(git(mirrors, repo, "show", f"{commit}:{name}").encode())
        body = root.find(".//body")
        if body is None or root.find(".//license") is None:
            continue
        sections, titles = [], []
        for section in body.findall("sec"):
            title = section.find("title")
            title = " ".join("".join(title.itertext()).split()) if title is not None else ""
            pieces = paragraphs(section)
            if title and pieces:
                sections.append(pieces)
                titles.append(title)
        if len(sections) < 3:
            continue
        stem = Path(name).stem.removeprefix("journal.")
        source = f"https://github.com/PLOS/allofplos@{commit}:{name}"
        docs.append(document(f"plos-{stem}", "articles", source, "CC-BY-4.0", sections, titles, "\n\n"))
    return docs


# --- book -----------------------------------------------------------------------------------------

FENCE = re.compile(r"^\s*(```|~~~)")
DROPPED_LINE = re.compile(r"^\s*(#{1,6}\s|<|\{\{#|\[[^\]]+\]:\s)")


COMMENT = re.compile(r"<!--.*?-->")
LINK = re.compile(r"\[([^\]]+)\](?:\[[^\]]*\]|\([^)]*\))")


# Emphasis is found by a CommonMark parser rather than a regex: whether `*` or `_` opens or closes
# emphasis depends on the flanking rules (`snake_case`, `2 * 3` and `a*b` are left as they are) and on
# code spans, whose content is never emphasis; escapes (`\*`) are never delimiters either.
INLINE = MarkdownIt("zero").enable(["backticks", "emphasis", "escape", "html_inline"]).disable("text_join")
EMPHASIS = {"em_open", "em_close", "strong_open", "strong_close"}


def without_emphasis(text: str) -> str:
    r"""`text` with the markers of its emphasis (`*x*`, `_x_`, `**x**`, `__x__`) removed, every other
    character kept as written (code spans, escapes and inline HTML included).

    >>> without_emphasis("**Bold**, __bold__, *it* and _it_; not snake_case_names, 2 * 3 or a*b")
    'Bold, bold, it and it; not snake_case_names, 2 * 3 or a*b'
    >>> without_emphasis("* a bullet, `x_y_z`, `*`, _the `rustc` Book_ and \\_escaped\\_")
    '* a bullet, `x_y_z`, `*`, the `rustc` Book and \\_escaped\\_'
    """
    (inline,) = INLINE.parseInline(text)
    kept, position = [], 0
    for token in inline.children or []:
        if token.type in EMPHASIS:
            source, keep = token.markup, False
        elif token.type == "code_inline":  # its content may have lost one padding space on each side
            fence = token.markup
            padded = f"{fence} {token.content} {fence}"
            source = padded if text.startswith(padded, position) else fence + token.content + fence
            keep = True
        else:  # text as written; an escape's `markup` is its source, its `content` the escaped character
            source, keep = (token.markup if token.type == "text_special" else token.content), True
        if not text.startswith(source, position):
            raise ValueError(f"cannot align {token.type} {source!r} at {position} of {text!r}")
        if keep:
            kept.append(source)
        position += len(source)
    if position != len(text):
        raise ValueError(f"cannot align the end of {text!r}")
    return "".join(kept)


def rendered(paragraph: str) -> str:
    """A paragraph as the rendered page shows it: HTML comments dropped, links reduced to their text,
    emphasis markers removed."""
    return without_emphasis(" ".join(LINK.sub(r"\1", COMMENT.sub("", paragraph)).split()))


def markdown_paragraphs(markdown: str) -> list[str]:
    """Prose paragraphs and list items of an mdBook page, each unwrapped to one line, as rendered; a
    paragraph ending in ":" that leads into a code block goes with the code."""
    out, current, in_fence = [], [], False

    def flush() -> None:
        if current:
            out.append(rendered(" ".join(current)))
            current.clear()

    for raw in markdown.splitlines():
        if FENCE.match(raw):
            flush()
            if not in_fence and out and out[-1].endswith(":"):
                out.pop()
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        line = raw.strip()
        while line.startswith(">"):
            line = line[1:].strip()
        if not line or DROPPED_LINE.match(line):
            flush()
            continue
        if re.match(r"^([-*+]|\d+\.)\s", line):  # a list item opens a paragraph of its own
            flush()
        current.append(line)
    flush()
    return [p for p in out if re.search(r"[A-Za-z]{3}", p)]


def book(mirrors: Path) -> list[dict]:
    repo, commit = "rust-lang+book", full_commit(mirrors, "rust-lang+book")
    names = git(mirrors, repo, "ls-tree", "--name-only", commit, "src/").split()
    chapters: dict[str, list[str]] = {}
    for name in sorted(names):
        found = re.match(r"src/ch(\d\d)-(\d\d)-.*\.md$", name)
        if found and found[1] != "00":
            chapters.setdefault(found[1], []).append(name)
    docs = []
    for chapter, files in sorted(chapters.items()):
        if len(files) < 3:  # an opening page and at least two sections
            continue
        sections, titles = [], []
        for name in files:
            page = git(mirrors, repo, "show", f"{commit}:{name}")
            heading = re.search(r"^#{1,2}\s+(.+)$", page, re.M)
            pieces = markdown_paragraphs(page)
            if pieces:
                sections.append(pieces)
                titles.append(heading[1].strip() if heading else Path(name).stem)
        source = f"https://github.com/rust-lang/book@{commit}:src/ch{chapter}-*.md"
        docs.append(
            document(f"rust-book-ch{chapter}", "book", source, "MIT OR Apache-2.0", sections, titles, "\n\n")
        )
    return docs


# --- meetings -------------------------------------------------------------------------------------

TAG = re.compile(r"\{[a-z_]+\}")


def written_turn(speaker: str, content: str) -> str:
    """A turn as a transcript prints it: QMSum's tokenisation undone, tags removed."""
    text = " ".join(TAG.sub(" ", content).split())
    text = re.sub(r" (n't|'[a-z]+)\b", r"\1", text)
    text = re.sub(r" ([,.?!;:%)])", r"\1", text)
    text = re.sub(r"([($]) ", r"\1", text)
    return f"{speaker}: {text}" if text else ""


def spoken_turn(content: str) -> str:
    """A turn as a speech recogniser gives it: lowercase words, no punctuation, no tags."""
    text = TAG.sub(" ", content).lower()
    text = re.sub(r" (n't|'[a-z]+)\b", r"\1", text)
    text = re.sub(r"[^\w' ]+", " ", text)
    return " ".join(text.split())


def topic_sections(topics: list[dict], n_turns: int) -> list[tuple[int, str]]:
    """(first turn, title) of each section: one opens at every span whose topic differs from the span
    before it; the first section starts at turn 0 (turns before the first annotated span join it)."""
    spans = sorted(
        (int(span[0]), topic["topic"].strip())
        for topic in topics
        for span in topic["relevant_text_span"]
        if 0 <= int(span[0]) < n_turns
    )
    sections: list[tuple[int, str]] = []
    previous = None
    for first, title in spans:
        if title != previous:
            if not sections:
                sections.append((0, title))
            elif first > sections[-1][0]:
                sections.append((first, title))
            previous = title
    return sections


def meetings(mirrors: Path) -> list[dict]:
    repo, commit = "Yale-LILY+QMSum", full_commit(mirrors, "Yale-LILY+QMSum")
    docs = []
    for split in ("train", "val", "test"):
        names = git(mirrors, repo, "ls-tree", "--name-only", commit, f"data/ALL/{split}/").split()
        for number, name in enumerate(sorted(names)):
            meeting = Path(name).stem
            corpus = (
                "ami" if re.match(r"^(ES|IS|TS)\d", meeting) else "icsi" if meeting.startswith("B") else ""
            )
            if not corpus:  # the parliamentary committee meetings have another licence
                continue
            record = json.loads(git(mirrors, repo, "show", f"{commit}:{name}"))
            turns = record["meeting_transcripts"]
            written = number % 2 == 0
            sections: list[list[str]] = []
            titles: list[str] = []
            bounds = topic_sections(record["topic_list"], len(turns))
            for (first, title), (stop, _) in zip(bounds, [*bounds[1:], (len(turns), "")], strict=True):
                lines = [
                    written_turn(t["speaker"], t["content"]) if written else spoken_turn(t["content"])
                    for t in turns[first:stop]
                ]
                if any(lines):
                    sections.append([line for line in lines if line])
                    titles.append(title)
            if len(sections) < 2:
                continue
            rendering = " (as written)" if written else " (as recognised: lowercase, no punctuation)"
            source = f"https://github.com/Yale-LILY/QMSum@{commit}:{name}{rendering}"
            doc = document(
                f"qmsum-{corpus}-{meeting}", "meetings", source, "CC-BY-4.0", sections, titles, "\n"
            )
            docs.append({**doc, "split": "test" if split == "test" else "dev"})
    return docs


# --- split and write --------------------------------------------------------------------------------


def split(docs: list[dict]) -> dict[str, list[dict]]:
    """QMSum's own split for meetings, otherwise a seeded shuffle per genre, first half to dev; then at
    most PER_FILE documents of a genre per file (a seeded sample)."""
    out = {"dev": [], "test": []}
    rng = random.Random(SEED)
    for genre in ("articles", "book", "meetings"):
        group = [d for d in docs if d["genre"] == genre]
        rng.shuffle(group)
        if genre == "meetings":
            parts = {name: [d for d in group if d["split"] == name] for name in out}
        else:
            half = (len(group) + 1) // 2
            parts = {"dev": group[:half], "test": group[half:]}
        for name, part in parts.items():
            for doc in part:
                doc.pop("split", None)
            out[name] += sorted(part[:PER_FILE], key=lambda d: d["id"])
    return out


def check(doc: dict) -> None:
    text, starts = doc["text"], doc["starts"]
    assert starts == sorted(set(starts)) and all(0 < s < len(text) for s in starts), doc["id"]
    assert all(text[s - 1].isspace() and not text[s].isspace() for s in starts), doc["id"]


def main(mirrors: str, out: str) -> None:
    mirrors_path, out_path = Path(mirrors), Path(out)
    docs = articles(mirrors_path) + book(mirrors_path) + meetings(mirrors_path)
    for doc in docs:
        check(doc)
    parts = split(docs)
    out_path.mkdir(parents=True, exist_ok=True)
    lines = [
        "| genre | file | documents | sections | mean sections | mean characters |",
        "|---|---|---|---|---|---|",
    ]
    for name, group in parts.items():
        with (out_path / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
            for doc in group:
                handle.write(json.dumps(doc, ensure_ascii=False) + "\n")
        for genre in ("articles", "book", "meetings"):
            chosen = [d for d in group if d["genre"] == genre]
            sections = sum(len(d["starts"]) + 1 for d in chosen)
            chars = sum(len(d["text"]) for d in chosen)
            lines.append(
                f"| {genre} | {name} | {len(chosen)} | {sections} | {sections / len(chosen):.1f} | "
                f"{chars / len(chosen):,.0f} |"
            )
    (out_path / "SPLIT.md").write_text(
        "# Topic corpus: documents per genre and file\n\nWritten by `python training/topic_corpus.py "
        "MIRRORS benchmarks/data/topics`.\n\n" + "\n".join(lines) + "\n",
        encoding="utf-8",
    )
    print("\n".join(lines))


if __name__ == "__main__":
    main(*sys.argv[1:3])
