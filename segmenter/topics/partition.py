"""Cut a sequence of sentence vectors into contiguous sections: exact dynamic programming, or depth scores.

`optimal_partition` is the method `segmenter.topics.segmenter` uses: it minimises the within-section squared
distance of the vectors to their section's mean (contiguous k-means), exactly, by dynamic programming
over every cut. With the number of sections given it finds the best partition into that many; without
it, each section costs a penalty (`penalty` times the text's mean squared distance to its overall
mean), so a section pays for itself only where it lowers the dispersion by more than that. Minimum and
maximum section lengths are constraints of the same program, so they hold exactly.
`depth_boundaries` is the TextTiling-style alternative (Hearst 1997): the cosine between the mean
vectors of the `window` sentences on either side of each gap, and each gap's depth below the peaks
around it; it was measured against `optimal_partition` when the method was chosen
(`benchmarks/results/topics-selection`).

No library offers a length-constrained exact partition of a vector sequence (ruptures' `Dynp` takes
no maximum length and recomputes costs per segment), so the program is written here: the squared
distance of any section follows from prefix sums in O(D), so the program costs O(n * w * D) time (times
the number of sections when it is given), w being the widest section allowed (n without a maximum),
and O(n * D) memory for the prefix sums.

Pure numpy; this module knows nothing about text, encoders or spans.
"""

from __future__ import annotations

import numpy as np


def section_costs(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Prefix sums for `cost`: (n+1,) cumulative squared norms and (n+1, D) cumulative vectors."""
    x = np.asarray(vectors, dtype=np.float64)  # (n, D)
    norms = np.concatenate([[0.0], np.cumsum(np.einsum("nd,nd->n", x, x))])  # (n+1,)
    sums = np.concatenate([np.zeros((1, x.shape[1])), np.cumsum(x, axis=0)])  # (n+1, D)
    return norms, sums


class _Costs:
    """Squared distance of the vectors [start, end) to their mean, for a run of starts at once:
    norms[end] - norms[start] - |sums[end] - sums[start]|^2 / (end - start), the squared norm expanded
    so that one matrix-vector product over a slice of the prefix sums does the work."""

    def __init__(self, vectors: np.ndarray):
        self.norms, self.sums = section_costs(vectors)  # (n+1,), (n+1, D)
        self.squares = np.einsum("nd,nd->n", self.sums, self.sums)  # (n+1,) |sums[i]|^2

    def ending_at(self, end: int, first: int, last: int) -> np.ndarray:
        """(last - first + 1,) costs of the sections [start, end) for start = first..last."""
        starts = slice(first, last + 1)
        cross = self.sums[starts] @ self.sums[end]  # (S,) a view of the prefix sums, one gemv
        between = self.squares[end] + self.squares[starts] - 2.0 * cross  # (S,) |sums[end] - sums[start]|^2
        length = np.arange(end - first, end - last - 1, -1, dtype=np.float64)  # (S,)
        return self.norms[end] - self.norms[starts] - np.maximum(between, 0.0) / length


def optimal_partition(
    vectors: np.ndarray,
    n_sections: int | None = None,
    penalty: float = 1.0,
    min_length: int = 1,
    max_length: int | None = None,
) -> list[int]:
    """Start indices (after 0, ascending) of the sections of `vectors` (n, D) with the least total
    within-section squared distance; `n_sections` of them if given (clipped to what the lengths allow),
    else as many as pay for their `penalty`. Every section has min_length..max_length vectors; where the
    lengths cannot all hold (n < min_length) the whole sequence is one section."""
    n = len(vectors)
    if n == 0:
        return []
    max_length = n if max_length is None else max(1, min(max_length, n))
    min_length = max(1, min(min_length, max_length))
    if n < min_length:
        return []
    fewest = -(-n // max_length)  # ceil: sections needed to respect max_length
    most = n // min_length
    if fewest > most:  # no partition satisfies both lengths: honour the maximum
        min_length, most = 1, n
    costs = _Costs(vectors)
    if n_sections is not None:
        wanted = int(np.clip(n_sections, fewest, most))
        return _fixed(costs, n, wanted, min_length, max_length)
    spread = (costs.norms[n] - costs.squares[n] / n) / n  # mean squared distance to the overall mean
    return _penalised(costs, n, max(penalty, 0.0) * max(spread, 1e-12), min_length, max_length)


def _fixed(costs: _Costs, n: int, sections: int, min_length: int, max_length: int) -> list[int]:
    """Exactly `sections` sections: best[k][j] = least cost of the first j vectors in k sections."""
    best = np.full((sections + 1, n + 1), np.inf)
    best[0, 0] = 0.0
    back = np.zeros((sections + 1, n + 1), dtype=np.int64)
    for k in range(1, sections + 1):
        for end in range(k * min_length, n + 1):
            first, last = max(0, end - max_length), end - min_length
            if last < first:
                continue
            total = best[k - 1, first : last + 1] + costs.ending_at(end, first, last)
            pick = int(np.argmin(total))
            best[k, end], back[k, end] = total[pick], first + pick
    cuts, end = [], n
    for k in range(sections, 0, -1):
        end = int(back[k, end])
        cuts.append(end)
    return sorted(cut for cut in cuts if cut > 0)


def _penalised(costs: _Costs, n: int, penalty: float, min_length: int, max_length: int) -> list[int]:
    """Any number of sections, each costing `penalty` on top of its squared distance."""
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    back = np.zeros(n + 1, dtype=np.int64)
    for end in range(min_length, n + 1):
        first, last = max(0, end - max_length), end - min_length
        total = best[first : last + 1] + costs.ending_at(end, first, last) + penalty
        pick = int(np.argmin(total))
        best[end], back[end] = total[pick], first + pick
    cuts, end = [], n
    while end > 0:
        end = int(back[end])
        cuts.append(end)
    return sorted(cut for cut in cuts if cut > 0)


def gap_similarity(vectors: np.ndarray, window: int = 3) -> np.ndarray:
    """(n-1,) cosine between the mean vector of up to `window` vectors before each gap and after it."""
    x = np.asarray(vectors, dtype=np.float64)  # (n, D)
    n = len(x)
    if n < 2:
        return np.zeros(0)
    sums = np.concatenate([np.zeros((1, x.shape[1])), np.cumsum(x, axis=0)])  # (n+1, D)
    gaps = np.arange(1, n)  # gap g sits before vector g
    left = sums[gaps] - sums[np.maximum(gaps - window, 0)]  # (n-1, D)
    right = sums[np.minimum(gaps + window, n)] - sums[gaps]
    denominator = np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1)
    return np.einsum("gd,gd->g", left, right) / np.maximum(denominator, 1e-12)


def depth_scores(similarity: np.ndarray) -> np.ndarray:
    """(G,) TextTiling depth of each gap: how far its similarity lies below the highest similarity
    reached climbing left and right from it (each side's climb stops where the curve turns down)."""
    g = len(similarity)
    depth = np.zeros(g)
    for i in range(g):
        left = i
        while left > 0 and similarity[left - 1] >= similarity[left]:
            left -= 1
        right = i
        while right < g - 1 and similarity[right + 1] >= similarity[right]:
            right += 1
        depth[i] = (similarity[left] - similarity[i]) + (similarity[right] - similarity[i])
    return depth


def depth_boundaries(
    vectors: np.ndarray, n_sections: int | None = None, cutoff: float = 0.5, window: int = 3
) -> list[int]:
    """Section starts at the deepest gaps of `gap_similarity`: the `n_sections - 1` deepest if given,
    else every gap deeper than mean + cutoff * std of the depths (local maxima of depth only)."""
    depth = depth_scores(gap_similarity(vectors, window))  # (n-1,)
    if len(depth) == 0:
        return []
    peaks = [
        i
        for i in range(len(depth))
        if depth[i] > 0
        and (i == 0 or depth[i] >= depth[i - 1])
        and (i == len(depth) - 1 or depth[i] > depth[i + 1])
    ]
    if n_sections is not None:
        chosen = sorted(peaks, key=lambda i: -depth[i])[: max(n_sections - 1, 0)]
    else:
        threshold = depth.mean() + cutoff * depth.std()
        chosen = [i for i in peaks if depth[i] > threshold]
    return sorted(i + 1 for i in chosen)
