"""Dataset specs for the benchmark (and `segmenter analyze`): resolve a spec string to gold documents.

Specs: `conllu:PATH` (documents from `# newdoc`, sentences from `# text`; no markers -> groups of 10),
`golden:PATH` (JSONL with `text` and `sentences`), or a built-in name: `ewt-dev`, `ewt-test`,
`golden-rules` (copies shipped in `benchmarks/data/`, with their licences).

`evaluation_items` turns a dataset into what the systems read and the metric scores, in one of
CONDITIONS. Golden-rule cases keep their original text (newlines included) in the clean condition, with
gold offsets found by aligning the expected sentences to it. Two conditions lay clean text out in lines,
as files and e-mails have it, and exist only for datasets with paragraph markers (`has_paragraphs`):
`lines` puts each paragraph (`# newpar`) on a line of its own, `wrapped` also hard-wraps every line at
WRAP_WIDTH characters, so most of its line breaks fall inside sentences.

This module reads files and builds plain data; it runs no system and computes no score.

>>> load_dataset("golden-rules").documents[0].sentences
('Hello World.', 'My name is Jonas.')
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from segmenter.bench.metrics import align
from segmenter.corpus import (
    LAYOUTS,
    Document,
    corrupt_document,
    read_conllu,
    read_golden,
    read_golden_cases,
    with_line_breaks,
    wrapped,
)
from segmenter.errors import InputError

DATA_DIR = Path(__file__).resolve().parent / "data"
BUILTIN = {
    "ewt-dev": ("conllu", DATA_DIR / "ud_english_ewt" / "en_ewt-ud-dev.conllu"),
    "ewt-test": ("conllu", DATA_DIR / "ud_english_ewt" / "en_ewt-ud-test.conllu"),
    "golden-rules": ("golden", DATA_DIR / "golden_rules" / "golden_rules_en.jsonl"),
}
KINDS = ("conllu", "golden")
CONDITIONS = ("clean", "corrupt", "lines", "wrapped")
WRAP_WIDTH = 72  # characters: the classic width of e-mail and plain-text books


@dataclass(frozen=True)
class Dataset:
    """Gold documents of one spec.

    name:      the built-in name, or the file's stem for `kind:PATH` specs.
    kind:      "conllu" or "golden".
    documents: gold sentences per document (whitespace inside a sentence collapsed).
    originals: golden only: each case's original `text`, parallel to `documents`; None for conllu.
    """

    name: str
    kind: str
    path: Path
    documents: tuple[Document, ...]
    originals: tuple[str, ...] | None = None

    def head(self, limit: int | None) -> Dataset:
        """The first `limit` documents (all of them when `limit` is None)."""
        if limit is None:
            return self
        originals = None if self.originals is None else self.originals[:limit]
        return replace(self, documents=self.documents[:limit], originals=originals)


@dataclass(frozen=True)
class Item:
    """One text as the systems see it, with its gold boundaries and expected sentences."""

    id: str
    text: str
    gold: tuple[int, ...]
    sentences: tuple[str, ...]


def load_dataset(spec: str) -> Dataset:
    """Resolve `spec` (a built-in name, `conllu:PATH` or `golden:PATH`); `InputError` if it cannot be read."""
    name, kind, path = _resolve(spec)
    if kind == "conllu":
        documents, originals = tuple(read_conllu(path)), None
    else:
        documents = tuple(read_golden(path))
        originals = tuple(case["text"] for case in read_golden_cases(path))
    if not documents:
        raise InputError(f"dataset {spec!r} ({path}) has no sentences")
    return Dataset(name=name, kind=kind, path=path, documents=documents, originals=originals)


def _resolve(spec: str) -> tuple[str, str, Path]:
    if spec in BUILTIN:
        kind, path = BUILTIN[spec]
        return spec, kind, path
    kind, sep, raw_path = spec.partition(":")
    if not sep or kind not in KINDS or not raw_path:
        hint = ""
        if spec.endswith((".conllu", ".jsonl")):
            hint = f"; did you mean {'conllu' if spec.endswith('.conllu') else 'golden'}:{spec}?"
        raise InputError(
            f"unknown dataset {spec!r}: use one of {', '.join(BUILTIN)}, conllu:PATH or golden:PATH{hint}"
        )
    path = Path(raw_path).expanduser()
    if not path.is_file():
        raise InputError(f"dataset file not found: {path} (from spec {spec!r})")
    return path.stem, kind, path


def evaluation_items(dataset: Dataset, condition: str) -> list[Item]:
    """The texts, gold boundaries and expected sentences of `dataset` in `condition` (see CONDITIONS).

    clean: conllu documents are their sentences joined by one space; golden cases are their original text.
    corrupt: every sentence lowercased and stripped of punctuation, joined by one space (both kinds).
    Documents left without any sentence by corruption are dropped.
    lines: as clean, with a line break instead of the space before each paragraph (conllu only).
    wrapped: as lines, every line then hard-wrapped at WRAP_WIDTH characters (conllu only).
    """
    if condition not in CONDITIONS:
        raise InputError(f"unknown condition {condition!r}: use one of {', '.join(CONDITIONS)}")
    if condition == "corrupt":
        docs = (corrupt_document(doc) for doc in dataset.documents)
        return [_item(doc) for doc in docs if doc.sentences]
    if condition in LAYOUTS:
        if not has_paragraphs(dataset):
            raise InputError(
                f"dataset {dataset.name!r} has no paragraph markers, so no `{condition}` condition"
            )
        if condition == "lines":
            return [_item(with_line_breaks(doc)) for doc in dataset.documents]
        return [_item(wrapped(doc, WRAP_WIDTH)) for doc in dataset.documents]
    if dataset.originals is None:
        return [_item(doc) for doc in dataset.documents]
    return [_golden_item(doc, text) for doc, text in zip(dataset.documents, dataset.originals, strict=True)]


def has_paragraphs(dataset: Dataset) -> bool:
    """Whether any document of a conllu dataset has a paragraph after its first (`# newpar`)."""
    return dataset.kind == "conllu" and any(doc.paragraph_starts for doc in dataset.documents)


def _item(doc: Document) -> Item:
    return Item(doc.id, doc.text, doc.boundaries, doc.sentences)


def _golden_item(doc: Document, text: str) -> Item:
    try:
        spans = align(text, doc.sentences, strict=True)
    except ValueError as exc:
        raise InputError(f"golden case {doc.id}: expected sentences do not match its text ({exc})") from exc
    return Item(doc.id, text, tuple(start for start, _ in spans[1:]), doc.sentences)
