"""`Segmenter`: text in, sentence spans out, through one encoder pass over sliding windows.

It builds its reader tree once from a `SegmenterConfig` (`segmenter.readers.build`: the probe, its
punctuated, averaged and paired readers, the encoders at their precision, the thresholds per text
condition) and runs it. Flow: tokenize with offsets -> plan windows -> run windows -> gap features ->
gap probabilities (probe or an unsupervised score) -> weighted average over overlapping windows ->
candidates at word-start gaps -> decode into spans. `segment` and `segment_stream` stream the text
through the tree; `pipe` and `gap_probabilities` pool the windows of many whole texts into shared
batches. The text is never modified; every span is an offset range into the caller's string.

Training lives in `segmenter.training`; the spaCy wrapper in `segmenter.integrations.spacy`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from segmenter.chunking.config import DEFAULT_MAX_TOKENS
from segmenter.config import DecodeConfig, FeatureConfig, SegmenterConfig, WindowConfig, check_batch_size
from segmenter.decode.decoder import Span, decode
from segmenter.encoder.protocol import EncoderInterface
from segmenter.errors import ConfigError
from segmenter.probe.probe import Probe
from segmenter.readers.build import build_reading
from segmenter.readers.candidates import GapProbabilities
from segmenter.readers.tree import MeanReader, ProbeReader, ReadingStream, RouteReader
from segmenter.text.conditions import condition_for
from segmenter.text.line_features import TEXT_START, LineState
from segmenter.text.tokens import Tokens

if TYPE_CHECKING:
    from segmenter.chunking.chunker import Chunk

TEXTS_PER_CHUNK = 256


class Segmenter:
    """Sentence segmenter reading a BERT-family encoder's heads.

    >>> seg = Segmenter()                                   # packaged all-MiniLM-L6-v2 + shipped probe
    >>> [s.text for s in seg.segment("It rained. We stayed in.")]
    ['It rained.', 'We stayed in.']

    Built from one `SegmenterConfig` (see it for every setting), given whole or as its fields:
    `Segmenter(SegmenterConfig(preset="fast"))` and `Segmenter(preset="fast")` are the same segmenter
    (fields given beside a config replace its values); `Segmenter("path/to/model")` is
    `Segmenter(model="path/to/model")`.
    """

    def __init__(self, config: SegmenterConfig | str | os.PathLike | None = None, **settings):
        if isinstance(config, str | os.PathLike):  # Segmenter("path/or/name"), as from_pretrained reads
            if "model" in settings:
                raise ConfigError("the model is given twice: positionally and as model=")
            config, settings = None, {**settings, "model": os.fspath(config)}
        if config is not None and not isinstance(config, SegmenterConfig):
            raise ConfigError(
                f"Segmenter takes a model name or folder, a SegmenterConfig or keyword settings, "
                f"got {type(config).__name__} {config!r}"
            )
        unknown = sorted(set(settings) - set(SegmenterConfig.field_names()))
        if unknown:
            raise TypeError(f"Segmenter got unknown settings {', '.join(unknown)}")
        # every setting is checked before anything loads: one ConfigError naming it
        config = replace(config, **settings) if config is not None else SegmenterConfig(**settings)
        if config.probe is not None and not isinstance(config.probe, str | Probe):
            raise ConfigError(
                f"probe must be None, a folder or a Probe, got {type(config.probe).__name__} {config.probe!r}"
            )
        self.config = config
        self.strategy, self.batch_size = config.strategy, config.batch_size
        self.reading, self.scorer, self.probe = build_reading(config)
        self._chunker = None  # the Chunker of the last `chunk` call, kept with its sentence vectors

    @property
    def reader(self) -> ProbeReader | RouteReader | MeanReader:
        """The root of the reader tree (`segmenter.readers.tree`)."""
        return self.reading.reader

    @property
    def encoder(self) -> EncoderInterface:
        """The encoder of the probe itself (of unpunctuated text, where a punctuated probe reads the rest)."""
        return self.scorer.encoder

    @property
    def decodings(self) -> Mapping[str, DecodeConfig]:
        """The decoding settings of each judged condition's texts: `decoding_for`'s."""
        return self.reading.decodings

    @property
    def features(self) -> FeatureConfig:
        return self.scorer.features

    @property
    def window(self) -> WindowConfig:
        return self.scorer.window

    # -- public API ---------------------------------------------------------------------------------

    def segment(self, text: str) -> list[Span]:
        """Spans of `text`, in order; `span.text == text[span.start:span.end]`."""
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        return list(self._stream_spans([text]))

    def segment_stream(self, chunks: Iterable[str]) -> Iterator[Span]:
        """Spans of the text made of `chunks` (e.g. a file read piece by piece), yielded as soon as they
        are final, with offsets into the whole text; memory stays flat however long the text is.
        The spans do not depend on how the text was cut into chunks: they equal `segment(text)`."""
        _refuse_one_text(chunks, "chunks", "segment(text)")
        return self._stream_spans(chunks)

    def stream(self) -> ReadingStream:
        """A stream of this segmenter: `feed` it chunks, then `close` it; both yield spans."""
        return self.reading.stream()

    def _stream_spans(self, chunks: Iterable[str]) -> Iterator[Span]:
        stream = self.stream()
        for chunk in chunks:
            yield from stream.feed(chunk)
        yield from stream.close()

    def chunk(self, text: str, max_tokens: int = DEFAULT_MAX_TOKENS, **settings) -> list[Chunk]:
        """Chunks of `text` for retrieval: runs of whole sentences of at most `max_tokens` tokens, cut
        where topics shift and paragraphs start; `chunk.text == text[chunk.start:chunk.end]`. The other
        settings (`min_tokens`, `overlap`, `tokenizer`, `topics`) are `ChunkConfig`'s; a `Chunker`
        (`segmenter.chunking.chunker`) keeps them for many texts."""
        from segmenter.chunking.chunker import Chunker
        from segmenter.chunking.config import ChunkConfig

        config = ChunkConfig(max_tokens=max_tokens, **settings)
        if self._chunker is None or self._chunker.config != config:
            vectors = self._chunker._vectors if self._chunker is not None else None
            self._chunker = Chunker(self, config, vectors=vectors)
        return self._chunker.chunk(text)

    def split(self, text: str) -> list[str]:
        """The segments of `text` as strings."""
        return [span.text for span in self.segment(text)]

    def pipe(self, texts: Iterable[str], batch_size: int | None = None) -> Iterator[list[Span]]:
        """One list of spans per text, in order: the boundaries `segment(text)` finds, with the windows
        of up to TEXTS_PER_CHUNK texts sorted by length into shared encoder batches (faster for many
        short texts). On a segmenter built with `batch_size=1`, `pipe(texts, batch_size=1)` equals
        `segment(text)` exactly; in a larger or shared batch, float rounding (matrix kernels block by
        shape) moves probabilities slightly, so a boundary whose probability lies at the threshold
        may rarely differ (docs/decoding.md)."""
        _refuse_one_text(texts, "texts", "segment(text)")
        if batch_size is not None:
            check_batch_size(batch_size)
        return self._pipe(texts, batch_size)

    def _pipe(self, texts: Iterable[str], batch_size: int | None) -> Iterator[list[Span]]:
        for chunk in _chunks(texts, TEXTS_PER_CHUNK):
            size = self._checked(chunk, batch_size)
            conditions = [condition_for(text) for text in chunk]  # once per text: reading and decoding
            found = self.reading.gap_probabilities(chunk, size, conditions)
            for text, condition, gaps in zip(chunk, conditions, found, strict=True):
                yield decode(text, gaps.offsets, gaps.probs, self.reading.decodings[condition])

    def decode(self, text: str, gaps: GapProbabilities) -> list[Span]:
        """Spans of `text` from its gap probabilities, with the threshold that fits the text."""
        return decode(text, gaps.offsets, gaps.probs, self.decoding_for(text))

    def decoding_for(self, text: str) -> DecodeConfig:
        """The decoding settings for `text`: those of its `condition_for`."""
        return self.reading.decoding_for(text)

    @staticmethod
    def condition_for(text: str) -> str:
        """ "clean", "corrupt" (read with the unpunctuated threshold) or "spoken" (unpunctuated speech,
        read with its own: `segmenter.text.conditions`)."""
        return condition_for(text)

    def gap_probabilities(self, texts: list[str], batch_size: int | None = None) -> list[GapProbabilities]:
        """Boundary probability of every candidate gap of every text (pure: no decoding)."""
        _refuse_one_text(texts, "texts", "segment(text)")
        return self.reading.gap_probabilities(texts, self._checked(texts, batch_size))

    def _checked(self, texts: list[str], batch_size: int | None) -> int:
        """The batch size to read `texts` with, once every text is known to be a str."""
        size = check_batch_size(self.batch_size if batch_size is None else batch_size)
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"texts must be str, got {type(text).__name__}")
        return size

    def tokenize(self, text: str, line_state: LineState = TEXT_START) -> Tokens:
        """`text`'s tokens with the surface features this segmenter's probe reads."""
        return self.scorer.tokenize(text, line_state)


def _refuse_one_text(texts, name: str, instead: str) -> None:
    """A str (or bytes) where an iterable of texts belongs would be read character by character."""
    if isinstance(texts, str | bytes):
        raise TypeError(f"{name} must be an iterable of str, not one {type(texts).__name__}; use {instead}")


def _chunks(texts: Iterable[str], size: int) -> Iterator[list[str]]:
    chunk: list[str] = []
    for text in texts:
        chunk.append(text)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
