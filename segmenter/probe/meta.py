"""The schema of a probe's meta file (meta.json): written by training and tuning, read by the segmenter.

`ProbeMeta` holds what running a probe needs (the features it reads, the window it was trained on, its
thresholds: one for all text and one per condition of `segmenter.text.conditions`) and where its features
came from (backbone, precision), then the training record (data, recipe, seeds, sizes, held-out
scores, date), which is kept for people and never read back. `to_json` gives the dict written to
meta.json, its keys as they have always been; `from_json` reads one back and refuses a missing or
garbled field with one ProbeError naming the file. The files themselves are read and written by
`segmenter.probe.probe`; nothing here reads a model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from segmenter.config import FeatureConfig, WindowConfig
from segmenter.encoder.cpu import INT8_PATHS
from segmenter.errors import ConfigError, ProbeError

# The keys of meta.json that ProbeMeta reads into its own fields; every other key is training record.
FEATURE_KEYS = ("layers", "vectors", "signals", "span", "hidden", "context", "surface", "lines")
SETTING_KEYS = (
    "backbone",
    "precision",
    *FEATURE_KEYS,
    "window",
    "threshold",
    "thresholds",
    "thresholds_by_precision",
    "automatic_precision",
    "automatic_precision_cpus",
    "punctuated_probe",
    "averaged_probes",
    "paired_with",
)
AUTOMATIC_PRECISIONS = ("int8",)  # what a probe may name as its automatic precision


@dataclass(frozen=True)
class ProbeMeta:
    """What a probe's meta file says.

    features:   the gap features the probe reads.
    window:     the encoder windows it was trained on (and is run with).
    threshold:  the decision threshold for all text.
    thresholds: a threshold per condition ("clean", "corrupt", "lines", "wrapped"), possibly empty.
    backbone:   the encoder its features came from (`Encoder.name`); None when not recorded.
    precision:  the encoder precision of the features its thresholds were chosen on; None when not recorded.
    thresholds_by_precision: for another encoder precision ("int8"), the (threshold, per-condition
                thresholds) to read at it instead, chosen on features of that precision; possibly empty.
    automatic_precision: "int8" where the probe runs at int8 when its precision is "auto" and the CPU
                does int8 natively (`segmenter.encoder.backend.int8_path`); None: the float default.
    automatic_precision_cpus: the CPUs' int8 paths (`segmenter.encoder.cpu.INT8_PATHS`: "vnni", "avx2") on
                which `automatic_precision` applies; empty: on every one.
    punctuated_probe: a probe folder, relative to this probe's, that reads the texts the segmenter
                judges punctuated (`segmenter.text.conditions.condition_for` says "clean") in this probe's
                place, with its own encoder and thresholds; it must read the same features (each
                may read its own blocks) and windows. None: this probe reads every text.
    averaged_probes: probe folders, relative to this probe's, that read every text this probe reads
                beside it (each with its own encoder; the same features, blocks aside, tokens and
                windows): their gap probabilities and this probe's are averaged per window, and
                this probe's thresholds are the mean's. Empty: this probe reads alone.
    paired_with: a preset of the packaged backbone whose gap probabilities are averaged with this
                probe's (`segmenter.readers.tree`), and the per-condition thresholds of that mean, as
                `(preset, thresholds)`; the probe's own thresholds are for reading it alone. None:
                read alone.
    training:   the training record, as written to meta.json beside the fields above: kind,
                hidden_units, members, seed, split_seed, conditions, unmarked_share, training_data,
                n_documents, n_train_gaps, n_train_boundaries, held_out_gap_scores, created, and from
                `segmenter train` c and refit_on_all_documents, from tuning tuned and n_train_windows.
    """

    features: FeatureConfig
    window: WindowConfig
    threshold: float
    thresholds: Mapping[str, float] = field(default_factory=dict)
    backbone: str | None = None
    precision: str | None = None
    training: Mapping[str, Any] = field(default_factory=dict)
    thresholds_by_precision: Mapping[str, tuple[float, Mapping[str, float]]] = field(default_factory=dict)
    automatic_precision: str | None = None
    automatic_precision_cpus: tuple[str, ...] = ()
    punctuated_probe: str | None = None
    averaged_probes: tuple[str, ...] = ()
    paired_with: tuple[str, Mapping[str, float]] | None = None

    def __post_init__(self) -> None:
        others = [t for one, per in self.thresholds_by_precision.values() for t in (one, *per.values())]
        others += [] if self.paired_with is None else list(self.paired_with[1].values())
        if not all(0.0 <= t <= 1.0 for t in [self.threshold, *self.thresholds.values(), *others]):
            raise ConfigError("thresholds must lie between 0 and 1")
        if self.automatic_precision not in (None, *AUTOMATIC_PRECISIONS):
            raise ConfigError(
                f"automatic_precision must be one of {', '.join(AUTOMATIC_PRECISIONS)}, "
                f"got {self.automatic_precision!r}"
            )
        unknown = sorted(set(self.automatic_precision_cpus) - set(INT8_PATHS))
        if unknown or (self.automatic_precision_cpus and self.automatic_precision is None):
            raise ConfigError(
                f"automatic_precision_cpus must name some of {', '.join(INT8_PATHS)} beside an "
                f"automatic_precision, got {list(self.automatic_precision_cpus)!r}"
            )
        if self.punctuated_probe is not None and not is_folder_name(self.punctuated_probe):
            raise ConfigError(
                f"punctuated_probe must name a folder inside the probe's, got {self.punctuated_probe!r}"
            )
        inside = [name for name in (self.punctuated_probe, *self.averaged_probes) if name is not None]
        if not all(is_folder_name(name) for name in self.averaged_probes) or len(set(inside)) < len(inside):
            raise ConfigError(
                "averaged_probes must name distinct folders inside the probe's, other than its punctuated "
                f"probe's, got {list(self.averaged_probes)!r}"
            )
        partner = None if self.paired_with is None else self.paired_with[0]
        if partner is not None and not (isinstance(partner, str) and partner):
            raise ConfigError(f"paired_with must name a preset, got {partner!r}")
        clash = sorted(set(self.training) & set(SETTING_KEYS))
        if clash:
            raise ConfigError(f"the training record repeats the probe's settings {', '.join(clash)}")

    def thresholds_at(self, precision: str) -> tuple[float, Mapping[str, float]]:
        """(threshold, per-condition thresholds) to decode with when the encoder runs at `precision`."""
        return self.thresholds_by_precision.get(precision, (self.threshold, self.thresholds))

    def to_json(self) -> dict:
        """The meta.json object: the settings' keys (backbone and precision only when recorded), then
        the training record's."""
        recorded = {
            "backbone": self.backbone,
            "precision": self.precision,
            "automatic_precision": self.automatic_precision,
            "automatic_precision_cpus": list(self.automatic_precision_cpus) or None,
            "punctuated_probe": self.punctuated_probe,
            "averaged_probes": list(self.averaged_probes) or None,
        }
        by_precision = {
            name: {"threshold": one, "thresholds": dict(per)}
            for name, (one, per) in self.thresholds_by_precision.items()
        }
        if self.paired_with is not None:
            recorded["paired_with"] = {"preset": self.paired_with[0], "thresholds": dict(self.paired_with[1])}
        features = asdict(self.features)
        return {
            **{key: value for key, value in recorded.items() if value is not None},
            **{key: features[key] for key in FEATURE_KEYS},
            "layers": list(self.features.layers),
            "window": asdict(self.window),
            "threshold": self.threshold,
            "thresholds": dict(self.thresholds),
            **({"thresholds_by_precision": by_precision} if by_precision else {}),
            **self.training,
        }

    @classmethod
    def from_json(cls, meta: dict, source: str = "the probe's meta") -> ProbeMeta:
        """The meta of a probe from its meta.json object; a ProbeError naming `source` when a field is
        missing or malformed. Fields added after the first probes (hidden, context, surface, lines,
        thresholds) read as their defaults when absent."""
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
            by_precision = {
                str(name): (
                    float(pair["threshold"]),
                    {str(k): float(v) for k, v in (pair.get("thresholds") or {}).items()},
                )
                for name, pair in (meta.get("thresholds_by_precision") or {}).items()
            }
            return cls(
                features,
                window,
                threshold,
                thresholds,
                backbone=meta.get("backbone"),
                precision=meta.get("precision"),
                training={key: value for key, value in meta.items() if key not in SETTING_KEYS},
                thresholds_by_precision=by_precision,
                automatic_precision=meta.get("automatic_precision"),
                automatic_precision_cpus=_str_tuple(meta.get("automatic_precision_cpus")),
                punctuated_probe=_optional_str(meta.get("punctuated_probe")),
                averaged_probes=_str_tuple(meta.get("averaged_probes")),
                paired_with=_pairing(meta.get("paired_with")),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ProbeError(
                f"{source} lacks or garbles a field ({exc}); retrain with `segmenter train`"
            ) from exc


def _pairing(value: object) -> tuple[str, dict[str, float]] | None:
    """meta.json's `paired_with` object ({"preset": ..., "thresholds": {...}}) as ProbeMeta holds it."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError(f"paired_with must be an object, got {value!r}")
    return str(value["preset"]), {str(k): float(v) for k, v in value["thresholds"].items()}


def _optional_str(value: object) -> str | None:
    return None if value is None else str(value)


def _str_tuple(value: object) -> tuple[str, ...]:
    """A JSON list of strings (absent or null: empty) as a tuple; a ValueError for anything else."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValueError(f"expected a list, got {value!r}")
    return tuple(str(item) for item in value)


def is_folder_name(name: object) -> bool:
    """Whether `name` names a folder right inside another (`punctuated_probe`, `averaged_probes`): no
    separator, not "."."""
    return isinstance(name, str) and name not in ("", ".", "..") and "/" not in name and "\\" not in name
