"""Dataset specs: resolve a spec string to gold documents, for `segmenter train`, `segmenter analyze` and
the benchmark harness alike.

Specs: `conllu:PATH` (documents from `# newdoc`, sentences from `# text`; no markers -> groups of 10),
`golden:PATH` (JSONL with `text` and `sentences`), `realworld:PATH` (JSONL with `text`, `family` and
gold `boundaries`: docs/annotation.md), or a built-in name: `ewt-dev`, `ewt-test`, `golden-rules`,
`realworld-dev`, `realworld-test`. The built-in copies, with their licences, ship in the `data/` folder
of the benchmark harness package (`segmenter.bench`, the repository's `benchmarks/` folder); this module
finds that folder without importing the harness, which depends on the library and never the other way
round.

This module reads files and builds plain data. Turning a dataset into benchmark inputs (conditions,
layouts, golden-rule offsets) is the harness's job (`segmenter.bench.datasets`).

>>> load_dataset("golden-rules").documents[0].sentences
('Hello World.', 'My name is Jonas.')
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, replace
from pathlib import Path

from segmenter.errors import InputError
from segmenter.gold.corpus import (
    Document,
    RealDocument,
    read_conllu,
    read_golden,
    read_golden_cases,
    read_realworld,
)

HARNESS_PACKAGE = "segmenter.bench"
KINDS = ("conllu", "golden", "realworld")


def harness_data_dir() -> Path:
    """The harness package's `data/` folder, wherever the install put the package (a wheel: beside this
    module; an editable install: the checkout's `benchmarks/`), found without running its code."""
    spec = importlib.util.find_spec(HARNESS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return Path(__file__).resolve().parents[1] / "bench" / "data"  # where a wheel puts it
    return Path(spec.submodule_search_locations[0]).resolve() / "data"


DATA_DIR = harness_data_dir()
BUILTIN = {
    "ewt-dev": ("conllu", DATA_DIR / "ud_english_ewt" / "en_ewt-ud-dev.conllu"),
    "ewt-test": ("conllu", DATA_DIR / "ud_english_ewt" / "en_ewt-ud-test.conllu"),
    "golden-rules": ("golden", DATA_DIR / "golden_rules" / "golden_rules_en.jsonl"),
    "realworld-dev": ("realworld", DATA_DIR / "realworld" / "dev.jsonl"),
    "realworld-test": ("realworld", DATA_DIR / "realworld" / "test.jsonl"),
}


@dataclass(frozen=True)
class Dataset:
    """Gold documents of one spec.

    name:      the built-in name, or the file's stem for `kind:PATH` specs.
    kind:      "conllu" or "golden".
    documents: gold sentences per document (whitespace inside a sentence collapsed).
    originals: golden and realworld: each case's original `text`, parallel to `documents`; None for conllu.
    real:      realworld only: the documents with their families and gold offsets, parallel to `documents`.
    """

    name: str
    kind: str
    path: Path
    documents: tuple[Document, ...]
    originals: tuple[str, ...] | None = None
    real: tuple[RealDocument, ...] | None = None

    def head(self, limit: int | None) -> Dataset:
        """The first `limit` documents (all of them when `limit` is None)."""
        if limit is None:
            return self
        originals = None if self.originals is None else self.originals[:limit]
        real = None if self.real is None else self.real[:limit]
        return replace(self, documents=self.documents[:limit], originals=originals, real=real)


def load_dataset(spec: str) -> Dataset:
    """Resolve `spec` (a built-in name, `conllu:PATH` or `golden:PATH`); `InputError` if it cannot be read."""
    name, kind, path = _resolve(spec)
    real = None
    if kind == "conllu":
        documents, originals = tuple(read_conllu(path)), None
    elif kind == "realworld":
        real = tuple(read_realworld(path))
        documents = tuple(Document(doc.id, tuple(" ".join(s.split()) for s in doc.segments)) for doc in real)
        originals = tuple(doc.text for doc in real)
    else:
        documents = tuple(read_golden(path))
        originals = tuple(case["text"] for case in read_golden_cases(path))
    if not documents:
        raise InputError(f"dataset {spec!r} ({path}) has no sentences")
    return Dataset(name=name, kind=kind, path=path, documents=documents, originals=originals, real=real)


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
            f"unknown dataset {spec!r}: use one of {', '.join(BUILTIN)}, conllu:PATH, golden:PATH or "
            f"realworld:PATH{hint}"
        )
    path = Path(raw_path).expanduser()
    if not path.is_file():
        raise InputError(f"dataset file not found: {path} (from spec {spec!r})")
    return path.stem, kind, path
