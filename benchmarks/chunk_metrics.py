"""Recall, precision, precision_Omega and IoU of retrieved chunks against reference excerpts.

The metric of "Evaluating Chunking Strategies for Retrieval" (Smith and Troynikov 2024), computed from
its definition (`../shared/data/chunking/README.md`), over character ranges. For one question, with E
its reference excerpts and C the chunks retrieved for it (each a corpus name and a range):

- N: the number of characters in the union of (c & e) over the retrieved chunks c of the question's
  corpus and its excerpts e;
- recall = N / sum |e|;  precision = N / sum |c| (every retrieved chunk, from any corpus);
- IoU = N / (sum |c| + the excerpt characters no retrieved chunk covers);
- precision_Omega: the same ratio as IoU over every chunk of the corpus that overlaps an excerpt, with
  no retrieval: N / (the union of those chunks and the uncovered excerpt characters).

Plain Python over (start, end) pairs; nothing here knows about embeddings or chunkers.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Range = tuple[int, int]


def merged(ranges: Iterable[Range]) -> list[Range]:
    """The union of `ranges` as sorted, disjoint, non-empty ranges."""
    out: list[list[int]] = []
    for start, end in sorted(r for r in ranges if r[1] > r[0]):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return [(start, end) for start, end in out]


def length(ranges: Iterable[Range]) -> int:
    """Characters in the union of `ranges`."""
    return sum(end - start for start, end in merged(ranges))


def intersections(chunks: Iterable[Range], excerpts: Sequence[Range]) -> list[Range]:
    """Every non-empty c & e."""
    return [
        (max(c[0], e[0]), min(c[1], e[1]))
        for c in chunks
        for e in excerpts
        if min(c[1], e[1]) > max(c[0], e[0])
    ]


def uncovered(excerpts: Sequence[Range], chunks: Iterable[Range]) -> int:
    """Excerpt characters (of their union) that no chunk covers."""
    covered = merged(chunks)
    total = length(excerpts)
    return total - length(intersections(covered, merged(excerpts)))


@dataclass(frozen=True)
class Scores:
    recall: float
    precision: float
    iou: float


def retrieval_scores(excerpts: Sequence[Range], retrieved: Sequence[tuple[bool, Range]]) -> Scores:
    """Scores of one question: `retrieved` lists (from the question's corpus?, range) per chunk."""
    own = [r for same, r in retrieved if same]
    found = length(intersections(own, excerpts))
    retrieved_length = sum(end - start for _, (start, end) in retrieved)
    excerpt_length = sum(end - start for start, end in excerpts)
    missed = uncovered(excerpts, own)
    return Scores(
        recall=found / excerpt_length if excerpt_length else 0.0,
        precision=found / retrieved_length if retrieved_length else 0.0,
        iou=found / (retrieved_length + missed) if retrieved_length + missed else 0.0,
    )


def touching(excerpts: Sequence[Range], chunks: Sequence[Range]) -> list[Range]:
    """The chunks that overlap any excerpt, in order."""
    return [c for c in chunks if any(min(c[1], e[1]) > max(c[0], e[0]) for e in excerpts)]


def precision_omega(excerpts: Sequence[Range], chunks: Sequence[Range]) -> float:
    """N over the union of every chunk touching an excerpt and the excerpt characters none covers."""
    near = touching(excerpts, chunks)
    found = length(intersections(near, excerpts))
    denominator = length(near) + uncovered(excerpts, near)
    return found / denominator if denominator else 0.0
