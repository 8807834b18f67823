"""Two readers of one text, two backbones: their gap probabilities averaged by character offset.

A probe may name a partner (its meta's `paired_with`: a preset of the packaged backbone) whose gap
probabilities are averaged with its own (segmenter/models/README.md, "Unpunctuated text read by the
12-layer and the 6-layer encoder together": the two encoders' errors differ). The two tokenize the
text their own way, so their candidate boundaries are matched by the character offset they open at:
where both have a candidate the mean is taken, where one alone has it, its probability.

`mean_by_offset` does that for a text held whole (`Segmenter.gap_probabilities`, `pipe`);
`PairedStream` for a text that arrives in pieces: each reader runs its own `TextStream`, which hands
its candidates to a `CandidateSink` instead of a decoder, and the candidates every reader has given
up to some offset go, averaged, to the one `Decoder`. The spans do not depend on how the text was
cut, as with one reader. This module reads no model; building the readers is `segmenter.segmenter`'s.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from segmenter.config import DecodeConfig
from segmenter.decode import Decoder, Span

if TYPE_CHECKING:
    from segmenter.segmenter import GapProbabilities
    from segmenter.stream import TextStream


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
    return type(readers[0])(offsets, probs)


class CandidateSink:
    """What a `TextStream` hands its decoder, kept for `PairedStream` instead of decoded.

    config: set by the stream once the text's start has chosen its condition (the decoding of that
    condition). given_upto: every candidate before this offset has been given (None: all of them, the
    text has ended)."""

    def __init__(self, config: DecodeConfig):
        self.config = config
        self.pieces: list[tuple[str, list[int]]] = []  # text pieces and their blank-line boundaries
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
        """The candidates given so far with offsets below `limit` (None: all), removed from the sink."""
        if not self._offsets:
            return np.zeros(0, np.int64), np.zeros(0)
        offsets, probs = np.concatenate(self._offsets), np.concatenate(self._probs)
        cut = len(offsets) if limit is None else int(np.searchsorted(offsets, limit, side="left"))
        self._offsets, self._probs = [offsets[cut:]], [probs[cut:]]
        return offsets[:cut], probs[:cut]


class PairedStream:
    """A `TextStream`'s `feed` / `close` for a text read by several readers at once.

    `streams` are the readers' TextStreams, each built with a `CandidateSink` (`sinks`, in the same
    order) as its decoder; the first one's text pieces and decoding (its condition's, from the
    decodings it was built with) are the ones decoded."""

    def __init__(self, streams: list[TextStream], sinks: list[CandidateSink]):
        self.streams, self.sinks = streams, sinks
        self.decoder = Decoder(sinks[0].config)

    def feed(self, chunk: str) -> Iterator[Span]:
        """Take the next chunk of text; yield the spans that became final."""
        for stream in self.streams:
            for _ in stream.feed(chunk):  # a sink yields no spans
                pass
        yield from self._merge()

    def close(self) -> Iterator[Span]:
        """End of text: yield the remaining spans."""
        for stream in self.streams:
            for _ in stream.close():
                pass
        yield from self._merge()
        yield from self.decoder.finish()

    def _merge(self) -> Iterator[Span]:
        """Hand the decoder the text so far and the averaged candidates every reader has given."""
        first = self.sinks[0]
        self.decoder.config = first.config  # chosen by the text's start before any candidate exists
        for piece, forced in first.pieces:
            self.decoder.add_text(piece, forced)
        first.pieces.clear()
        for sink in self.sinks[1:]:
            sink.pieces.clear()  # the same text, cut the same way
        reached = [sink.given_upto for sink in self.sinks]
        limit = None if all(upto is None for upto in reached) else min(u for u in reached if u is not None)
        taken = [sink.take_before(limit) for sink in self.sinks]
        offsets, probs = mean_by_offset([o for o, _ in taken], [p for _, p in taken])
        if len(offsets):
            self.decoder.add_candidates(offsets, probs)
        if limit is not None and limit > 0:
            yield from self.decoder.advance(limit)
