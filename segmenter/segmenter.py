"""`Segmenter`: text in, sentence spans out, through one encoder pass over sliding windows.

Flow per batch of texts: tokenize with offsets -> plan windows -> run windows (batched across texts,
sorted by length to limit padding) -> gap features per window -> gap probabilities per window
(probe or an unsupervised score) -> weighted average over overlapping windows -> decode at word-start
gaps into spans. The text is never modified; every span is an offset range into the caller's string.

Training lives in `segmenter.train`; the spaCy wrapper in `segmenter.spacy_component`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from segmenter.config import (
    DEFAULT_PRESET,
    DecodeConfig,
    FeatureConfig,
    WindowConfig,
    check_batch_size,
    check_preset,
    check_strategy,
)
from segmenter.decode import Span, decode
from segmenter.encoder import DEFAULT_MODEL_NAME, Encoder, Tokens
from segmenter.errors import ConfigError, ProbeError
from segmenter.extract import batch_stream
from segmenter.features import SIGNALS, WindowFeatures, sep_attention_score, similarity_score
from segmenter.line_features import TEXT_START, LineState
from segmenter.probe import Probe
from segmenter.stream import LOOK_CHARS, TextStream
from segmenter.surface import flag_count
from segmenter.windows import GapAverager

# Unsupervised strategies: layers and thresholds chosen on ewt-dev (best single-signal F1 per layer;
# see segmenter/models/README.md). A score z maps to probability sigmoid(z), so 0.78 means z >= 1.27.
UNSUPERVISED = {
    "sep-attention": (FeatureConfig(layers=(2, 3), vectors=False), 0.78),
    "similarity": (FeatureConfig(layers=(4,), vectors=False), 0.79),
}
TEXTS_PER_CHUNK = 256


def models_dir() -> Path:
    """Folder holding shipped probes: $SEGMENTER_MODELS, else `segmenter/models/` (package data)."""
    override = os.environ.get("SEGMENTER_MODELS")
    return Path(override) if override else Path(__file__).resolve().parent / "models"


def probe_dir_for(backbone: str, preset: str = DEFAULT_PRESET) -> Path:
    """Where the shipped probe of `preset` for `backbone` lives: models/<backbone, '/' as '--'>/<preset>."""
    return models_dir() / backbone.replace("/", "--") / check_preset(preset)


def load_probe_for(backbone: str, probe: str | Path | Probe | None, preset: str = DEFAULT_PRESET) -> Probe:
    """`probe` itself, the probe in folder `probe`, or (None) the shipped `preset` for `backbone`."""
    if isinstance(probe, Probe):
        return probe
    folder = Path(probe) if probe is not None else probe_dir_for(backbone, preset)
    if probe is None and not folder.is_dir():
        raise ProbeError(
            f"no trained probe for backbone {backbone!r} (preset {preset}) in {folder.parent}; "
            f"train one with `segmenter train --model {backbone}` and pass it with --probe, "
            "or use --strategy sep-attention or similarity"
        )
    return Probe.load(folder)


@dataclass(frozen=True)
class GapProbabilities:
    """Candidate boundaries of one text: offsets (G,) of the first character after each word-start gap,
    and their boundary probabilities (G,)."""

    offsets: np.ndarray
    probs: np.ndarray


class Segmenter:
    """Sentence segmenter reading a BERT-family encoder's heads.

    >>> seg = Segmenter()                                   # packaged all-MiniLM-L6-v2 + shipped probe
    >>> [s.text for s in seg.segment("It rained. We stayed in.")]
    ['It rained.', 'We stayed in.']

    model:     None (packaged default), a Hugging Face id, or a local path
    strategy:  "probe" (default), "sep-attention" or "similarity"
    threshold: boundary probability cut-off (None: the probe's or strategy's tuned default)
    probe:     folder of a probe trained with `segmenter train`, or a loaded `Probe`
               (None: the one shipped for the backbone)
    max_chars: optional cap on segment length
    precision: "auto" (bfloat16 where the hardware has it, else float32), "float32" or "bfloat16"
    preset:    which shipped probe to use when `probe` is None: "accurate" (the default: blocks 1-3 tuned
               with the probe), "fast" (blocks 1-2 tuned: faster, a little less accurate) or "signals"
               ("fast" that also reads block 2's attention signals); see
               segmenter/models/README.md ("frozen" was retired: `config.RETIRED_PRESETS` says why)
    """

    def __init__(
        self,
        model: str | None = None,
        strategy: str = "probe",
        threshold: float | None = None,
        device: str = "cpu",
        batch_size: int = 16,
        probe: str | Path | Probe | None = None,
        max_chars: int | None = None,
        precision: str = "auto",
        preset: str = DEFAULT_PRESET,
    ):
        # every argument is checked before anything loads: one ConfigError naming the argument
        self.strategy = check_strategy(strategy)
        check_preset(preset)
        self.batch_size = check_batch_size(batch_size)
        DecodeConfig(threshold=0.5 if threshold is None else threshold, max_chars=max_chars)
        model = _path_or_name("model", model, "a Hugging Face id or a local path")
        if not isinstance(probe, Probe):
            probe = _path_or_name("probe", probe, "a folder or a Probe")
        backbone = DEFAULT_MODEL_NAME if model is None else model
        self.probe: Probe | None = None
        if strategy == "probe":
            try:
                self.probe = load_probe_for(backbone, probe, preset)
            except ProbeError:
                if model is not None:
                    Encoder(model, device=device, max_layer=1)  # a missing model is the first thing to report
                raise
            meta_file = (
                "the probe's meta"
                if self.probe.source is None
                else str(Path(self.probe.source) / "meta.json")
            )
            settings = settings_from_meta(self.probe.meta, source=meta_file)
            self.features, self.window = settings.features, settings.window
            default_threshold, per_condition = settings.threshold, settings.thresholds
        else:
            self.features, default_threshold = UNSUPERVISED[strategy]
            self.window, per_condition = WindowConfig(), {}
        self.decoding = DecodeConfig(
            threshold=default_threshold if threshold is None else threshold, max_chars=max_chars
        )
        # A probe tuned per condition gets the unpunctuated threshold on text with no case or punctuation.
        self._decodings = {
            condition: DecodeConfig(threshold=per_condition[condition], max_chars=max_chars)
            if threshold is None and condition in per_condition
            else self.decoding
            for condition in ("clean", "corrupt")
        }
        self.encoder = Encoder(
            model,
            device=device,
            max_layer=max(self.features.layers),
            precision=precision,
            deltas=self.probe.deltas if self.probe is not None else None,
        )
        if self.window.size > self.encoder.max_positions:
            self.window = WindowConfig(
                size=self.encoder.max_positions, stride=self.encoder.max_positions // 2
            )
        if self.probe is not None:
            check_probe_fits(self.probe, self.features, self.encoder)

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

    def _stream_spans(self, chunks: Iterable[str]) -> Iterator[Span]:
        stream = TextStream(self)
        for chunk in chunks:
            yield from stream.feed(chunk)
        yield from stream.close()

    def split(self, text: str) -> list[str]:
        """The segments of `text` as strings."""
        return [span.text for span in self.segment(text)]

    def pipe(self, texts: Iterable[str], batch_size: int | None = None) -> Iterator[list[Span]]:
        """One list of spans per text, in order; windows are batched across texts (faster for many
        short texts; rounding in a batch shared with other texts can move a probability that sits
        exactly at the threshold, so a span may rarely differ from `segment(text)`)."""
        _refuse_one_text(texts, "texts", "segment(text)")
        if batch_size is not None:
            check_batch_size(batch_size)
        return self._pipe(texts, batch_size)

    def _pipe(self, texts: Iterable[str], batch_size: int | None) -> Iterator[list[Span]]:
        for chunk in _chunks(texts, TEXTS_PER_CHUNK):
            for text, gaps in zip(chunk, self.gap_probabilities(chunk, batch_size), strict=True):
                yield self.decode(text, gaps)

    def decode(self, text: str, gaps: GapProbabilities) -> list[Span]:
        """Spans of `text` from its gap probabilities, with the threshold that fits the text."""
        return decode(text, gaps.offsets, gaps.probs, self.decoding_for(text))

    def decoding_for(self, text: str) -> DecodeConfig:
        """The decoding settings for `text`: those of its `condition_for`."""
        return self._decodings[self.condition_for(text)]

    @staticmethod
    def condition_for(text: str) -> str:
        """ "corrupt" (read with the unpunctuated threshold) if the first LOOK_CHARS characters of `text`
        have no case or punctuation, else "clean" (a streamed text is judged by its start too)."""
        return "corrupt" if looks_unpunctuated(text[:LOOK_CHARS]) else "clean"

    def gap_probabilities(self, texts: list[str], batch_size: int | None = None) -> list[GapProbabilities]:
        """Boundary probability of every candidate gap of every text (pure: no decoding)."""
        _refuse_one_text(texts, "texts", "segment(text)")
        size = check_batch_size(self.batch_size if batch_size is None else batch_size)
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"texts must be str, got {type(text).__name__}")
        tokens = [self.tokenize(text) for text in texts]
        averagers = [GapAverager(len(t)) for t in tokens]
        for batch in batch_stream(self.encoder, tokens, self.window, self.features, size):
            for (window, _), scores in zip(batch, self.score_batch([f for _, f in batch]), strict=True):
                averagers[window.text].add(window, scores)
        return [_candidates(t, a.result()) for t, a in zip(tokens, averagers, strict=True)]

    def tokenize(self, text: str, line_state: LineState = TEXT_START) -> Tokens:
        """`text`'s tokens with the surface features this segmenter's probe reads (`line_state`: what
        the text before `text` left open, for a stream's pieces)."""
        features = self.features
        return self.encoder.tokenize(text, features.surface, features.lines, line_state)

    def score_batch(self, windows: list[WindowFeatures]) -> list[np.ndarray]:
        """Per window, (n-1,) boundary probabilities of its gaps; one probe call for all of them."""
        if self.probe is None or not windows:
            return [self.score_gaps(features) for features in windows]
        dtype = torch.bfloat16 if self.encoder.precision == "bfloat16" else torch.float32
        return self.probe.predict_windows([f.token_matrix() for f in windows], self.features.context, dtype)

    def score_gaps(self, features: WindowFeatures) -> np.ndarray:
        """(n-1,) boundary probabilities of the gaps of one window."""
        if self.probe is not None:
            return self.probe.predict(features.gap_matrix(self.features.context))
        raw = (
            sep_attention_score(features) if self.strategy == "sep-attention" else similarity_score(features)
        )
        return 1.0 / (1.0 + np.exp(-raw))


_SENTENCE_PUNCTUATION = re.compile(r"[.!?\u2026\u3002\uff01\uff1f]")


def looks_unpunctuated(text: str) -> bool:
    """True when `text` has no upper-case letter and no sentence-final punctuation (a transcript, chat).

    >>> looks_unpunctuated("so we left early"), looks_unpunctuated("So we left."), looks_unpunctuated("ok.")
    (True, False, False)
    """
    return text == text.lower() and _SENTENCE_PUNCTUATION.search(text) is None


def _candidates(tokens: Tokens, gap_probs: np.ndarray) -> GapProbabilities:
    """Keep gaps before word-start tokens; a boundary sits at that token's first character."""
    if len(tokens) < 2:
        return GapProbabilities(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
    keep = tokens.word_start[1:]
    return GapProbabilities(tokens.offsets[1:, 0][keep], gap_probs[keep])


def _refuse_one_text(texts, name: str, instead: str) -> None:
    """A str (or bytes) where an iterable of texts belongs would be read character by character."""
    if isinstance(texts, str | bytes):
        raise TypeError(f"{name} must be an iterable of str, not one {type(texts).__name__}; use {instead}")


def _path_or_name(name: str, value, accepted: str) -> str | None:
    """`value` (None, a name or a path) as a str or None; ConfigError for anything else."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise ConfigError(f"{name} must be None, {accepted}, got {type(value).__name__} {value!r}")


def _chunks(texts: Iterable[str], size: int) -> Iterator[list[str]]:
    chunk: list[str] = []
    for text in texts:
        chunk.append(text)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


@dataclass(frozen=True)
class ProbeSettings:
    """What a probe's meta file says about running it."""

    features: FeatureConfig
    window: WindowConfig
    threshold: float
    thresholds: dict[str, float]  # per condition ("clean", "corrupt"), possibly empty


def settings_from_meta(meta: dict, source: str = "the probe's meta") -> ProbeSettings:
    """Feature config, window config and thresholds recorded in a probe's meta; ProbeError naming
    `source` when a field is missing or malformed."""
    try:
        features = FeatureConfig(
            layers=tuple(int(layer) for layer in meta["layers"]),
            vectors=bool(meta["vectors"]),
            signals=bool(meta["signals"]),
            span=int(meta["span"]),
            hidden=bool(meta.get("hidden", False)),
            context=int(meta.get("context", 1)),
            surface=bool(meta.get("surface", False)),
            lines=bool(meta.get("lines", False)),
        )
        window = WindowConfig(size=int(meta["window"]["size"]), stride=int(meta["window"]["stride"]))
        threshold = float(meta["threshold"])
        thresholds = {str(k): float(v) for k, v in (meta.get("thresholds") or {}).items()}
        if not all(0.0 <= t <= 1.0 for t in [threshold, *thresholds.values()]):
            raise ValueError("thresholds must lie between 0 and 1")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ProbeError(
            f"{source} lacks or garbles a field ({exc}); retrain with `segmenter train`"
        ) from exc
    return ProbeSettings(features, window, threshold, thresholds)


def expected_width(features: FeatureConfig, encoder: Encoder) -> int:
    """Length of one gap's feature vector for `features` on `encoder`."""
    layers = len(features.layers)
    per_token = (
        (len(SIGNALS) * encoder.n_heads * layers if features.signals else 0)
        + (encoder.n_heads * encoder.head_dim * layers if features.vectors else 0)
        + (encoder.hidden_size * layers if features.hidden else 0)
        + (flag_count(features.lines) if features.surface else 0)
    )
    return 2 * features.context * per_token


def check_probe_fits(probe: Probe, features: FeatureConfig, encoder: Encoder) -> None:
    """Refuse, before any text is read, a probe made for another backbone or feature set."""
    trained_on = probe.meta.get("backbone")
    if trained_on is not None and trained_on != encoder.name:
        raise ProbeError(
            f"probe was trained on backbone {trained_on!r} but the model is {encoder.name!r}; "
            f"train one with `segmenter train --model {encoder.name}`"
        )
    width = expected_width(features, encoder)
    if probe.dimension != width:
        where = "the probe" if probe.source is None else f"{Path(probe.source) / 'meta.json'}"
        raise ProbeError(
            f"{where} describes {width} features per gap but the probe's arrays take {probe.dimension}; "
            "the probe files do not belong together, retrain with `segmenter train`"
        )
