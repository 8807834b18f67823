"""Frozen configuration dataclasses and their validation.

Every knob the segmenter has lives here, validated once at construction with an error that names the
field and the accepted range. Nothing in this module touches models, tokenizers or text.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from segmenter.errors import ConfigError

STRATEGIES = ("probe", "sep-attention", "similarity")
PRESETS = ("accurate", "fast", "signals")  # shipped probes per backbone: segmenter/models/<backbone>/<preset>
RETIRED_PRESETS = {  # preset -> why it is gone and what to use instead
    "frozen": "it was trained on the UD English dev files, which the presets are now chosen on; use "
    "'accurate', or train a probe of the untuned encoder with `segmenter train --data ud-train`",
}
DEFAULT_PRESET = "accurate"
PRECISIONS = ("auto", "float32", "bfloat16")  # encoder arithmetic; see `segmenter.encoder.resolve_precision`


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
    lines:    add the line features (`segmenter.line_features`: a line break before the token, the
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
    """

    threshold: float = 0.5
    max_chars: int | None = None

    def __post_init__(self) -> None:
        check_probability("threshold", self.threshold)
        if self.max_chars is not None:
            check_integer("max_chars", self.max_chars, 1, "or None")


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
