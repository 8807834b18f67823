"""C99 (Choi 2000, "Advances in domain independent linear text segmentation", NAACL), a topic baseline.

The algorithm of the paper, section 2: each sentence is a bag of stemmed words without stopwords; the
cosine similarity matrix of the sentences is replaced by its local ranks (each cell becomes the share of
the other cells in an 11 x 11 mask around it with a lower similarity), and divisive clustering then
splits the text, one boundary at a time, where the split most raises the inside density
D = sum of the ranks inside the sections' squares / sum of their areas. Without a number of sections,
the text is split down to single sentences and the splits kept are those up to the last one whose gain
in D reaches mean + 1.2 * std of all the gains (the paper's threshold mu + c * sqrt(v), c = 1.2; the
paper does not say which step to stop at when the gains do not fall monotonically, this reading keeps
every sharp gain).

No maintained Python package ships C99 (it lives in papers and small scripts), so it is written here
from the paper. Stopwords are scikit-learn's English list and stems NLTK's Porter stemmer, as NLTK's
stopword corpus needs a download. Words in, section start indices out; no scoring here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

MASK = 11  # the paper's ranking mask (11 x 11)
STOP_COEFFICIENT = 1.2  # the paper's c in mean + c * std
_WORD = re.compile(r"[^\W\d_]+")


def sentence_bags(sentences: Sequence[str]) -> list[Counter]:
    """Stemmed content words of each sentence, counted."""
    from nltk.stem import PorterStemmer
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    stem = PorterStemmer().stem
    return [
        Counter(stem(w) for w in _WORD.findall(s.lower()) if w not in ENGLISH_STOP_WORDS) for s in sentences
    ]


def similarity_matrix(bags: Sequence[Counter]) -> np.ndarray:
    """(n, n) cosine similarity of the bags (0 where a bag is empty)."""
    vocabulary = {w: i for i, w in enumerate(sorted({w for bag in bags for w in bag}))}
    counts = np.zeros((len(bags), max(len(vocabulary), 1)))  # (n, V)
    for row, bag in enumerate(bags):
        for word, count in bag.items():
            counts[row, vocabulary[word]] = count
    norms = np.linalg.norm(counts, axis=1)
    unit = counts / np.where(norms > 0, norms, 1.0)[:, None]
    return unit @ unit.T


def rank_matrix(similarity: np.ndarray, mask: int = MASK) -> np.ndarray:
    """(n, n) local ranks: per cell, the share of the other cells of the mask around it (clipped at the
    matrix's edges) whose similarity is lower."""
    n = len(similarity)
    half = mask // 2
    padded = np.full((n + 2 * half, n + 2 * half), np.nan)  # NaN outside: never lower, never counted
    padded[half : half + n, half : half + n] = similarity
    lower = np.zeros((n, n))
    others = np.zeros((n, n))
    for di in range(-half, half + 1):
        for dj in range(-half, half + 1):
            if di == 0 and dj == 0:
                continue
            shifted = padded[half + di : half + di + n, half + dj : half + dj + n]  # (n, n)
            others += ~np.isnan(shifted)
            lower += shifted < similarity  # NaN compares False
    return np.divide(lower, others, out=np.zeros((n, n)), where=others > 0)


def divisive_boundaries(rank: np.ndarray, n_sections: int | None = None) -> list[int]:
    """Section starts (ascending, after 0) from divisive clustering of the rank matrix (n, n)."""
    n = len(rank)
    if n < 2:
        return []
    area_sum = np.zeros((n + 1, n + 1))  # 2-D prefix sums: block sums of rank in O(1)
    area_sum[1:, 1:] = rank.cumsum(0).cumsum(1)

    def inside(a: int, b: int) -> float:  # sum of rank over the square [a, b) x [a, b)
        return area_sum[b, b] - area_sum[a, b] - area_sum[b, a] + area_sum[a, a]

    sections = [(0, n)]
    total_sum, total_area = inside(0, n), float(n * n)
    densities = [total_sum / total_area]
    history: list[list[int]] = [[]]
    most = n if n_sections is None else min(n_sections, n)
    while len(sections) < most:
        best = None
        for index, (a, b) in enumerate(sections):
            for cut in range(a + 1, b):
                s = total_sum - inside(a, b) + inside(a, cut) + inside(cut, b)
                area = total_area - (b - a) ** 2 + (cut - a) ** 2 + (b - cut) ** 2
                if best is None or s / area > best[0]:
                    best = (s / area, index, cut, s, area)
        if best is None:
            break
        density, index, cut, total_sum, total_area = best
        a, b = sections.pop(index)
        sections[index:index] = [(a, cut), (cut, b)]
        densities.append(density)
        history.append(sorted(start for start, _ in sections[1:]))
    if n_sections is not None:
        return history[-1]
    gains = np.diff(densities)  # gain of each split: gains[m - 1] is the m-th boundary's
    if len(gains) == 0:
        return []
    threshold = gains.mean() + STOP_COEFFICIENT * gains.std()
    above = np.nonzero(gains >= threshold)[0]
    return history[int(above[-1]) + 1] if len(above) else []


def c99(sentences: Sequence[str], n_sections: int | None = None, mask: int = MASK) -> list[int]:
    """Start indices (after 0) of C99's sections of `sentences`."""
    return divisive_boundaries(rank_matrix(similarity_matrix(sentence_bags(sentences)), mask), n_sections)
