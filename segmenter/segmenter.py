"""`Segmenter`: text in, sentence spans out, through one encoder pass over sliding windows.

It resolves a `SegmenterConfig` into the parts of the one inference path: the probe and its settings
(features, window, thresholds per condition and precision), the encoder precision ("auto" is int8
where the probe names it and the CPU does int8 natively), the encoder (with the probe's deltas merged;
at int8 from the cache without torch, `segmenter.compiled`) and the `GapScorer` over them. Flow:
tokenize with offsets -> plan windows -> run windows -> gap features -> gap probabilities (probe or
an unsupervised score) -> weighted average over overlapping windows -> decode at word-start gaps into
spans. `segment` and `segment_stream` feed one `TextStream`; `pipe`
and `gap_probabilities` pool the windows of many whole texts into shared batches. The text is never
modified; every span is an offset range into the caller's string.

Training lives in `segmenter.train`; the spaCy wrapper in `segmenter.spacy_component`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from segmenter.backbones import DEFAULT_MODEL_NAME, short_name
from segmenter.compiled import open_encoder
from segmenter.conditions import CLEAN, TEXT_CONDITIONS
from segmenter.config import (
    DEFAULT_PRESET,
    DecodeConfig,
    FeatureConfig,
    SegmenterConfig,
    WindowConfig,
    check_batch_size,
    check_preset,
)
from segmenter.decode import Span, decode
from segmenter.errors import ConfigError, ProbeError
from segmenter.features import SIGNALS
from segmenter.gap_scorer import GapScorer, MeanScorer
from segmenter.int8_runtime import int8_path
from segmenter.line_features import TEXT_START, LineState
from segmenter.paired import CandidateSink, PairedStream, mean_gap_probabilities
from segmenter.probe import Probe
from segmenter.probe_meta import ProbeMeta
from segmenter.stream import TextStream, condition_for
from segmenter.surface import flag_count
from segmenter.tokens import Tokens

if TYPE_CHECKING:  # a segmenter.compiled.CompiledEncoder serves as well
    from segmenter.encoder import Encoder

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
    """Where the shipped probe of `preset` for `backbone` lives: models/<backbone, '/' as '--'>/<preset>,
    a known backbone's hub id read as its short name (`segmenter.backbones.short_name`)."""
    return models_dir() / short_name(backbone).replace("/", "--") / check_preset(preset)


def load_probe_for(backbone: str, probe: str | Path | Probe | None, preset: str = DEFAULT_PRESET) -> Probe:
    """`probe` itself, the probe in folder `probe`, or (None) the shipped `preset` for `backbone`."""
    if isinstance(probe, Probe):
        return probe
    folder = Path(probe) if probe is not None else probe_dir_for(backbone, preset)
    if probe is None and not folder.is_dir():
        raise ProbeError(
            f"no trained probe for backbone {backbone!r} (preset {preset}) in {folder.parent}; "
            f"train one with `segmenter train probe --model {backbone}` and pass it with --probe, "
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
        backbone = DEFAULT_MODEL_NAME if config.model is None else config.model
        self.probe: Probe | None = None
        settings: ProbeMeta | None = None
        punctuated: tuple[Probe, ProbeMeta] | None = None
        averaged: list[tuple[Probe, ProbeMeta]] = []
        if config.strategy == "probe":
            try:
                self.probe = load_probe_for(backbone, config.probe, config.preset)
            except ProbeError:
                if config.model is not None:  # a missing model is the first thing to report
                    from segmenter.encoder import Encoder

                    Encoder(config.model, device=config.device, max_layer=1)
                raise
            settings = settings_from_meta(self.probe.meta, source=_meta_file(self.probe))
            punctuated = _punctuated_probe(self.probe, settings)
            averaged = _averaged_probes(self.probe, settings)
        threshold, max_chars = config.threshold, config.max_chars
        self.scorer, (default_threshold, per_condition) = _open_scorer(config, self.probe, settings)
        if averaged:  # the probe's thresholds are the mean's; each member's encoder opens on first use
            for inner, inner_settings in averaged:  # a member that cannot fit is refused now, not then
                check_probe_fits(inner, inner_settings.features, self.scorer.encoder)
            opens = [partial(_open_member, config, *inner) for inner in averaged]
            self.scorer = MeanScorer(self.scorer, opens)
        self.decoding = DecodeConfig(
            threshold=default_threshold if threshold is None else threshold, max_chars=max_chars
        )
        # A probe tuned per condition gets the unpunctuated threshold on text with no case or punctuation.
        self._decodings = {
            condition: DecodeConfig(threshold=per_condition[condition], max_chars=max_chars)
            if threshold is None and condition in per_condition
            else self.decoding
            for condition in TEXT_CONDITIONS
        }
        # The scorer of each condition: the probe's, except where its meta names a punctuated probe.
        self._scorers = {condition: self.scorer for condition in TEXT_CONDITIONS}
        if punctuated is not None:
            scorer, (one, per) = _open_scorer(config, *punctuated)
            self._scorers[CLEAN] = scorer
            self._decodings[CLEAN] = DecodeConfig(
                threshold=per.get(CLEAN, one) if threshold is None else threshold, max_chars=max_chars
            )
        # A probe that names a partner reads every text with it: the mean of both gap probabilities,
        # decoded with the thresholds chosen for that mean (`segmenter.paired`).
        self.partner: Segmenter | None = None
        if settings is not None and settings.paired_with is not None and config.paired:
            preset, paired_thresholds = settings.paired_with
            self.partner = Segmenter(
                replace(config, model=None, probe=None, preset=preset, threshold=None, paired=False)
            )
            for condition in TEXT_CONDITIONS:
                if threshold is None and condition in paired_thresholds:
                    self._decodings[condition] = DecodeConfig(paired_thresholds[condition], max_chars)

    @property
    def encoder(self) -> Encoder:
        """The encoder of the probe itself (of unpunctuated text, where a punctuated probe reads the rest)."""
        return self.scorer.encoder

    @property
    def scorers(self) -> Mapping[str, GapScorer]:
        """The gap scorer that reads each condition's texts ("clean", "corrupt"): one scorer for both,
        except where the probe names a punctuated probe."""
        return MappingProxyType(self._scorers)

    @property
    def decodings(self) -> Mapping[str, DecodeConfig]:
        """The decoding settings of each condition's texts ("clean", "corrupt"): `decoding_for`'s."""
        return MappingProxyType(self._decodings)

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

    def stream(self) -> TextStream | PairedStream:
        """A `TextStream` of this segmenter (a `PairedStream` where it reads with a partner): `feed` it
        chunks, then `close` it."""
        if self.partner is None:
            return self._text_stream()
        sinks = [CandidateSink(self._decodings[CLEAN]), CandidateSink(self.partner._decodings[CLEAN])]
        return PairedStream([self._text_stream(sinks[0]), self.partner._text_stream(sinks[1])], sinks)

    def _text_stream(self, decoder: CandidateSink | None = None) -> TextStream:
        return TextStream(self._scorers, self.batch_size, self._decodings, decoder)

    def _stream_spans(self, chunks: Iterable[str]) -> Iterator[Span]:
        stream = self.stream()
        for chunk in chunks:
            yield from stream.feed(chunk)
        yield from stream.close()

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
            for text, gaps in zip(chunk, self.gap_probabilities(chunk, batch_size), strict=True):
                yield self.decode(text, gaps)

    def decode(self, text: str, gaps: GapProbabilities) -> list[Span]:
        """Spans of `text` from its gap probabilities, with the threshold that fits the text."""
        return decode(text, gaps.offsets, gaps.probs, self.decoding_for(text))

    def decoding_for(self, text: str) -> DecodeConfig:
        """The decoding settings for `text`: those of its `condition_for`."""
        return self._decodings[condition_for(text)]

    @staticmethod
    def condition_for(text: str) -> str:
        """ "corrupt" (read with the unpunctuated threshold) or "clean": `segmenter.stream.condition_for`."""
        return condition_for(text)

    def gap_probabilities(self, texts: list[str], batch_size: int | None = None) -> list[GapProbabilities]:
        """Boundary probability of every candidate gap of every text (pure: no decoding)."""
        _refuse_one_text(texts, "texts", "segment(text)")
        size = check_batch_size(self.batch_size if batch_size is None else batch_size)
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"texts must be str, got {type(text).__name__}")
        tokens = [self.tokenize(text) for text in texts]  # every condition's scorer reads the same tokens
        if self._scorers[CLEAN] is self.scorer:  # one scorer for every text
            scores = self.scorer.gap_scores(tokens, size)
        else:
            scores = [None] * len(texts)
            groups: dict[str, list[int]] = {}
            for i, text in enumerate(texts):
                groups.setdefault(condition_for(text), []).append(i)
            for condition, mine in groups.items():
                found = self._scorers[condition].gap_scores([tokens[i] for i in mine], size)
                for i, text_scores in zip(mine, found, strict=True):
                    scores[i] = text_scores
        found = [_candidates(t, s) for t, s in zip(tokens, scores, strict=True)]
        if self.partner is not None:
            theirs = self.partner.gap_probabilities(texts, batch_size)
            found = [mean_gap_probabilities([a, b]) for a, b in zip(found, theirs, strict=True)]
        return found

    def tokenize(self, text: str, line_state: LineState = TEXT_START) -> Tokens:
        """`text`'s tokens with the surface features this segmenter's probe reads."""
        return self.scorer.tokenize(text, line_state)


def encoder_precision(
    config: SegmenterConfig, features: FeatureConfig, settings: ProbeMeta | None = None
) -> str:
    """The encoder precision: `config.precision`, except that "auto" becomes "int8" where the probe's
    `settings` name int8 as its automatic precision, the encoder runs on the CPU and the CPU does int8
    natively by a path those settings allow (`segmenter.int8_runtime.int8_path`,
    `ProbeMeta.automatic_precision_cpus`); any other "auto" is left to the encoder (bfloat16 or
    float32). int8 returns block outputs only, so a probe or strategy that reads attention or per-head
    vectors refuses it with a ConfigError (and never gets it automatically)."""
    reads_inside = features.signals or features.vectors
    if config.precision == "int8" and reads_inside:
        reader = "probe" if settings is not None else f"strategy {config.strategy!r}"
        raise ConfigError(
            f"precision 'int8' returns block outputs only; this {reader} reads attention or per-head "
            "vectors: use --precision auto"
        )
    automatic = settings is not None and settings.automatic_precision == "int8"
    if config.precision == "auto" and automatic and config.device == "cpu" and not reads_inside:
        path, cpus = int8_path(), settings.automatic_precision_cpus
        return "int8" if path is not None and (not cpus or path in cpus) else "auto"
    return config.precision


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


def _chunks(texts: Iterable[str], size: int) -> Iterator[list[str]]:
    chunk: list[str] = []
    for text in texts:
        chunk.append(text)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


ProbeSettings = ProbeMeta  # what a probe's meta file says about running it (features, window, thresholds)


def settings_from_meta(meta: dict, source: str = "the probe's meta") -> ProbeMeta:
    """Feature config, window config and thresholds recorded in a probe's meta (`ProbeMeta.from_json`);
    ProbeError naming `source` when a field is missing or malformed."""
    return ProbeMeta.from_json(meta, source)


def _meta_file(probe: Probe) -> str:
    """How errors name `probe`'s meta: its meta.json's path where it was loaded from a folder."""
    return "the probe's meta" if probe.source is None else str(Path(probe.source) / "meta.json")


def _punctuated_probe(probe: Probe, settings: ProbeMeta) -> tuple[Probe, ProbeMeta] | None:
    """The probe that reads punctuated text in `probe`'s place (`Probe.punctuated`, named by its meta's
    `punctuated_probe`) and its settings, or None; a ProbeError when it is missing or reads otherwise."""
    if settings.punctuated_probe is None:
        return None
    punctuated = probe.punctuated
    if punctuated is None:
        raise ProbeError(
            f"{_meta_file(probe)} names a punctuated probe ({settings.punctuated_probe!r}) that the probe "
            "does not hold; load the probe from its folder with Probe.load"
        )
    return punctuated, _inner_settings(punctuated, probe, settings, "a punctuated probe")


def _averaged_probes(probe: Probe, settings: ProbeMeta) -> list[tuple[Probe, ProbeMeta]]:
    """The probes read beside `probe` and averaged with it (`Probe.averaged`, named by its meta's
    `averaged_probes`) with their settings; a ProbeError when one is missing or reads otherwise."""
    if len(probe.averaged) != len(settings.averaged_probes):
        raise ProbeError(
            f"{_meta_file(probe)} names averaged probes ({', '.join(settings.averaged_probes)}) that the "
            "probe does not hold; load the probe from its folder with Probe.load"
        )
    return [(inner, _inner_settings(inner, probe, settings, "an averaged probe")) for inner in probe.averaged]


def _inner_settings(inner: Probe, probe: Probe, settings: ProbeMeta, role: str) -> ProbeMeta:
    """The settings of `inner`, a probe inside `probe` that reads in its place or beside it; a
    ProbeError unless it reads the same features (its blocks aside), windows and backbone."""
    own = settings_from_meta(inner.meta, source=_meta_file(inner))
    # Each scorer runs its own encoder, so the blocks read may differ; the tokens both read may not.
    features = replace(own.features, layers=settings.features.layers)
    if (features, own.window, own.backbone) != (settings.features, settings.window, settings.backbone):
        raise ProbeError(
            f"{_meta_file(inner)} reads other features, windows or backbone than "
            f"{_meta_file(probe)}; {role} must read the same (its blocks aside)"
        )
    if own.punctuated_probe is not None or own.averaged_probes:
        raise ProbeError(f"{_meta_file(inner)}: {role} cannot name probes of its own")
    return own


def _open_scorer(
    config: SegmenterConfig, probe: Probe | None, settings: ProbeMeta | None
) -> tuple[GapScorer, tuple[float, dict]]:
    """The gap scorer of `probe` read with its `settings` (None, None: of `config.strategy`) and the
    (threshold, per-condition thresholds) it decodes with at the encoder precision it gets."""
    if probe is not None and settings is not None:
        features, window = settings.features, settings.window
        precision = encoder_precision(config, features, settings)
        one, per = settings.thresholds_at(precision)
    else:
        features, one = UNSUPERVISED[config.strategy]
        window, per = WindowConfig(), {}
        precision = encoder_precision(config, features)
    encoder = open_encoder(
        config.model,
        device=config.device,
        max_layer=max(features.layers),
        precision=precision,
        deltas=probe.deltas if probe is not None else None,
        pruning=probe.pruning if probe is not None else None,
    )
    if window.size > encoder.max_positions:
        window = WindowConfig(size=encoder.max_positions, stride=encoder.max_positions // 2)
    if probe is not None:
        check_probe_fits(probe, features, encoder)
    return GapScorer(encoder, features, window, probe, config.strategy), (one, dict(per))


def _open_member(config: SegmenterConfig, probe: Probe, settings: ProbeMeta) -> GapScorer:
    """The gap scorer of `probe`, a member of a `MeanScorer` (its thresholds are the mean's)."""
    return _open_scorer(config, probe, settings)[0]


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
            f"train one with `segmenter train probe --model {encoder.name}`"
        )
    width = expected_width(features, encoder)
    if probe.dimension != width:
        where = "the probe" if probe.source is None else f"{Path(probe.source) / 'meta.json'}"
        raise ProbeError(
            f"{where} describes {width} features per gap but the probe's arrays take {probe.dimension}; "
            "the probe files do not belong together, retrain with `segmenter train`"
        )
