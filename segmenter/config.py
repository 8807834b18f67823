"""Frozen configuration dataclasses and their validation.

Every knob the segmenter has lives here, validated once at construction with an error that names the
field and the accepted range. Nothing in this module touches models, tokenizers or text.
"""

from __future__ import annotations

import numbers
import os
from dataclasses import dataclass, fields

from segmenter.errors import ConfigError

STRATEGIES = ("probe", "sep-attention", "similarity")
# shipped probes per backbone: models/<backbone>/<preset>
PRESETS = ("accurate", "fast", "fastest", "signals")
RETIRED_PRESETS = {  # preset -> why it is gone and what to use instead
    "frozen": "it was trained on the UD English dev files, which the presets are now chosen on; use "
    "'accurate', or train a probe of the untuned encoder with `segmenter train probe --data ud-train`",
}
DEFAULT_PRESET = "accurate"
PRECISIONS = ("auto", "float32", "bfloat16", "int8")  # encoder arithmetic: segmenter.encoder.backend
LAYOUTS = ("auto", "markdown", "plain")  # markdown block structure read: segmenter.decode.markdown


@dataclass(frozen=True)
class WindowConfig:
    """How a long token sequence is cut into encoder windows.

    size:   tokens per window including [CLS] and [SEP] (at most the model's max positions).
    stride: tokens between the starts of consecutive windows; `stride < size - 2` gives overlap,
            and features of a token seen by several windows are averaged (weighted towards window centres).
    """

    size: int = 256
    stride: int = 192

    def __post_init__(self) -> None:
        if self.size < 8:
            raise ConfigError(f"window size must be at least 8 tokens, got {self.size}")
        if not 1 <= self.stride <= self.size - 3:
            # consecutive windows must share at least one token so every gap lies inside a window
            raise ConfigError(
                f"window stride must be between 1 and size-3={self.size - 3} tokens, got {self.stride}"
            )

    @property
    def content(self) -> int:
        """Text tokens per window (the window minus [CLS] and [SEP])."""
        return self.size - 2


@dataclass(frozen=True)
class FeatureConfig:
    """Which encoder signals describe a gap between two tokens.

    layers:   1-based transformer layers to read (layer 1 is the first block after the embeddings).
    vectors:  include the per-head context vectors of the tokens on both sides of the gap.
    hidden:   include the block outputs (residual stream) of the tokens on both sides of the gap.
    signals:  include the paper's scalar signals (separator attention, similarity contrast).
    span:     tokens on each side of a gap used by the similarity contrast.
    surface:  include case and punctuation flags of the original characters (uncased models lose case).
    lines:    add the line features (`segmenter.text.line_features`: a line break before the token, the
              length of the line it ends) to the surface flags (needs `surface`).
    context:  tokens on each side of a gap whose features describe it (1: the two tokens around it).
    """

    layers: tuple[int, ...] = (2, 3, 4)
    vectors: bool = True
    signals: bool = True
    hidden: bool = False
    surface: bool = False
    lines: bool = False
    span: int = 4
    context: int = 1

    def __post_init__(self) -> None:
        if not self.layers:
            raise ConfigError("at least one layer must be selected")
        if any(layer < 1 for layer in self.layers):
            raise ConfigError(f"layers are 1-based and positive, got {self.layers}")
        if tuple(sorted(set(self.layers))) != tuple(self.layers):
            raise ConfigError(f"layers must be strictly increasing, got {self.layers}")
        if not (self.vectors or self.signals or self.hidden or self.surface):
            raise ConfigError("features need at least one of vectors, signals, hidden, surface")
        if self.lines and not self.surface:
            raise ConfigError("line features are surface features: lines=True needs surface=True")
        if self.context < 1:
            raise ConfigError(f"context must be at least 1 token on each side, got {self.context}")
        if self.span < 1:
            raise ConfigError(f"similarity span must be at least 1 token, got {self.span}")


@dataclass(frozen=True)
class DecodeConfig:
    """How boundary probabilities become segments.

    threshold: a gap whose probability is at least this is a boundary.
    max_chars: optional hard cap on segment length; an over-long segment is split at its most
               probable gaps until every piece fits (None: no cap).
    layout:    how markdown block structure is read (`segmenter.decode.markdown.LAYOUTS`): "auto" (every
               block kind plain text cannot have by accident), "markdown" (indented code and HTML
               blocks too) or "plain" (none).
    """

    threshold: float = 0.5
    max_chars: int | None = None
    layout: str = "auto"

    def __post_init__(self) -> None:
        check_probability("threshold", self.threshold)
        check_layout(self.layout)
        if self.max_chars is not None:
            check_integer("max_chars", self.max_chars, 1, "or None")


@dataclass(frozen=True)
class SegmenterConfig:
    """Everything a `Segmenter` is built from, validated at construction (nothing loads here). The
    library, the CLI (`segmenter segment`, `topics`, `--engine ray`) and the spaCy component all build
    one and pass it whole.

    model:      None (the packaged all-MiniLM-L6-v2), a Hugging Face id, or a local path.
    strategy:   "probe" (a trained probe), "sep-attention" or "similarity" (the paper's unsupervised
                scores).
    threshold:  boundary probability cut-off (None: the probe's tuned ones, per condition, or the
                strategy's).
    device:     torch device of the encoder.
    batch_size: encoder windows per forward pass.
    probe:      a probe folder from `segmenter train`, or a loaded `segmenter.probe.probe.Probe`
                (None: the shipped `preset` for the model).
    max_chars:  optional cap on segment length.
    precision:  "auto" (int8 where the probe names it as its automatic precision and the CPU does int8
                natively, as the shipped `accurate` and `fast` do; else bfloat16 where the hardware has it
                natively, else float32), "float32", "bfloat16" or "int8" (the encoder through ONNX Runtime
                with int8 weights, CPU only, for probes that read block outputs only:
                `segmenter.encoder.onnx.export`). Each precision decodes with the thresholds the probe has for
                it.
    preset:     the shipped probe used when `probe` is None: "accurate" (the default), "fast",
                "fastest" or "signals" (models/README.md).
    paired:     where the probe names a partner (its meta's `paired_with`, as all-mpnet-base-v2's
                `accurate` does), average the partner's gap probabilities with the probe's
                (`segmenter.readers.tree`); False reads the probe alone, with its own thresholds.
    layout:     markdown block structure read by the decoder: "auto", "markdown" or "plain"
                (`DecodeConfig.layout`).
    """

    model: str | None = None
    strategy: str = "probe"
    threshold: float | None = None
    device: str = "cpu"
    batch_size: int = 16
    probe: object = None  # str | segmenter.probe.probe.Probe | None (a PathLike is stored as str)
    max_chars: int | None = None
    precision: str = "auto"
    preset: str = DEFAULT_PRESET
    paired: bool = True
    layout: str = "auto"

    def __post_init__(self) -> None:
        check_strategy(self.strategy)
        check_layout(self.layout)
        if not isinstance(self.paired, bool):
            raise ConfigError(f"paired must be True or False, got {self.paired!r}")
        check_preset(self.preset)
        check_precision(self.precision)
        check_batch_size(self.batch_size)
        DecodeConfig(threshold=0.5 if self.threshold is None else self.threshold, max_chars=self.max_chars)
        object.__setattr__(
            self, "model", _path_or_name("model", self.model, "a Hugging Face id or a local path")
        )
        if not isinstance(self.device, str):
            raise ConfigError(f"device must be a name such as cpu or cuda, got {self.device!r}")
        if self.probe is None or isinstance(self.probe, str | os.PathLike):
            object.__setattr__(self, "probe", _path_or_name("probe", self.probe, "a folder or a Probe"))
        # any other object must be a loaded Probe: `Segmenter` checks that (this module loads no models)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(field.name for field in fields(cls))


def _path_or_name(name: str, value, accepted: str) -> str | None:
    """`value` (None, a name or a path) as a str or None; ConfigError for anything else."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise ConfigError(f"{name} must be None, {accepted}, got {type(value).__name__} {value!r}")


def check_strategy(strategy: str) -> str:
    """Return `strategy` if it is known, else raise a ConfigError listing the choices."""
    if strategy not in STRATEGIES:
        raise ConfigError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
    return strategy


def check_preset(preset: str) -> str:
    """Return `preset` if it is known, else raise a ConfigError listing the choices."""
    if preset in RETIRED_PRESETS:
        raise ConfigError(f"preset {preset!r} was retired: {RETIRED_PRESETS[preset]}")
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
    return preset


def check_precision(precision: str) -> str:
    """Return `precision` if it is known, else raise a ConfigError listing the choices."""
    if precision not in PRECISIONS:
        raise ConfigError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    return precision


def check_layout(layout: str) -> str:
    """Return `layout` if it is known, else raise a ConfigError listing the choices."""
    if layout not in LAYOUTS:
        raise ConfigError(f"unknown layout {layout!r}; choose one of {', '.join(LAYOUTS)}")
    return layout


def check_batch_size(batch_size: int) -> int:
    return check_integer("batch_size", batch_size, 1)


def check_integer(name: str, value, minimum: int, alternative: str = "") -> int:
    """`value` as an int if it is a whole number (not a bool, nor a float such as 1.5) of at least
    `minimum`, else a ConfigError naming `name`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        also = f" {alternative}" if alternative else ""
        raise ConfigError(f"{name} must be a whole number of at least {minimum}{also}, got {value!r}")
    return int(value)


def check_probability(name: str, value) -> float:
    """`value` as a float if it is a number between 0 and 1 (not a bool, a string or nan), else a
    ConfigError naming `name`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value <= 1.0:
        raise ConfigError(f"{name} must be a number between 0 and 1, got {value!r}")
    return float(value)
