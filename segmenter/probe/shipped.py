"""Where the shipped probes are: the package `segmenter.models` (the checkout's top-level `models/`),
one folder per backbone and preset, and loading the one a segmenter asks for."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from segmenter.config import DEFAULT_PRESET, check_preset
from segmenter.encoder.backbones import short_name
from segmenter.errors import ProbeError
from segmenter.probe.probe import Probe

MODELS_PACKAGE = "segmenter.models"


def models_dir() -> Path:
    """Folder holding shipped probes: $SEGMENTER_MODELS, else the package `segmenter.models` (the
    checkout's top-level `models/`, installed as package data), found without running its code."""
    override = os.environ.get("SEGMENTER_MODELS")
    if override:
        return Path(override)
    spec = importlib.util.find_spec(MODELS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return Path(__file__).resolve().parent / "models"  # where a wheel puts it
    return Path(spec.submodule_search_locations[0]).resolve()


def probe_dir_for(backbone: str, preset: str = DEFAULT_PRESET) -> Path:
    """Where the shipped probe of `preset` for `backbone` lives: models/<backbone, '/' as '--'>/<preset>,
    a known backbone's hub id read as its short name (`segmenter.encoder.backbones.short_name`)."""
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
