"""Gold sentence data: read CoNLL-U and golden-rule JSONL into documents, and corrupt them.

A `Document` is a sequence of gold sentences. Its text is the sentences joined with one space (or a
line break, where its layout says so) and its gold boundaries are the character offsets where each
sentence after the first starts. `corrupt` produces the unpunctuated, lowercase condition (speech
transcripts, chat, OCR); `without_final_punctuation` drops the final punctuation of a share of the
sentences (chat and web text, where many sentences end without any); `with_line_breaks` and `wrapped`
lay the same text out in lines (paragraphs on lines of their own; lines hard-wrapped at a width), as
files and e-mails have it.

The character classes read here (SENTENCE_FINAL, CLOSING, is_punctuation) live in
`segmenter.text.charclasses`, the layouts' names (LAYOUTS) in `segmenter.text.conditions`; both stay
importable from this module. It reads files and builds plain data; it knows nothing about models or metrics.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from segmenter.errors import InputError
from segmenter.text.charclasses import CLOSING, SENTENCE_FINAL, is_punctuation
from segmenter.text.conditions import LAYOUTS as LAYOUTS  # the layouts of `with_line_breaks` and `wrapped`

SENTENCES_PER_DOC_WITHOUT_MARKERS = 10


@dataclass(frozen=True)
class Document:
    """Gold sentences of one document (silver: sentences cut from raw text by a rule, not annotated).

    >>> doc = Document("d1", ("Hi there.", "Bye."))
    >>> doc.text, doc.boundaries
    ('Hi there. Bye.', (10,))
    """

    id: str
    sentences: tuple[str, ...]
    silver: bool = False
    paragraph_starts: tuple[int, ...] = ()  # indices (> 0) of the sentences that open a paragraph
    line_breaks: tuple[int, ...] = ()  # offsets in `text` of joining spaces written as "\n" instead

    @property
    def text(self) -> str:
        text = " ".join(self.sentences)
        if not self.line_breaks:
            return text
        chars = list(text)
        for offset in self.line_breaks:
            chars[offset] = "\n"
        return "".join(chars)

    @property
    def boundaries(self) -> tuple[int, ...]:
        """Character offsets in `text` where each sentence after the first starts."""
        offsets, position = [], 0
        for sentence in self.sentences[:-1]:
            position += len(sentence) + 1
            offsets.append(position)
        return tuple(offsets)


def file_lines(text: str) -> list[str]:
    r"""The lines of a CoNLL-U or JSONL file: split at LF only (a CRLF's CR dropped), since both formats
    end lines with LF and may hold U+2028, U+0085 or a form feed inside a line, where `str.splitlines`
    would cut.

    >>> file_lines('{"text": "a\u2028b"}\r\n{"text": "c"}\n')
    ['{"text": "a\u2028b"}', '{"text": "c"}', '']
    """
    return [line.removesuffix("\r") for line in text.split("\n")]


def read_conllu(path: str | Path) -> list[Document]:
    """Documents of a CoNLL-U file, from `# newdoc` markers and `# text` lines.

    A file without any `# newdoc` line is grouped into documents of 10 consecutive sentences (with no
    paragraph starts). Sentences are stripped and whitespace inside them collapsed to single spaces.
    Paragraph starts come from `# newpar` lines (sentence indices within the document).
    """
    path = Path(path)
    docs: list[tuple[str, list[str], list[int]]] = []
    has_markers = False
    current: list[str] | None = None
    paragraphs: list[int] = []
    new_paragraph = False
    try:
        lines = file_lines(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read CoNLL-U file {path}: {exc}") from exc
    for line in lines:
        if line.startswith("# newdoc"):
            has_markers = True
            doc_id = line.partition("=")[2].strip() or f"{path.stem}-{len(docs)}"
            current, paragraphs = [], []
            docs.append((doc_id, current, paragraphs))
        elif line.startswith("# newpar"):
            new_paragraph = True
        elif line.startswith("# text =") or line.startswith("# text="):
            sentence = _clean(line.partition("=")[2])
            if not sentence:
                continue
            if current is None:
                current = []
                docs.append((f"{path.stem}-0", current, paragraphs))
            if new_paragraph and current:
                paragraphs.append(len(current))
            new_paragraph = False
            current.append(sentence)
    if not has_markers:
        sentences = [s for _, group, _ in docs for s in group]
        step = SENTENCES_PER_DOC_WITHOUT_MARKERS
        docs = [
            (f"{path.stem}-{i // step}", sentences[i : i + step], []) for i in range(0, len(sentences), step)
        ]
    return [Document(doc_id, tuple(group), paragraph_starts=tuple(p)) for doc_id, group, p in docs if group]


def read_golden(path: str | Path) -> list[Document]:
    """Golden-rule style JSONL: one object per line with `text` and the expected `sentences`.

    The document keeps the expected sentences; its `text` (sentences joined by one space) may differ
    from the case's original `text` in whitespace only. Use `read_golden_cases` for the originals.
    """
    return [
        Document(case["id"], tuple(_clean(s) for s in case["sentences"])) for case in read_golden_cases(path)
    ]


def read_golden_cases(path: str | Path) -> list[dict]:
    """The raw JSON objects of a golden-rule JSONL file, each given an `id` if it has none."""
    path = Path(path)
    cases = []
    try:
        lines = file_lines(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read JSONL file {path}: {exc}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
            case.setdefault("id", f"{path.stem}-{number}")
            if not isinstance(case["text"], str) or not isinstance(case["sentences"], list):
                raise TypeError("text must be a string and sentences a list")
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise InputError(
                f"{path}:{number}: not a golden-rule case with text and sentences ({exc})"
            ) from exc
        cases.append(case)
    return cases


REALWORLD_FIELDS = ("id", "family", "source", "licence", "text", "boundaries")


@dataclass(frozen=True)
class RealDocument:
    """One document of the real-document corpus (docs/annotation.md): its text exactly as the source
    has it and the offsets where each segment after the first starts.

    >>> doc = RealDocument("email-1", "email", "Hi all,\n\nIt is green.", (9,))
    >>> doc.segments
    ('Hi all,', 'It is green.')
    """

    id: str
    family: str
    text: str
    boundaries: tuple[int, ...]

    @property
    def segments(self) -> tuple[str, ...]:
        cuts = [0, *self.boundaries, len(self.text)]
        return tuple(self.text[a:b].strip() for a, b in zip(cuts, cuts[1:], strict=False))


def read_realworld(path: str | Path) -> list[RealDocument]:
    """The documents of a real-document corpus file (JSONL, one document per line, the fields of
    REALWORLD_FIELDS and more); `InputError` naming the line for a malformed one."""
    path = Path(path)
    try:
        lines = file_lines(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read JSONL file {path}: {exc}") from exc
    docs = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
            missing = [name for name in REALWORLD_FIELDS if name not in case]
            if missing:
                raise KeyError(", ".join(missing))
            text, boundaries = case["text"], tuple(case["boundaries"])
            if not isinstance(text, str) or not all(isinstance(b, int) for b in boundaries):
                raise TypeError("text must be a string and boundaries integers")
            if list(boundaries) != sorted(set(boundaries)) or any(not 0 < b < len(text) for b in boundaries):
                raise ValueError("boundaries must increase strictly and lie inside the text")
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise InputError(
                f"{path}:{number}: not a real-document case ({type(exc).__name__}: {exc})"
            ) from exc
        docs.append(RealDocument(case["id"], case["family"], text, boundaries))
    return docs


def _clean(sentence: str) -> str:
    return " ".join(sentence.split())


_SPACES = re.compile(r"\s+")


def corrupt(text: str) -> str:
    """Lowercase, delete every Unicode punctuation character, collapse whitespace, strip.

    >>> corrupt("Hello, World!  It's  me.")
    'hello world its me'
    """
    kept = "".join(c for c in text.lower() if not is_punctuation(c))
    return _SPACES.sub(" ", kept).strip()


def corrupt_document(doc: Document) -> Document:
    """The document with every sentence corrupted, joined by spaces; sentences left empty are dropped
    (a paragraph opened by a dropped sentence opens at the next one kept)."""
    sentences: list[str] = []
    starts: list[int] = []
    opens = set(doc.paragraph_starts)
    pending = False
    for index, sentence in enumerate(doc.sentences):
        pending = pending or index in opens
        kept = corrupt(sentence)
        if kept:
            if pending and sentences:
                starts.append(len(sentences))
            pending = False
            sentences.append(kept)
    return replace(doc, sentences=tuple(sentences), paragraph_starts=tuple(starts), line_breaks=())


_FINAL_PUNCTUATION = re.compile(f"[{re.escape(SENTENCE_FINAL)}]+(?=[{re.escape(CLOSING)}]*$)")


def is_marked(text: str, boundary: int) -> bool:
    """True when sentence-final punctuation, then optionally closing quotes or brackets, precedes `boundary`
    (a boundary `without_final_punctuation` has stripped is no longer marked).

    >>> [is_marked(t, b) for t, b in [("Hi. Bye", 4), ('"Go!" Fine', 6), ("Hi all Bye", 7), ("A: b", 3)]]
    [True, True, False, False]
    """
    i = boundary - 1
    while i >= 0 and text[i].isspace():
        i -= 1
    while i >= 0 and text[i] in CLOSING:
        i -= 1
    return i >= 0 and text[i] in SENTENCE_FINAL


def without_final_punctuation(doc: Document, share: float) -> Document:
    """The document with about `share` of its sentences stripped of their final punctuation (SENTENCE_FINAL).

    Which sentences is fixed by a hash of the document id and the sentence index, so every run drops
    the same ones. Capitals and closing quotes stay; a sentence that would be left empty stays whole.

    >>> doc = Document("d", ("It rained.", 'He said "go!"', "Fine?"))
    >>> without_final_punctuation(doc, 1.0).sentences
    ('It rained', 'He said "go"', 'Fine')
    >>> without_final_punctuation(doc, 0.0) == doc
    True
    """
    sentences = tuple(
        _FINAL_PUNCTUATION.sub("", sentence).rstrip() or sentence
        if zlib.crc32(f"drop:{doc.id}:{index}".encode()) / 2**32 < share
        else sentence
        for index, sentence in enumerate(doc.sentences)
    )
    return replace(doc, sentences=sentences)


def with_line_breaks(doc: Document) -> Document:
    """The document with each paragraph on a line of its own (a line break before every paragraph start).

    >>> with_line_breaks(Document("d", ("Title", "Hi there.", "Bye."), paragraph_starts=(1,))).text
    'Title\\nHi there. Bye.'
    """
    starts = doc.boundaries
    return replace(doc, line_breaks=tuple(starts[index - 1] - 1 for index in doc.paragraph_starts))


def wrapped(doc: Document, width: int) -> Document:
    """`with_line_breaks(doc)` with every line longer than `width` characters hard-wrapped: the last
    joining space that keeps a line within `width` becomes a line break (a longer word stays whole).

    >>> wrapped(Document("d", ("One two three.", "Four five.")), 10).text
    'One two\\nthree.\\nFour five.'
    """
    laid_out = with_line_breaks(doc)
    text = laid_out.text
    breaks = list(laid_out.line_breaks)
    line_start, last_space = 0, None
    for offset, char in enumerate(text):
        if char == "\n":
            line_start, last_space = offset + 1, None
        elif char == " ":
            last_space = offset
        if offset - line_start >= width and last_space is not None and char != "\n":
            breaks.append(last_space)
            line_start, last_space = last_space + 1, None
    return replace(doc, line_breaks=tuple(sorted(breaks)))


def documents_from_raw_text(text: str, source: str, sentence_splitter) -> Iterator[Document]:
    """Documents from raw punctuated text, one per blank-line paragraph block.

    `sentence_splitter(paragraph) -> list[str]` supplies silver sentences (self-supervision).
    """
    for number, block in enumerate(re.split(r"\n\s*\n", text)):
        paragraph = _clean(block)
        if paragraph:
            sentences = tuple(s for s in (_clean(s) for s in sentence_splitter(paragraph)) if s)
            if sentences:
                yield Document(f"{source}-{number}", sentences, silver=True)
