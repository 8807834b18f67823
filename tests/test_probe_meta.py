"""The probe meta schema (`segmenter.probe.meta.ProbeMeta`): shipped meta files load unchanged and write
back equal, training writes the keys it always wrote, and a broken field is refused in the same words as
before the schema existed (the expected messages below were produced by the code of commit 5d6f47d)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from segmenter.config import FeatureConfig, WindowConfig
from segmenter.errors import ConfigError, ProbeError
from segmenter.gold.corpus import Document
from segmenter.probe.meta import SETTING_KEYS, ProbeMeta
from segmenter.probe.probe import Probe
from segmenter.readers.build import settings_from_meta

MODELS = Path(__file__).resolve().parents[1] / "models"
SHIPPED = sorted(MODELS.glob("**/meta.json"))


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_every_preset_is_shipped_with_a_meta_file():
    assert {path.parent.name for path in SHIPPED} >= {"accurate", "fast", "fastest", "signals"}


@pytest.mark.parametrize("path", SHIPPED, ids=[p.parent.relative_to(MODELS).as_posix() for p in SHIPPED])
def test_a_shipped_meta_file_reads_and_writes_back_equal(path):
    meta = _read(path)
    read = ProbeMeta.from_json(meta, source=str(path))
    assert read.to_json() == meta
    assert json.dumps(read.to_json(), indent=2, sort_keys=True) + "\n" == path.read_text(encoding="utf-8")
    assert read.backbone == path.relative_to(MODELS).parts[0]  # models/<backbone>/<preset>[/<probe>]
    assert read.window == WindowConfig(**meta["window"])
    assert read.threshold == meta["threshold"] and read.thresholds == meta["thresholds"]
    assert read.training["held_out_gap_scores"] == meta["held_out_gap_scores"]


def test_the_accurate_preset_reads_as_it_always_did():
    read = settings_from_meta(_read(MODELS / "all-MiniLM-L6-v2" / "accurate" / "meta.json"))
    expected = FeatureConfig(layers=(3,), vectors=False, signals=False, hidden=True, surface=True, lines=True)
    # Read every 125 tokens from 2026-12-04; trained every 96, which meta.json keeps under "tuned".
    assert (read.features, read.window) == (expected, WindowConfig(128, 125))
    assert read.training["tuned"]["window_stride"] == 96
    assert read.threshold == 0.39
    assert read.thresholds == {"clean": 0.4, "corrupt": 0.35, "lines": 0.49, "spoken": 0.65, "wrapped": 0.4}
    assert isinstance(read, ProbeMeta)


def test_an_old_meta_without_the_later_fields_reads_with_their_defaults():
    old = {"layers": [2, 3], "vectors": True, "signals": True, "span": 4, "threshold": 0.5}
    read = ProbeMeta.from_json({**old, "window": {"size": 256, "stride": 192}})
    assert read.features == FeatureConfig(layers=(2, 3))
    assert (read.thresholds, read.backbone, read.precision, dict(read.training)) == ({}, None, None, {})


SHIPPED_ACCURATE = _read(MODELS / "all-MiniLM-L6-v2" / "accurate" / "meta.json")
BROKEN = {
    "empty": {},
    "not a dict": [1, 2],
    "threshold high": {**SHIPPED_ACCURATE, "threshold": "high"},
    "threshold 1.5": {**SHIPPED_ACCURATE, "threshold": 1.5},
    "layer 0": {**SHIPPED_ACCURATE, "layers": [0]},
    "thresholds x": {**SHIPPED_ACCURATE, "thresholds": {"clean": "x"}},
    "thresholds 5": {**SHIPPED_ACCURATE, "thresholds": 5},
    "thresholds nan": {**SHIPPED_ACCURATE, "thresholds": {"clean": float("nan")}},
    "window missing": {k: v for k, v in SHIPPED_ACCURATE.items() if k != "window"},
    "window stride": {**SHIPPED_ACCURATE, "window": {"size": 128}},
    "window small": {**SHIPPED_ACCURATE, "window": {"size": 4, "stride": 2}},
    "span x": {**SHIPPED_ACCURATE, "span": "x"},
    "lines without surface": {**SHIPPED_ACCURATE, "surface": False},
    "layers none": {**SHIPPED_ACCURATE, "layers": None},
}
# What settings_from_meta said about each at commit 5d6f47d (the text between "field (" and ")").
SAID = {
    "empty": "'layers'",
    "not a dict": "list indices must be integers or slices, not str",
    "threshold high": "could not convert string to float: 'high'",
    "threshold 1.5": "thresholds must lie between 0 and 1",
    "layer 0": "layers are 1-based and positive, got (0,)",
    "thresholds x": "could not convert string to float: 'x'",
    "thresholds 5": "'int' object has no attribute 'items'",
    "thresholds nan": "thresholds must lie between 0 and 1",
    "window missing": "'window'",
    "window stride": "'stride'",
    "window small": "window size must be at least 8 tokens, got 4",
    "span x": "invalid literal for int() with base 10: 'x'",
    "lines without surface": "line features are surface features: lines=True needs surface=True",
    "layers none": "'NoneType' object is not iterable",
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_field_is_refused_in_the_same_words(case):
    with pytest.raises(ProbeError) as caught:
        settings_from_meta(BROKEN[case], source="meta.json")
    expected = f"meta.json lacks or garbles a field ({SAID[case]}); retrain with `segmenter train`"
    assert str(caught.value) == expected
    with pytest.raises(ProbeError) as direct:
        ProbeMeta.from_json(BROKEN[case], source="meta.json")
    assert str(direct.value) == expected


def test_a_meta_built_in_code_is_checked():
    features, window = FeatureConfig(layers=(1,)), WindowConfig()
    with pytest.raises(ConfigError, match="between 0 and 1"):
        ProbeMeta(features, window, 0.5, {"clean": 1.5})
    with pytest.raises(ConfigError, match="repeats the probe's settings threshold, window"):
        ProbeMeta(features, window, 0.5, training={"window": 3, "threshold": 0.2, "seed": 0})


# The keys train_probe and tune_probe wrote at commit 5d6f47d.
TRAINED_KEYS = {
    *("backbone", "c", "conditions", "context", "held_out_gap_scores", "hidden", "hidden_units", "kind"),
    *("layers", "lines", "members", "n_documents", "n_train_boundaries", "n_train_gaps", "precision"),
    *("refit_on_all_documents", "seed", "signals", "span", "split_seed", "surface", "threshold"),
    *("thresholds", "training_data", "unmarked_share", "vectors", "window", "created"),
}
TUNED_KEYS = (TRAINED_KEYS - {"c", "refit_on_all_documents"}) | {"n_train_windows", "tuned"}


def _round_trips(meta: dict) -> None:
    assert ProbeMeta.from_json(meta).to_json() == meta
    # chosen on dev, or assembled, after training
    written_when_set = {
        *("thresholds_by_precision", "automatic_precision", "automatic_precision_cpus"),
        *("punctuated_probe", "averaged_probes", "paired_with"),
    }
    assert set(SETTING_KEYS) - written_when_set <= set(meta)
    assert not written_when_set & set(meta)


def test_training_writes_the_keys_it_always_wrote(tiny_probe_dir):
    meta = Probe.load(tiny_probe_dir).meta
    assert set(meta) == TRAINED_KEYS
    _round_trips(meta)


def test_tuning_writes_the_keys_it_always_wrote(tiny_bert_dir, one_torch_thread):
    from segmenter.training.tune import TuneConfig, tune_probe

    docs = [Document(f"d{i}", ("The cat sat down.", "It was tired!", f"Number {i} ended.")) for i in range(6)]
    config = TuneConfig(blocks=1, rank=2, epochs=1, hidden_units=8, window=WindowConfig(16, 10), holdout=0.3)
    meta = tune_probe(str(tiny_bert_dir), docs, config, ["synthetic"]).meta
    assert set(meta) == TUNED_KEYS
    _round_trips(meta)


def test_thresholds_for_another_precision_and_the_automatic_precision():
    meta = _read(MODELS / "all-MiniLM-L6-v2" / "accurate" / "meta.json")
    read = ProbeMeta.from_json(meta)
    assert read.automatic_precision == "int8"
    assert read.thresholds_at("int8") == (0.3, {"clean": 0.3, "corrupt": 0.3, "spoken": 0.55})
    assert read.thresholds_at("bfloat16") == (read.threshold, read.thresholds)  # the float pair
    bare = {
        key: value
        for key, value in meta.items()
        if key not in ("thresholds_by_precision", "automatic_precision")
    }
    old = ProbeMeta.from_json(bare)
    assert old.automatic_precision is None and old.thresholds_at("int8") == (old.threshold, old.thresholds)
    assert "thresholds_by_precision" not in old.to_json() and "automatic_precision" not in old.to_json()
    with pytest.raises(ProbeError, match="garbles a field .thresholds must lie between 0 and 1"):
        ProbeMeta.from_json({**meta, "thresholds_by_precision": {"int8": {"threshold": 1.5}}})
    with pytest.raises(ProbeError, match="automatic_precision must be one of int8, got 'bfloat16'"):
        ProbeMeta.from_json({**meta, "automatic_precision": "bfloat16"})
    with pytest.raises(ProbeError, match="lacks or garbles a field"):
        ProbeMeta.from_json({**meta, "thresholds_by_precision": {"int8": {"thresholds": {}}}})


def test_the_cpus_an_automatic_precision_applies_to():
    meta = _read(MODELS / "all-MiniLM-L6-v2" / "accurate" / "meta.json")
    assert ProbeMeta.from_json(meta).automatic_precision_cpus == ()  # every int8 path
    some = {**meta, "automatic_precision_cpus": ["avx2"]}
    assert ProbeMeta.from_json(some).automatic_precision_cpus == ("avx2",)
    assert ProbeMeta.from_json(some).to_json() == some
    with pytest.raises(ProbeError, match="automatic_precision_cpus must name some of vnni, avx2"):
        ProbeMeta.from_json({**meta, "automatic_precision_cpus": ["sse2"]})
    with pytest.raises(ProbeError, match="expected a list, got 'avx2'"):
        ProbeMeta.from_json({**meta, "automatic_precision_cpus": "avx2"})
    bare = {key: value for key, value in some.items() if key != "automatic_precision"}
    with pytest.raises(ProbeError, match="beside an automatic_precision"):
        ProbeMeta.from_json(bare)
