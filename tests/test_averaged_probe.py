"""A probe whose meta names averaged probes: every text it reads is read by them too, each with its own
encoder, and the gap probabilities are averaged per window; whole, streamed and piped alike, saved and
restored with the probe. A missing or mismatched averaged probe is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from invariants import assert_same_spans

import segmenter.readers.build as segmenter_module
from segmenter import Segmenter
from segmenter.errors import ProbeError
from segmenter.probe.meta import ProbeMeta
from segmenter.probe.probe import Probe

MODELS = Path(__file__).resolve().parents[1] / "models" / "all-MiniLM-L6-v2"
ACCURATE = MODELS / "accurate"
PUNCTUATED = "It rained all day. We stayed in and read. Then the sun came out and we went for a walk."
UNPUNCTUATED = "it rained all day we stayed in and read then the sun came out and we went for a walk"


def _write_meta(folder: Path, **changes) -> None:
    """`folder`'s meta.json with `changes` (a value of None deletes the key)."""
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is None:
            meta.pop(key, None)
        else:
            meta[key] = value
    (folder / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _averaging(folder: Path, member: Path = ACCURATE / "punctuated", **changes) -> Path:
    """`accurate` copied to `folder`, its own probe averaged with a copy of `member` (named "second")."""
    shutil.copytree(ACCURATE, folder)
    shutil.copytree(member, folder / "second")
    _write_meta(folder, **{"averaged_probes": ["second"], **changes})
    return folder


@pytest.fixture(scope="module")
def averaged_folder(tmp_path_factory) -> Path:
    """`accurate` averaged with its punctuated probe's copy."""
    return _averaging(tmp_path_factory.mktemp("averaged") / "averaged")


@pytest.fixture(scope="module")
def readers(averaged_folder, tmp_path_factory) -> tuple[Segmenter, Segmenter, Segmenter]:
    """`accurate` averaged with its punctuated probe's copy; its own probe alone; that copy alone."""
    alone = tmp_path_factory.mktemp("alone") / "alone"
    shutil.copytree(ACCURATE, alone)
    _write_meta(alone, averaged_probes=None)
    return (
        Segmenter(probe=str(averaged_folder)),
        Segmenter(probe=str(alone)),
        Segmenter(probe=str(averaged_folder / "second")),
    )


def test_the_default_averages_its_reading_of_unpunctuated_text():
    meta = ProbeMeta.from_json(json.loads((ACCURATE / "meta.json").read_text(encoding="utf-8")))
    assert meta.averaged_probes == ("four-blocks",)
    inner_meta = (ACCURATE / "four-blocks" / "meta.json").read_text(encoding="utf-8")
    inner = ProbeMeta.from_json(json.loads(inner_meta))
    assert inner.features.layers == (4,) and meta.features.layers == (3,)
    default = Segmenter()
    unpunctuated, punctuated = default.reader.routes["corrupt"].scorer, default.reader.routes["clean"].scorer
    assert [s.features.layers for s in unpunctuated.scorers] == [(3,), (4,)]
    assert not hasattr(punctuated, "scorers")  # punctuated text: its punctuated probe alone


def test_the_member_encoder_opens_only_when_unpunctuated_text_arrives(monkeypatch):
    opened = []
    open_member = segmenter_module._open_member
    counted = lambda *args: opened.append(args) or open_member(*args)  # noqa: E731
    monkeypatch.setattr(segmenter_module, "_open_member", counted)
    default = Segmenter()
    default.segment("It rained all day. We stayed in and read.")
    assert opened == []  # punctuated text: the punctuated probe's encoder alone
    first = default.segment(UNPUNCTUATED)
    assert len(opened) == 1
    assert default.segment(UNPUNCTUATED) == first and len(opened) == 1  # opened once, then kept


@pytest.mark.parametrize("repeats", [1, 30], ids=["one window", "many windows"])
def test_unpunctuated_text_gets_the_mean_of_both_probes(readers, repeats):
    averaged, alone, second = readers
    text = " ".join([UNPUNCTUATED] * repeats)
    got = averaged.gap_probabilities([text])[0]
    own, theirs = alone.gap_probabilities([text])[0], second.gap_probabilities([text])[0]
    np.testing.assert_array_equal(got.offsets, own.offsets)
    assert not np.allclose(own.probs, theirs.probs, atol=1e-3)  # the two probes do differ
    np.testing.assert_allclose(got.probs, (own.probs + theirs.probs) / 2, atol=1e-5)
    assert averaged.decoding_for(text) == alone.decoding_for(text)  # the probe's threshold: the mean's


def test_punctuated_text_is_read_by_the_punctuated_probe_alone(readers):
    averaged, alone, _ = readers
    np.testing.assert_array_equal(
        averaged.gap_probabilities([PUNCTUATED])[0].probs, alone.gap_probabilities([PUNCTUATED])[0].probs
    )


def test_whole_streamed_and_piped_agree(readers, averaged_folder):
    """Streamed equals whole exactly (the same batches); piped one window at a time equals whole read
    one window at a time exactly; in shared batches only float rounding may move the scores."""
    averaged, _, _ = readers
    one_window = Segmenter(probe=str(averaged_folder), batch_size=1)
    for text in (PUNCTUATED * 12, UNPUNCTUATED * 12):
        whole = averaged.segment(text)
        chunks = [text[i : i + 7] for i in range(0, len(text), 7)]
        assert list(averaged.segment_stream(chunks)) == whole
        assert list(one_window.pipe([text, PUNCTUATED], batch_size=1))[0] == one_window.segment(text)
        assert_same_spans(list(averaged.pipe([text, PUNCTUATED]))[0], whole)
        assert "".join(span.text for span in whole).replace(" ", "") == text.replace(" ", "")


def test_the_averaged_probes_travel_with_their_probe(tmp_path):
    probe = Probe.load(_averaging(tmp_path / "averaged"))
    assert [p.source for p in probe.averaged] == [str(tmp_path / "averaged" / "second")]
    restored = Probe.from_bytes(probe.to_bytes())  # how the spaCy component saves it
    np.testing.assert_array_equal(restored.averaged[0].weights[0], probe.averaged[0].weights[0])
    assert restored.punctuated is not None
    saved = Probe.load(probe.save(tmp_path / "copy"))
    assert (tmp_path / "copy" / "second" / "probe.npz").is_file()
    np.testing.assert_array_equal(saved.averaged[0].mean, probe.averaged[0].mean)
    # a probe built in memory that names an averaged probe it does not hold is refused
    stored = probe.to_bytes()
    del stored["averaged"]
    with pytest.raises(ProbeError, match="names 1 averaged probes"):
        Probe.from_bytes(stored)
    with pytest.raises(ProbeError, match="does not hold"):
        from dataclasses import replace

        Segmenter(probe=replace(probe, averaged=()))


def test_a_missing_averaged_probe_is_refused(tmp_path):
    folder = _averaging(tmp_path / "averaged")
    shutil.rmtree(folder / "second")
    with pytest.raises(ProbeError, match="missing"):
        Segmenter(probe=str(folder))


def test_an_averaged_probe_that_reads_other_features_is_refused(tmp_path):
    folder = _averaging(tmp_path / "averaged", member=MODELS / "fast")  # reads no line breaks
    with pytest.raises(ProbeError, match="an averaged probe must read the same"):
        Segmenter(probe=str(folder))


def test_an_averaged_probe_that_names_probes_of_its_own_is_refused(tmp_path):
    """Its folder linked to its parent would otherwise be read forever."""
    folder = _averaging(tmp_path / "averaged")
    shutil.rmtree(folder / "second")
    (folder / "second").symlink_to(folder, target_is_directory=True)
    with pytest.raises(ProbeError, match="cannot name"):
        Probe.load(folder)
    nested = Probe.load(ACCURATE).to_bytes()
    nested["averaged"][0]["averaged"] = [dict(nested["averaged"][0])]  # a stored probe three deep
    nested["averaged"][0]["meta"] = {**nested["averaged"][0]["meta"], "averaged_probes": ["x"]}
    with pytest.raises(ProbeError, match="names one of its own"):
        Probe.from_bytes(nested)


@pytest.mark.parametrize("names", [["punctuated"], ["second", "second"], ["../fast"]])
def test_averaged_probes_must_name_distinct_folders_of_their_own(tmp_path, names):
    folder = _averaging(tmp_path / "averaged", averaged_probes=names)
    with pytest.raises(ProbeError, match="averaged_probes must name distinct folders"):
        Probe.load(folder)
