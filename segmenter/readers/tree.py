"""The reader tree: how a segmenter turns a text into candidate boundaries with probabilities.

A reader is a node of three kinds, built once from the probe metadata (`segmenter.readers.build`):

- `ProbeReader`: one gap scorer (an encoder read by a probe, or by one of the paper's unsupervised
  scores; the scorer of a probe's averaged probes is one `MeanScorer`, which averages them window by
  window since they share tokens and windows);
- `RouteReader`: one child per text condition ("clean", "corrupt"), chosen by the text's start
  (`segmenter.text.conditions.condition_for`), for a probe that names a punctuated probe;
- `MeanReader`: the mean of several readers that tokenize the text their own way (a probe and its
  partner on another backbone), matched by character offset.

Every node reads texts two ways, with the same result: `gap_probabilities` for texts held whole (the
windows of many texts pooled into shared encoder batches) and `stream` for a text that arrives in
pieces (bounded memory). The condition of a text is judged once, by the caller, and handed down.

    RouteReader {clean: ProbeReader(punctuated probe), corrupt: ProbeReader(MeanScorer(probe, member))}
    MeanReader [RouteReader {...} of the 12-layer probe, RouteReader {...} of its MiniLM partner]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from segmenter.config import DecodeConfig
from segmenter.decode.decoder import Decoder, Span
from segmenter.readers.candidates import (
    CandidateBuffer,
    CandidateSink,
    GapProbabilities,
    mean_by_offset,
    mean_gap_probabilities,
    text_candidates,
)
from segmenter.readers.gap_scorer import GapScorer
from segmenter.readers.stream import TextStream
from segmenter.text import conditions


class ProbeReader:
    """A leaf: the candidates of one gap scorer."""

    def __init__(self, scorer: GapScorer, batch_size: int):
        self.scorer, self.batch_size = scorer, batch_size

    def gap_probabilities(
        self, texts: list[str], conditions: list[str], batch_size: int
    ) -> list[GapProbabilities]:
        tokens = [self.scorer.tokenize(text) for text in texts]
        scores = self.scorer.gap_scores(tokens, batch_size)  # per text, (n-1,)
        return [text_candidates(t, s) for t, s in zip(tokens, scores, strict=True)]

    def stream(self, sink: CandidateSink, condition: str) -> TextStream:
        return TextStream(self.scorer, self.batch_size, sink)

    def leaves(self) -> Iterator[ProbeReader]:
        yield self


class RouteReader:
    """One child reader per text condition; a text is read by its condition's child only."""

    def __init__(self, routes: Mapping[str, ProbeReader | RouteReader | MeanReader]):
        self.routes = MappingProxyType(dict(routes))

    def gap_probabilities(
        self, texts: list[str], conditions: list[str], batch_size: int
    ) -> list[GapProbabilities]:
        # texts that reach the same child are read together (in order of their first text), so their
        # windows share batches
        groups: dict[int, list[int]] = {}
        for i, condition in enumerate(conditions):
            groups.setdefault(id(self.routes[condition]), []).append(i)
        found: list[GapProbabilities | None] = [None] * len(texts)
        for mine in groups.values():
            child = self.routes[conditions[mine[0]]]
            mine_texts, mine_conditions = [texts[i] for i in mine], [conditions[i] for i in mine]
            read = child.gap_probabilities(mine_texts, mine_conditions, batch_size)
            for i, gaps in zip(mine, read, strict=True):
                found[i] = gaps
        return found

    def stream(self, sink: CandidateSink, condition: str):
        return self.routes[condition].stream(sink, condition)

    def leaves(self) -> Iterator[ProbeReader]:
        seen: set[int] = set()
        for child in self.routes.values():
            if id(child) not in seen:
                seen.add(id(child))
                yield from child.leaves()


class MeanReader:
    """The mean of its children's probabilities, candidate by candidate (matched by character offset;
    where one child alone has a candidate, its probability)."""

    def __init__(self, children: list[ProbeReader | RouteReader | MeanReader]):
        self.children = tuple(children)

    def gap_probabilities(
        self, texts: list[str], conditions: list[str], batch_size: int
    ) -> list[GapProbabilities]:
        each = [child.gap_probabilities(texts, conditions, batch_size) for child in self.children]
        return [mean_gap_probabilities(list(text)) for text in zip(*each, strict=True)]

    def stream(self, sink: CandidateSink, condition: str) -> MeanStream:
        buffers = [CandidateBuffer() for _ in self.children]
        pairs = zip(self.children, buffers, strict=True)
        streams = [child.stream(buffer, condition) for child, buffer in pairs]
        return MeanStream(streams, buffers, sink)

    def leaves(self) -> Iterator[ProbeReader]:
        for child in self.children:
            yield from child.leaves()


class MeanStream:
    """A `TextStream`'s `feed` / `close` for a text read by several readers at once: each child
    stream gives its candidates to its own buffer, and the candidates every child has given up to
    some offset go, averaged, to `sink`. The first buffer's text pieces are the ones passed on."""

    def __init__(self, streams: list, buffers: list[CandidateBuffer], sink: CandidateSink):
        self.streams, self.buffers, self.sink = streams, buffers, sink

    def feed(self, chunk: str) -> Iterator[Span]:
        for stream in self.streams:
            for _ in stream.feed(chunk):  # a buffer yields no spans
                pass
        yield from self._merge()

    def close(self) -> Iterator[Span]:
        for stream in self.streams:
            for _ in stream.close():
                pass
        yield from self._merge()
        yield from self.sink.finish()

    def _merge(self) -> Iterator[Span]:
        first = self.buffers[0]
        for piece, forced in first.pieces:
            self.sink.add_text(piece, forced)
        first.pieces.clear()
        for buffer in self.buffers[1:]:
            buffer.pieces.clear()  # the same text, cut the same way
        reached = [buffer.given_upto for buffer in self.buffers]
        limit = None if all(upto is None for upto in reached) else min(u for u in reached if u is not None)
        taken = [buffer.take_before(limit) for buffer in self.buffers]
        offsets, probs = mean_by_offset([o for o, _ in taken], [p for _, p in taken])
        if len(offsets):
            self.sink.add_candidates(offsets, probs)
        if limit is not None and limit > 0:
            yield from self.sink.advance(limit)


@dataclass(frozen=True)
class Reading:
    """What a segmenter reads a text with: the root of its reader tree and the decoding settings of
    each text condition ("clean", "corrupt"). A text's condition is judged once, from its start
    (`segmenter.text.conditions.condition_for`), and chooses both."""

    reader: ProbeReader | RouteReader | MeanReader
    decodings: Mapping[str, DecodeConfig]

    def gap_probabilities(
        self, texts: list[str], batch_size: int, judged: list[str] | None = None
    ) -> list[GapProbabilities]:
        """Per text, its candidates: the windows of all texts that reach one scorer share batches.
        judged: the texts' conditions, where the caller has judged them already."""
        if judged is None:
            judged = [conditions.condition_for(text) for text in texts]
        return self.reader.gap_probabilities(texts, judged, batch_size)

    def decoding_for(self, text: str) -> DecodeConfig:
        return self.decodings[conditions.condition_for(text)]

    def stream(self) -> ReadingStream:
        return ReadingStream(self)


class ReadingStream:
    """Spans of one text fed in chunks: `feed(chunk)` and `close()` yield spans in order, with offsets
    into the whole text. The text's first LOOK_CHARS characters are held until they choose its
    condition; then the reader tree's stream for that condition runs, into a `Decoder` with that
    condition's settings. The spans do not depend on how the text was cut into chunks."""

    def __init__(self, reading: Reading):
        self.reading = reading
        self._head: list[str] = []  # the text's start, held until it chooses the condition
        self._head_len = 0
        self._inner = None  # the tree's stream, once the condition is chosen

    def feed(self, chunk: str) -> Iterator[Span]:
        """Take the next chunk of text; yield the spans that became final."""
        if not isinstance(chunk, str):
            raise TypeError(f"text chunks must be str, got {type(chunk).__name__}")
        if self._inner is not None:
            yield from self._inner.feed(chunk)
            return
        self._head.append(chunk)
        self._head_len += len(chunk)
        if self._head_len >= conditions.LOOK_CHARS:
            yield from self._start()

    def close(self) -> Iterator[Span]:
        """End of text: yield the remaining spans."""
        if self._inner is None:
            yield from self._start()
        yield from self._inner.close()

    def _start(self) -> Iterator[Span]:
        head = "".join(self._head)
        self._head = []
        condition = conditions.condition_for(head)
        sink = Decoder(self.reading.decodings[condition])
        self._inner = self.reading.reader.stream(sink, condition)
        yield from self._inner.feed(head)
