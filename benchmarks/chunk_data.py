"""The retrieval-chunking evaluation's data: corpora and questions with their reference excerpts.

A folder in the layout of `../shared/data/chunking` (Smith and Troynikov 2024, "Evaluating Chunking
Strategies for Retrieval"): `corpora/NAME.md` (one text per corpus) and `questions.csv` with the
columns `question`, `references` (a JSON list of `{content, start_index, end_index}`: character
offsets into the corpus) and `corpus_id` (NAME). Every reference is checked against its corpus when
read, so a misplaced excerpt fails loudly here rather than scoring as a miss.

Reads files and builds plain data; nothing is chunked, embedded or scored here.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Question:
    """A question, the corpus it is about, and its reference excerpts as (start, end) offsets."""

    text: str
    corpus: str
    references: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class ChunkingData:
    """Corpus texts by name, and the questions in file order."""

    corpora: dict[str, str]
    questions: tuple[Question, ...]


def read_chunking(folder: str | Path) -> ChunkingData:
    """The corpora and questions under `folder`; ValueError naming the row where a reference does not
    match its corpus or names a corpus that is not there."""
    root = Path(folder)
    corpora = {
        path.stem: path.read_text(encoding="utf-8") for path in sorted((root / "corpora").glob("*.md"))
    }
    if not corpora:
        raise FileNotFoundError(f"no corpora/*.md under {root}")
    questions = []
    with open(root / "questions.csv", encoding="utf-8", newline="") as handle:
        for row_number, row in enumerate(csv.DictReader(handle), 2):  # row 1 is the header
            corpus = row["corpus_id"]
            if corpus not in corpora:
                raise ValueError(f"questions.csv row {row_number}: unknown corpus {corpus!r}")
            references = []
            for reference in json.loads(row["references"]):
                start, end = int(reference["start_index"]), int(reference["end_index"])
                if corpora[corpus][start:end] != reference["content"]:
                    raise ValueError(
                        f"questions.csv row {row_number}: reference {start}-{end} does not match"
                    )
                references.append((start, end))
            questions.append(Question(row["question"], corpus, tuple(references)))
    return ChunkingData(corpora, tuple(questions))
