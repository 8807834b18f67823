"""Build a segmenter's reader tree once, from its `SegmenterConfig` and the probe metadata.

`build_reading` loads the probe (the shipped preset, a folder, or a `Probe`), reads its meta
(`segmenter.probe.meta.ProbeMeta`), chooses each encoder's precision (`encoder_precision`), opens the
encoders (`segmenter.encoder.loader.open_encoder`) and assembles the tree of
`segmenter.readers.tree`: a `ProbeReader` of the probe; under a `RouteReader` with its punctuated probe
where the meta names one; its averaged probes as one `MeanScorer`; a `MeanReader` with the partner's
tree where the meta names a partner. Every probe is checked against its encoder before any text is
read. The thresholds of each text condition come with it (a `Reading`).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from types import MappingProxyType

from segmenter.config import DecodeConfig, FeatureConfig, SegmenterConfig, WindowConfig
from segmenter.encoder.backbones import DEFAULT_MODEL_NAME
from segmenter.encoder.backend import probe_precision
from segmenter.encoder.loader import open_encoder
from segmenter.encoder.protocol import EncoderInterface
from segmenter.errors import ProbeError
from segmenter.probe.features import SIGNALS
from segmenter.probe.meta import ProbeMeta
from segmenter.probe.probe import Probe
from segmenter.probe.shipped import load_probe_for
from segmenter.readers.gap_scorer import GapScorer, MeanScorer
from segmenter.readers.tree import MeanReader, ProbeReader, Reading, RouteReader
from segmenter.text.conditions import CLEAN, CORRUPT, SPOKEN, TEXT_CONDITIONS
from segmenter.text.surface import flag_count

# Unsupervised strategies: layers and thresholds chosen on ewt-dev (best single-signal F1 per layer;
# see docs/model-selection.md). A score z maps to probability sigmoid(z), so 0.78 means z >= 1.27.
UNSUPERVISED = {
    "sep-attention": (FeatureConfig(layers=(2, 3), vectors=False), 0.78),
    "similarity": (FeatureConfig(layers=(4,), vectors=False), 0.79),
}


def build_reading(config: SegmenterConfig) -> tuple[Reading, GapScorer, Probe | None]:
    """The reader tree of `config` with its decoding settings per condition, the scorer of the probe
    itself (of unpunctuated text, where a punctuated probe reads the rest) and the probe (None for an
    unsupervised strategy)."""
    backbone = DEFAULT_MODEL_NAME if config.model is None else config.model
    probe: Probe | None = None
    settings: ProbeMeta | None = None
    punctuated: tuple[Probe, ProbeMeta] | None = None
    averaged: list[tuple[Probe, ProbeMeta]] = []
    if config.strategy == "probe":
        try:
            probe = load_probe_for(backbone, config.probe, config.preset)
        except ProbeError:
            if config.model is not None:  # a missing model is the first thing to report
                from segmenter.encoder.torch.encoder import Encoder

                Encoder(config.model, device=config.device, max_layer=1)
            raise
        settings = settings_from_meta(probe.meta, source=_meta_file(probe))
        punctuated = _punctuated_probe(probe, settings)
        averaged = _averaged_probes(probe, settings)
    threshold, max_chars = config.threshold, config.max_chars
    scorer, (default_threshold, per_condition) = _open_scorer(config, probe, settings)
    if averaged:  # the probe's thresholds are the mean's; each member's encoder opens on first use
        for inner, inner_settings in averaged:  # a member that cannot fit is refused now, not then
            check_probe_fits(inner, inner_settings.features, scorer.encoder)
        scorer = MeanScorer(scorer, [partial(_open_member, config, *inner) for inner in averaged])
    decoding = DecodeConfig(
        threshold=default_threshold if threshold is None else threshold, max_chars=max_chars
    )
    # A probe tuned per condition gets the unpunctuated threshold on text with no case or punctuation,
    # and the spoken one (where it has one) on unpunctuated text that reads as speech.
    decodings = {
        condition: DecodeConfig(threshold=per_condition[condition], max_chars=max_chars)
        if threshold is None and condition in per_condition
        else decoding
        for condition in TEXT_CONDITIONS
    }
    decodings[SPOKEN] = _spoken(decodings[CORRUPT], per_condition, threshold)
    reader: ProbeReader | RouteReader | MeanReader = ProbeReader(scorer, config.batch_size)
    if punctuated is not None:  # punctuated text goes to the probe its meta names for it
        punctuated_scorer, (one, per) = _open_scorer(config, *punctuated)
        decodings[CLEAN] = DecodeConfig(
            threshold=per.get(CLEAN, one) if threshold is None else threshold, max_chars=max_chars
        )
        punctuated_reader = ProbeReader(punctuated_scorer, config.batch_size)
        reader = RouteReader({CLEAN: punctuated_reader, CORRUPT: reader, SPOKEN: reader})
    # A probe that names a partner reads every text with it: the mean of both gap probabilities,
    # decoded with the thresholds chosen for that mean.
    if settings is not None and settings.paired_with is not None and config.paired:
        preset, paired_thresholds = settings.paired_with
        partner, _, _ = build_reading(
            replace(config, model=None, probe=None, preset=preset, threshold=None, paired=False)
        )
        reader = MeanReader([reader, partner.reader])
        for condition in TEXT_CONDITIONS:
            if threshold is None and condition in paired_thresholds:
                decodings[condition] = DecodeConfig(paired_thresholds[condition], max_chars)
        decodings[SPOKEN] = _spoken(decodings[CORRUPT], paired_thresholds, threshold)
    decodings = {
        condition: replace(decoding, layout=config.layout) for condition, decoding in decodings.items()
    }
    return Reading(reader, MappingProxyType(decodings)), scorer, probe


def _spoken(unpunctuated: DecodeConfig, per_condition: dict, threshold: float | None) -> DecodeConfig:
    """The decoding of spoken text: the unpunctuated one, at the spoken threshold where `per_condition`
    has one and no threshold is forced."""
    if threshold is None and SPOKEN in per_condition:
        return replace(unpunctuated, threshold=per_condition[SPOKEN])
    return unpunctuated


def encoder_precision(
    config: SegmenterConfig, features: FeatureConfig, settings: ProbeMeta | None = None
) -> str:
    """The precision a reader with `features` (and a probe's `settings`; None for a strategy) asks of
    its encoder under `config` (`segmenter.encoder.backend.probe_precision`): "int8" for "auto" where
    the probe names it and the CPU does int8 natively; a ConfigError where int8 is asked of a reader
    that reads attention or per-head vectors."""
    return probe_precision(
        config.precision,
        config.device,
        reads_inside=features.signals or features.vectors,
        automatic=None if settings is None else settings.automatic_precision,
        automatic_cpus=() if settings is None else tuple(settings.automatic_precision_cpus),
        reader="probe" if settings is not None else f"strategy {config.strategy!r}",
    )


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


def expected_width(features: FeatureConfig, encoder: EncoderInterface) -> int:
    """Length of one gap's feature vector for `features` on `encoder`."""
    layers = len(features.layers)
    per_token = (
        (len(SIGNALS) * encoder.n_heads * layers if features.signals else 0)
        + (encoder.n_heads * encoder.head_dim * layers if features.vectors else 0)
        + (encoder.hidden_size * layers if features.hidden else 0)
        + (flag_count(features.lines) if features.surface else 0)
    )
    return 2 * features.context * per_token


def check_probe_fits(probe: Probe, features: FeatureConfig, encoder: EncoderInterface) -> None:
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
