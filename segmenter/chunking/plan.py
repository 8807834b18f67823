"""Where to cut a run of pieces into chunks: exact dynamic programming over every cut within the budget.

A chunk of pieces [a, b) costs
    PENALTY x spread                          (each chunk: fewer chunks, fuller ones, are cheaper)
  + the squared distance of its piece vectors to their mean   (with topics: one topic per chunk)
  - PARAGRAPH x spread, if piece a opens a paragraph or section (cut where the author did)
  + SHORT x spread, if it holds fewer than min_tokens tokens, or if it ends with a markdown heading
    (each only where the budget leaves no choice)
where `spread` is the mean squared distance of the text's piece vectors to their mean (1 without
vectors), so the weights mean the same in every text. The program finds the cuts of least total cost
such that every chunk's summed piece tokens fit the budget, in O(n * w * D) time for n pieces, at most
w of them per chunk and D dimensions. It reuses the topic partition's prefix-sum costs
(`segmenter.topics.partition`); pure numpy, nothing here knows about text.
"""

from __future__ import annotations

import numpy as np

from segmenter.topics.partition import _Costs

# Chosen on the four shared chunking corpora (benchmarks/results/chunks-selection: round 2 of the rule)
PENALTY = 2.0
PARAGRAPH = 0.0
SHORT = 1000.0


def plan_chunks(
    tokens: np.ndarray,
    budget: int,
    vectors: np.ndarray | None = None,
    paragraph: np.ndarray | None = None,
    min_tokens: int = 0,
    heading: np.ndarray | None = None,
) -> list[int]:
    """Indices (after 0, ascending) of the pieces that open a chunk, for pieces of `tokens` (n,) counts
    (each within `budget`), optional unit `vectors` (n, D), `paragraph` (n,) and `heading` (n,) flags."""
    n = len(tokens)
    if n == 0:
        return []
    total = np.concatenate([[0], np.cumsum(np.asarray(tokens, dtype=np.int64))])  # (n+1,)
    opens = np.zeros(n, dtype=bool) if paragraph is None else np.asarray(paragraph, dtype=bool)  # (n,)
    costs = _Costs(vectors) if vectors is not None else None
    spread = 1.0
    if costs is not None:
        spread = max(float(costs.norms[n] - costs.squares[n] / n) / n, 1e-6)
    start_cost = (PENALTY - PARAGRAPH * opens) * spread  # (n,) of a chunk opening at each piece
    if heading is not None:  # a chunk opening right after a heading leaves the heading at the end of one
        start_cost[1:] += SHORT * spread * np.asarray(heading, dtype=bool)[:-1]
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    back = np.zeros(n + 1, dtype=np.int64)
    for end in range(1, n + 1):
        first = min(int(np.searchsorted(total, total[end] - budget, side="left")), end - 1)
        total_cost = best[first:end] + start_cost[first:end]  # (w,)
        if costs is not None:
            total_cost = total_cost + costs.ending_at(end, first, end - 1)
        if min_tokens:
            total_cost = total_cost + SHORT * spread * (total[end] - total[first:end] < min_tokens)
        pick = int(np.argmin(total_cost))
        best[end], back[end] = total_cost[pick], first + pick
    starts, end = [], n
    while end > 0:
        end = int(back[end])
        starts.append(end)
    return sorted(starts)[1:]
