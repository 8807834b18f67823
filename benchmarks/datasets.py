"""Benchmark inputs: a gold dataset turned into the texts the systems read, in one of CONDITIONS.

Dataset specs (`conllu:PATH`, `golden:PATH`, the built-in names, whose copies ship in `data/` here with
their licences) are resolved by the library's `segmenter.gold.specs`; `load_dataset`, `Dataset`, `BUILTIN`,
`KINDS` and `DATA_DIR` are re-exported from it, so harness code and scripts keep importing them here.

`evaluation_items` turns a dataset into what the systems read and the metric scores, in one of
CONDITIONS. Golden-rule cases keep their original text (newlines included) in the clean condition, with
gold offsets found by aligning the expected sentences to it. Two conditions lay clean text out in lines,
as files and e-mails have it, and exist only for datasets with paragraph markers (`has_paragraphs`):
Real documents (`realworld-dev`, `realworld-test`) are read as written only (clean), each item with
its family. `lines` puts each paragraph (`# newpar`) on a line of its own, `wrapped` also hard-wraps
every line at WRAP_WIDTH characters, so most of its line breaks fall inside sentences.

This module builds plain data; it runs no system and computes no score.

>>> load_dataset("golden-rules").documents[0].sentences
('Hello World.', 'My name is Jonas.')
"""

from __future__ import annotations

from dataclasses import dataclass

from segmenter.bench.metrics import align
from segmenter.errors import InputError
from segmenter.gold.corpus import LAYOUTS, Document, corrupt_document, with_line_breaks, wrapped
from segmenter.gold.specs import BUILTIN, DATA_DIR, KINDS, Dataset, load_dataset

__all__ = [
    "BUILTIN",
    "CONDITIONS",
    "DATA_DIR",
    "KINDS",
    "LAYOUTS",
    "WRAP_WIDTH",
    "Dataset",
    "Item",
    "evaluation_items",
    "has_condition",
    "has_paragraphs",
    "load_dataset",
]

CONDITIONS = ("clean", "corrupt", "lines", "wrapped")
WRAP_WIDTH = 72  # characters: the classic width of e-mail and plain-text books


@dataclass(frozen=True)
class Item:
    """One text as the systems see it, with its gold boundaries and expected sentences."""

    id: str
    text: str
    gold: tuple[int, ...]
    sentences: tuple[str, ...]
    family: str | None = None  # realworld only: the document's family (e-mail, markdown, ...)


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
    if dataset.real is not None:
        if condition != "clean":
            raise InputError(
                f"dataset {dataset.name!r} is real documents as written: only the clean condition"
            )
        return [Item(doc.id, doc.text, doc.boundaries, doc.segments, doc.family) for doc in dataset.real]
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


def has_condition(dataset: Dataset, condition: str) -> bool:
    """Whether `dataset` can be read in `condition`: real documents only as written (clean); the line
    layouts only where a conllu dataset has paragraph markers."""
    if dataset.real is not None:
        return condition == "clean"
    return condition not in LAYOUTS or has_paragraphs(dataset)


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
