"""Boundary metrics: exact-offset precision, recall and F1 (micro-averaged), and golden-rule exact match.

A boundary is the character offset where a sentence after the first starts. A predicted boundary is first
moved forward over whitespace (a splitter that cuts before the space and one that cuts after it mean the
same boundary); offsets that then sit at the start or end of the text (no text before or after them) are
not boundaries. A predicted boundary counts only if it lands exactly on a gold one.

A gold boundary is "marked" when sentence-final punctuation (then optionally closing quotes or brackets)
ends the text before it (`segmenter.gold.corpus.is_marked`), and "unmarked" otherwise ("Thanks John || See
you", "a list: || next"). Recall at unmarked boundaries (`unmarked_counts`) is what a punctuation rule
cannot reach even on clean text.

This module also maps sentence strings back to character offsets (`align`), which the gold data of
golden rules and the splitters that return strings both need. It knows nothing about systems or files.

>>> text = "Hi there. Bye now."
>>> score(text, gold=[10], predicted=[9])          # the cut before the space is the same boundary
Counts(tp=1, fp=0, fn=0)
>>> score(text, gold=[10], predicted=[11]).f1      # one character off is wrong
0.0
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from segmenter.gold.corpus import is_marked


@dataclass(frozen=True)
class Counts:
    """True positives, false positives and false negatives, summed over documents with `+`."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    @property
    def precision(self) -> float:
        """tp / (tp + fp); 0.0 when nothing was predicted (scikit-learn's zero_division=0)."""
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float:
        """tp / (tp + fn); 0.0 when there is no gold boundary."""
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else 0.0


def normalize(text: str, offsets: Iterable[int]) -> tuple[int, ...]:
    """Sorted, de-duplicated boundaries: each offset moved forward over whitespace, edges dropped.

    >>> normalize("A b.  C d.", [4, 5, 6, 0, 10])
    (6,)
    """
    first = _first_content(text)
    boundaries = set()
    for offset in offsets:
        if not 0 <= offset <= len(text):
            raise ValueError(f"boundary {offset} is outside a text of {len(text)} characters")
        while offset < len(text) and text[offset].isspace():
            offset += 1
        if first < offset < len(text):
            boundaries.add(offset)
    return tuple(sorted(boundaries))


def _first_content(text: str) -> int:
    """Index of the first non-whitespace character (len(text) if there is none)."""
    return next((i for i, char in enumerate(text) if not char.isspace()), len(text))


def score(text: str, gold: Iterable[int], predicted: Iterable[int]) -> Counts:
    """Counts for one document; both gold and predicted offsets are normalized first."""
    gold_set = set(normalize(text, gold))
    predicted_set = set(normalize(text, predicted))
    tp = len(gold_set & predicted_set)
    return Counts(tp=tp, fp=len(predicted_set) - tp, fn=len(gold_set) - tp)


def unmarked_counts(text: str, gold: Iterable[int], predicted: Iterable[int]) -> Counts:
    """`score` restricted to the unmarked gold boundaries: tp and fn only (fp is always 0).

    >>> unmarked_counts("Hi all Bye. Now", gold=[7, 12], predicted=[7, 12])
    Counts(tp=1, fp=0, fn=0)
    """
    gold_set = {b for b in normalize(text, gold) if not is_marked(text, b)}
    tp = len(gold_set & set(normalize(text, predicted)))
    return Counts(tp=tp, fn=len(gold_set) - tp)


def sentences_at(text: str, boundaries: Iterable[int]) -> list[str]:
    """The text cut at `boundaries`, each piece stripped with inner whitespace collapsed; empties dropped.

    >>> sentences_at("One.  Two\\nthree. ", [6])
    ['One.', 'Two three.']
    """
    cuts = [0, *normalize(text, boundaries), len(text)]
    pieces = (" ".join(text[a:b].split()) for a, b in zip(cuts, cuts[1:], strict=False))
    return [piece for piece in pieces if piece]


def exact_match(text: str, predicted: Iterable[int], expected: Sequence[str]) -> bool:
    """True when the predicted sentences equal the expected ones after stripping (whitespace-insensitive)."""
    wanted = [" ".join(sentence.split()) for sentence in expected]
    return sentences_at(text, predicted) == [sentence for sentence in wanted if sentence]


def align(text: str, sentences: Sequence[str], strict: bool = False) -> list[tuple[int, int]]:
    """Character spans of `sentences` in `text`, found in order and ignoring whitespace.

    Each sentence is looked for right after the previous one (then further on). A sentence that does not
    occur (the splitter changed characters, not just whitespace) raises `ValueError` when `strict`, and
    otherwise is assumed to cover as many non-space characters as it has, so no boundary is lost.

    >>> align("Hello  World.\\nMy name", ["Hello World.", "My name"])
    [(0, 13), (14, 21)]
    """
    positions = [i for i, char in enumerate(text) if not char.isspace()]
    compact = "".join(text[i] for i in positions)
    spans, cursor = [], 0
    for sentence in sentences:
        needle = "".join(sentence.split())
        if not needle:
            continue
        found = cursor if compact.startswith(needle, cursor) else compact.find(needle, cursor)
        if found < 0:
            if strict:
                raise ValueError(f"sentence not found in order in the text: {sentence[:60]!r}")
            found = min(cursor, len(compact))
        end = min(found + len(needle), len(compact))
        if end > found:
            spans.append((positions[found], positions[end - 1] + 1))
        cursor = end
    return spans


def boundaries_of(text: str, sentences: Sequence[str]) -> list[int]:
    """Boundary offsets of a splitter's sentence strings in `text` (starts of all spans but the first)."""
    return [start for start, _ in align(text, sentences)[1:]]
