"""Candidate boundaries: where a reader's probabilities go, and how several readers' are averaged.

A candidate is the gap before a word-start token, named by the offset of that token's first
character, with its boundary probability. `candidates` picks them from a text's per-gap scores (both
the whole-text path and the stream use it); `GapProbabilities` holds one text's candidates;
`mean_by_offset` averages the candidates of readers that tokenize the text their own way (a probe and
its partner on another backbone), matching them by offset. A stream hands its candidates to a
`CandidateSink`: the `segmenter.decode.decoder.Decoder` at the root of a reading, or a
`CandidateBuffer` that keeps them for a mean of several streams. Nothing here reads a model.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from segmenter.decode.decoder import Span
from segmenter.text.tokens import Tokens


@dataclass(frozen=True)
class GapProbabilities:
    """Candidate boundaries of one text: offsets (G,) of the first character after each word-start gap,
    and their boundary probabilities (G,)."""

    offsets: np.ndarray
    probs: np.ndarray


def candidates(offsets: np.ndarray, word_start: np.ndarray, gap_probs: np.ndarray) -> GapProbabilities:
    """The candidates among gaps 0..n-2 of tokens with (n, 2) character `offsets` and (n,)
    `word_start` flags: gap i (between tokens i and i+1) is one when token i+1 starts a word, at that
    token's first character, with probability `gap_probs[i]` ((n-1,))."""
    keep = word_start[1:]
    return GapProbabilities(offsets[1:, 0][keep], gap_probs[keep])


def text_candidates(tokens: Tokens, gap_probs: np.ndarray) -> GapProbabilities:
    """`candidates` of a whole text's `tokens` (none for fewer than two tokens)."""
    if len(tokens) < 2:
        return GapProbabilities(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
    return candidates(tokens.offsets, tokens.word_start, gap_probs)


def mean_by_offset(
    offsets: list[np.ndarray], probs: list[np.ndarray], weights: Sequence[float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The candidates of several readers, each (G_i,) increasing `offsets` with (G_i,) `probs`, as one
    (G,) increasing set of offsets with the mean probability of the readers that have each, each
    reader counted with its weight of `weights` (None: equally)."""
    shares = [1.0] * len(offsets) if weights is None else weights
    every = np.concatenate([np.asarray(o, dtype=np.int64) for o in offsets])  # (sum G_i,)
    share = np.concatenate([np.full(len(o), w, np.float64) for o, w in zip(offsets, shares, strict=True)])
    weighted = np.concatenate([np.asarray(p, dtype=np.float64) for p in probs]) * share
    merged, where = np.unique(every, return_inverse=True)  # (G,), (sum G_i,)
    total = np.bincount(where, weights=weighted, minlength=len(merged))
    count = np.bincount(where, weights=share, minlength=len(merged))  # every offset has a reader
    return merged, (total / count).astype(np.float32)


def mean_gap_probabilities(readers: list[GapProbabilities]) -> GapProbabilities:
    """`mean_by_offset` of one text's `GapProbabilities` from each reader."""
    offsets, probs = mean_by_offset([r.offsets for r in readers], [r.probs for r in readers])
    return GapProbabilities(offsets, probs)


class CandidateSink(Protocol):
    """What a stream hands its text and its final candidates to (a `Decoder` is one).

    add_text: the next piece of the text and the blank-line boundaries inside it (global offsets).
    add_candidates: (G,) increasing offsets and (G,) probabilities, after every candidate given before.
    advance: every candidate before offset `upto` has been given; yields the spans now final.
    finish: the text has ended; yields the remaining spans."""

    def add_text(self, piece: str, forced: list[int] = ...) -> None: ...

    def add_candidates(self, offsets: np.ndarray, probs: np.ndarray) -> None: ...

    def advance(self, upto: int) -> Iterator[Span]: ...

    def finish(self) -> Iterator[Span]: ...


class CandidateBuffer:
    """A `CandidateSink` that keeps what one stream of a mean gives, for the mean to take.

    pieces: the text pieces and their blank-line boundaries, until taken. given_upto: every candidate
    before this offset has been given (None: all of them, the text has ended)."""

    def __init__(self):
        self.pieces: list[tuple[str, list[int]]] = []
        self._offsets: list[np.ndarray] = []
        self._probs: list[np.ndarray] = []
        self.given_upto: int | None = 0

    def add_text(self, piece: str, forced: list[int] = ()) -> None:
        self.pieces.append((piece, list(forced)))

    def add_candidates(self, offsets: np.ndarray, probs: np.ndarray) -> None:
        self._offsets.append(np.asarray(offsets, dtype=np.int64))
        self._probs.append(np.asarray(probs, dtype=np.float64))

    def advance(self, upto: int) -> Iterator[Span]:
        self.given_upto = upto
        return iter(())

    def finish(self) -> Iterator[Span]:
        self.given_upto = None
        return iter(())

    def take_before(self, limit: int | None) -> tuple[np.ndarray, np.ndarray]:
        """The candidates given so far with offsets below `limit` (None: all), removed from the buffer."""
        if not self._offsets:
            return np.zeros(0, np.int64), np.zeros(0)
        offsets, probs = np.concatenate(self._offsets), np.concatenate(self._probs)
        cut = len(offsets) if limit is None else int(np.searchsorted(offsets, limit, side="left"))
        self._offsets, self._probs = [offsets[cut:]], [probs[cut:]]
        return offsets[:cut], probs[:cut]
