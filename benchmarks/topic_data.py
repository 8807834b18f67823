"""Gold data for the topic benchmark: Choi (2000) set 1, Choi-style concatenations of UD documents, and
the topic corpus of real documents (`data/topics/`, sections marked by their authors).

`read_choi(folder)` reads `N.ref` files (one sentence per line, sections separated by "=========="):
documents given as sentences, sections as the indices of the sentences that open them.
`ud_concatenations` builds the real-text task as Choi built his (ten sections a sample, each a run of
3-11 sentences of a randomly drawn document), from UD documents: a section is a run of n consecutive
sentences (n uniform in 3-11, fewer when the document is shorter) from a random start in a document
drawn without replacement within the sample, with a fixed seed. A sample is raw text, its sentences
joined by single spaces; gold boundaries are the character offsets where its sections start, so a
system reads it end to end and sentence errors count.

Reads files and builds plain data; no system runs here and nothing is scored.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path

from segmenter.gold.corpus import read_conllu

SEPARATOR = "=========="
CHOI_SUBSETS = ("3-5", "6-8", "9-11", "3-11")
UD_TEST_FILES = ("UD_English-EWT/en_ewt-ud-test.conllu", "UD_English-LinES/en_lines-ud-test.conllu")


def data_dir(folder: str | Path | None = None) -> Path:
    """The gold data folder: `folder`, else $SEGMENTER_DATA, else ../shared/data next to the project."""
    default = Path(__file__).resolve().parents[1].parent / "shared" / "data"
    return Path(folder or os.environ.get("SEGMENTER_DATA") or default).expanduser()


@dataclass(frozen=True)
class SentenceDocument:
    """A document given as sentences; `starts`: indices (> 0) of the sentences that open a section."""

    id: str
    sentences: tuple[str, ...]
    starts: tuple[int, ...]


@dataclass(frozen=True)
class RawDocument:
    """A raw text; `starts`: character offsets (> 0) where its sections begin."""

    id: str
    text: str
    starts: tuple[int, ...]
    genre: str = ""


TOPIC_GENRES = ("articles", "book", "meetings")


def topic_corpus_file(split: str) -> Path:
    """The topic corpus's `split` file ("dev" or "test"), shipped beside this module."""
    if split not in ("dev", "test"):
        raise ValueError(f"split must be 'dev' or 'test', got {split!r}")
    return Path(__file__).resolve().parent / "data" / "topics" / f"{split}.jsonl"


def read_topic_corpus(path: str | Path) -> list[RawDocument]:
    """Documents of a topic-corpus JSON-lines file (docs in `data/topics/README.md`); lines split on "\\n"
    only, so text holding U+2028 and the like reads as written."""
    docs = []
    with open(path, encoding="utf-8", newline="") as handle:
        for number, line in enumerate(handle.read().split("\n"), 1):
            if not line.strip():
                continue
            record = json.loads(line)
            text, starts = record["text"], tuple(record["starts"])
            if list(starts) != sorted(set(starts)) or not all(0 < s < len(text) for s in starts):
                raise ValueError(f"{path}:{number}: starts must ascend inside the text")
            docs.append(RawDocument(record["id"], text, starts, record["genre"]))
    return docs


def read_choi_file(path: Path) -> SentenceDocument:
    """One Choi `.ref` file; lines are stripped and blank lines skipped."""
    sentences: list[str] = []
    starts: list[int] = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if line == SEPARATOR:
            if sentences and (not starts or starts[-1] != len(sentences)):
                starts.append(len(sentences))
        elif line:
            sentences.append(line)
    starts = [s for s in starts if 0 < s < len(sentences)]
    return SentenceDocument(f"{path.parent.name}/{path.stem}", tuple(sentences), tuple(starts))


def read_choi(subset: str, data: Path) -> list[SentenceDocument]:
    """The documents of Choi set 1 `subset` (e.g. "3-5") under the data folder `data`, by file number."""
    folder = data / "choi2000" / "1" / subset
    files = sorted(folder.glob("*.ref"), key=lambda p: int(p.stem))
    if not files:
        raise FileNotFoundError(f"no Choi .ref files in {folder}")
    return [read_choi_file(path) for path in files]


def ud_concatenations(
    data: Path, files=UD_TEST_FILES, samples: int = 100, sections: int = 10, lengths=(3, 11), seed: int = 0
) -> list[RawDocument]:
    """`samples` raw texts of `sections` sections each, drawn from the documents of `files` (paths
    under `data`/ud) that have at least lengths[0] sentences."""
    pool = [
        doc.sentences
        for name in files
        for doc in read_conllu(data / "ud" / name)
        if len(doc.sentences) >= lengths[0]
    ]
    rng = random.Random(seed)
    out = []
    for number in range(samples):
        parts: list[str] = []
        starts: list[int] = []
        offset = 0
        for sentences in rng.sample(pool, sections):
            n = min(rng.randint(*lengths), len(sentences))
            first = rng.randint(0, len(sentences) - n)
            text = " ".join(sentences[first : first + n])
            if parts:
                offset += 1  # the joining space
                starts.append(offset)
            parts.append(text)
            offset += len(text)
        out.append(RawDocument(f"ud-{number}", " ".join(parts), tuple(starts)))
    return out
