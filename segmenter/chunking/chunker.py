"""`Chunker`: a text in, chunks for retrieval out, each a run of whole sentences within a token budget.

    >>> chunker = Chunker(Segmenter(), max_tokens=128)  # wordpieces of its backbone, topics read
    >>> chunks = chunker.chunk(text)                  # [Chunk(start, end, text, tokens), ...]

The text is read as a stream (`Segmenter.stream`): sentence spans -> pieces (`pieces`) -> once WINDOW
pieces wait, their cuts are planned (`plan`) and every chunk but the last two is final; the rest waits
for the next window. So memory stays flat however long the text is, and the plan is exact within each
window. Every chunk's count is taken on its own text; one over the budget (a tokenizer whose counts
do not add up across sentences) is planned again with a smaller budget until it fits.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from segmenter.chunking.config import ChunkConfig
from segmenter.chunking.counting import token_counter
from segmenter.chunking.pieces import Piece, opens_paragraph, pieces_of
from segmenter.chunking.plan import plan_chunks
from segmenter.errors import ConfigError

WINDOW = 1024  # pieces planned together
KEPT = 2  # chunks at the end of a window that wait for the next one


@dataclass(frozen=True)
class Chunk:
    """One chunk: `text[start:end]`, and its `tokens` as the budget counts them."""

    start: int
    end: int
    text: str
    tokens: int


class Chunker:
    """Cuts texts into chunks of whole sentences under a token budget, preferring topic shifts.

    segmenter: the `Segmenter` that finds the sentences (`Segmenter.chunk` passes itself)
    config:    a `ChunkConfig`, or its fields as keyword arguments (fields beside a config replace its values)
    vectors:   a `SentenceVectors` for the topic shifts (None: one for the segmenter's backbone, when
               `config.topics` is on)
    """

    def __init__(self, segmenter, config: ChunkConfig | None = None, vectors=None, **settings):
        unknown = sorted(set(settings) - set(ChunkConfig.field_names()))
        if unknown:
            raise TypeError(f"Chunker got unknown settings {', '.join(unknown)}")
        if config is not None and not isinstance(config, ChunkConfig):
            raise ConfigError(f"config must be a ChunkConfig, got {type(config).__name__}")
        self.config = replace(config, **settings) if config is not None else ChunkConfig(**settings)
        self.segmenter = segmenter
        encoder = segmenter.encoder
        self.count = token_counter(self.config.tokenizer, lambda text: len(encoder.tokenize(text)))
        self._vectors = vectors

    @property
    def vectors(self):
        """The sentence vectors of the topic shifts, loaded on first use."""
        if self._vectors is None:
            from segmenter.topics.sentence_vectors import SentenceVectors, backbone_of

            config = self.segmenter.config
            self._vectors = SentenceVectors(
                backbone_of(self.segmenter), device=config.device, precision=config.precision
            )
        return self._vectors

    def chunk(self, text: str) -> list[Chunk]:
        """Chunks of `text`, in order; `chunk.text == text[chunk.start:chunk.end]`."""
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        return list(self.chunk_stream([text]))

    def split_text(self, text: str) -> list[str]:
        """The chunks of `text` as strings."""
        return [chunk.text for chunk in self.chunk(text)]

    def chunk_stream(self, pieces: Iterable[str]) -> Iterator[Chunk]:
        """Chunks of the text made of `pieces` (e.g. a file read piece by piece), with offsets into the
        whole text, yielded as soon as they are final; memory stays flat."""
        if isinstance(pieces, str | bytes):
            raise TypeError("pieces must be an iterable of str, not one str; use chunk(text)")
        return _ChunkStream(self).run(pieces)

    def inner_gaps(self, sentence: str) -> tuple[np.ndarray, np.ndarray]:
        """(offsets (G,), probabilities (G,)) of the candidate gaps inside one over-long sentence."""
        gaps = self.segmenter.gap_probabilities([sentence])[0]
        return gaps.offsets, gaps.probs


class _ChunkStream:
    """One pass of a `Chunker` over one text: the text not yet given out, the pieces waiting to be cut."""

    def __init__(self, chunker: Chunker):
        self.chunker, self.config, self.count = chunker, chunker.config, chunker.count
        self.buffer, self.offset = "", 0  # the text from global offset `offset` on
        self.waiting: list[Piece] = []
        self.vectors: list[np.ndarray] = []  # (D,) per waiting piece, when topics are read
        self.previous: list[Piece] = []  # the pieces of the last chunk given out (for the overlap)

    def run(self, pieces: Iterable[str]) -> Iterator[Chunk]:
        stream = self.chunker.segmenter.stream()
        for piece in pieces:
            if not isinstance(piece, str):
                raise TypeError(f"pieces must be str, got {type(piece).__name__}")
            self.buffer += piece
            yield from self._take(stream.feed(piece), final=False)
        yield from self._take(stream.close(), final=True)

    def _take(self, spans, final: bool) -> Iterator[Chunk]:
        spans = [(s.start - self.offset, s.end - self.offset) for s in spans]
        budget = self.config.max_tokens
        for piece in pieces_of(self.buffer, spans, self.count, budget, self.chunker.inner_gaps):
            self.waiting.append(replace(piece, start=piece.start + self.offset, end=piece.end + self.offset))
        while len(self.waiting) >= WINDOW or (final and self.waiting):
            yield from self._cut(final)

    def _cut(self, final: bool) -> Iterator[Chunk]:
        window = self.waiting[:WINDOW]
        starts = self._plan(window, self.config.max_tokens - self.config.overlap)  # room for the overlap
        edges = [0, *starts, len(window)]
        given = (
            len(edges) - 1 if final and len(window) == len(self.waiting) else max(1, len(edges) - 1 - KEPT)
        )
        for a, b in zip(edges[:given], edges[1 : given + 1], strict=True):
            yield from self._give(window[a:b])
        used = edges[given]
        del self.waiting[:used]
        del self.vectors[:used]
        keep_from = max(0, (self.previous[0].start if self.config.overlap else self.previous[-1].end) - 1)
        self.buffer = self.buffer[keep_from - self.offset :]
        self.offset = keep_from

    def _plan(self, pieces: list[Piece], budget: int) -> list[int]:
        tokens = np.array([p.tokens for p in pieces], dtype=np.int64)
        paragraph = np.array([p.paragraph for p in pieces], dtype=bool)
        heading = np.array([p.heading for p in pieces], dtype=bool)
        vectors = self._vectors_of(pieces) if self.config.topics else None
        return plan_chunks(tokens, budget, vectors, paragraph, self.config.min_tokens, heading)

    def _vectors_of(self, pieces: list[Piece]) -> np.ndarray:
        """(n, D) vectors of the first n waiting pieces, computed once per piece."""
        missing = self.waiting[len(self.vectors) : len(pieces)]
        if missing:
            found = self.chunker.vectors([self._text(p.start, p.end) for p in missing])  # (m, D)
            self.vectors.extend(found)
        return np.stack(self.vectors[: len(pieces)])

    def _give(self, pieces: list[Piece]) -> Iterator[Chunk]:
        """The chunk(s) of `pieces`: one, unless its real count is over the budget."""
        budget = self.config.max_tokens
        chunk = self._chunk(pieces)
        if chunk.tokens > budget and len(pieces) > 1:  # counts that do not add up: plan it again
            yield from self._split(pieces, budget - (chunk.tokens - budget))
            return
        yield self._with_overlap(pieces, chunk)
        self.previous = pieces

    def _split(self, pieces: list[Piece], budget: int) -> Iterator[Chunk]:
        """`pieces` planned again under `budget`, lowered until they fall into two chunks or more."""
        tokens = np.array([p.tokens for p in pieces], dtype=np.int64)
        starts: list[int] = []
        while not starts and budget > 0:
            starts = plan_chunks(tokens, budget)
            budget -= 1
        if not starts:  # pieces that count nothing alone: each a chunk of its own
            starts = list(range(1, len(pieces)))
        edges = [0, *starts, len(pieces)]
        for a, b in zip(edges, edges[1:], strict=False):
            yield from self._give(pieces[a:b])

    def _with_overlap(self, pieces: list[Piece], chunk: Chunk) -> Chunk:
        """`chunk` opened by the last whole pieces of the chunk before it, as many as `overlap` and the
        budget allow."""
        if not self.config.overlap or not self.previous:
            return chunk
        taken, best = 0, chunk
        for index in range(len(self.previous) - 1, 0, -1):  # never the whole chunk before
            taken += self.previous[index].tokens
            if taken > self.config.overlap:
                break
            candidate = self._chunk([*self.previous[index:], *pieces])
            if candidate.tokens > self.config.max_tokens:
                break
            best = candidate
        return best

    def _chunk(self, pieces: list[Piece]) -> Chunk:
        start, end = pieces[0].start, pieces[-1].end
        text = self._text(start, end)
        return Chunk(start, end, text, self.count(text))

    def _text(self, start: int, end: int) -> str:
        return self.buffer[start - self.offset : end - self.offset]


__all__ = ["Chunk", "Chunker", "opens_paragraph"]
