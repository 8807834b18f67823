"""Pk (Beeferman et al. 1999) and WindowDiff (Pevzner and Hearst 2002) of topic boundaries, through NLTK.

A segmentation of n units (sentences or words) is given as the ascending indices of the units that
open a section (after unit 0). NLTK's `nltk.metrics.segmentation.pk` and `windowdiff` read strings of
n characters with "1" on each unit that ends a section (so the last unit is never marked); both get the
same window k: half the mean length of the reference's sections, rounded, at least 1 (the usual
choice, and NLTK's own default for pk). Lower is better; 0 is a perfect segmentation.

>>> scores([2], [3], 4)  # 0-1 | 2-3 against 0-2 | 3: "0100" vs "0010", k = 1, 2 of 4 windows differ
(0.5, 0.5)
"""

from __future__ import annotations

from collections.abc import Sequence


def boundary_string(starts: Sequence[int], n: int) -> str:
    """ "1" on each of `n` units after which a section in `starts` opens, "0" elsewhere."""
    marks = ["0"] * n
    for start in starts:
        if not 0 < start < n:
            raise ValueError(f"section start {start} is outside 1..{n - 1}")
        marks[start - 1] = "1"
    return "".join(marks)


def window_size(reference: Sequence[int], n: int) -> int:
    """Half the mean length of the reference's sections, rounded, at least 1."""
    return max(1, round(n / (len(set(reference)) + 1) / 2))


def scores(reference: Sequence[int], hypothesis: Sequence[int], n: int) -> tuple[float, float]:
    """(Pk, WindowDiff) of `hypothesis` against `reference`, both section starts over `n` units."""
    from nltk.metrics.segmentation import pk, windowdiff

    if n < 2:
        return 0.0, 0.0
    ref, hyp = boundary_string(reference, n), boundary_string(hypothesis, n)
    k = window_size(reference, n)
    if k >= n:  # one window covers everything: no errors can be told apart
        k = n - 1
    return float(pk(ref, hyp, k=k)), float(windowdiff(ref, hyp, k))
