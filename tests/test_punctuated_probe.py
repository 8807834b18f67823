"""A probe whose meta names a punctuated probe (the default, `accurate`, does): the texts the segmenter
judges punctuated are read by that probe, with its encoder and thresholds, the others by the probe
itself; whole, streamed and piped alike. A broken or mismatched punctuated probe is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from invariants import assert_same_spans

from segmenter import Segmenter
from segmenter.errors import ProbeError
from segmenter.probe.meta import ProbeMeta

MODELS = Path(__file__).resolve().parents[1] / "models" / "all-MiniLM-L6-v2"
ACCURATE = MODELS / "accurate"
PUNCTUATED = "It rained all day. We stayed in and read. Then the sun came out and we went for a walk."
UNPUNCTUATED = "it rained all day we stayed in and read then the sun came out and we went for a walk"


def _copy_accurate(folder: Path, **meta_changes) -> Path:
    """`accurate`'s folder copied to `folder`, its meta.json changed (a value of None deletes the key)."""
    shutil.copytree(ACCURATE, folder)
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    for key, value in meta_changes.items():
        if value is None:
            meta.pop(key)
        else:
            meta[key] = value
    (folder / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def routed() -> Segmenter:
    return Segmenter()


@pytest.fixture(scope="module")
def readers(tmp_path_factory) -> tuple[Segmenter, Segmenter]:
    """The punctuated probe alone, and `accurate` without it (its meta without the key)."""
    one_probe = _copy_accurate(tmp_path_factory.mktemp("one-probe") / "accurate", punctuated_probe=None)
    return Segmenter(probe=str(ACCURATE / "punctuated")), Segmenter(probe=str(one_probe))


def test_the_default_names_its_punctuated_probe():
    meta = ProbeMeta.from_json(json.loads((ACCURATE / "meta.json").read_text(encoding="utf-8")))
    assert meta.punctuated_probe == "punctuated"
    assert (ACCURATE / "punctuated" / "probe.npz").is_file()


def test_each_text_is_read_by_the_probe_of_its_condition(routed, readers):
    punctuated_alone, without = readers
    got = routed.gap_probabilities([PUNCTUATED, UNPUNCTUATED])
    np.testing.assert_array_equal(got[0].probs, punctuated_alone.gap_probabilities([PUNCTUATED])[0].probs)
    np.testing.assert_array_equal(got[1].probs, without.gap_probabilities([UNPUNCTUATED])[0].probs)
    # the two probes do differ, so the equalities above say which one read each text
    assert not np.array_equal(got[0].probs, without.gap_probabilities([PUNCTUATED])[0].probs)
    assert routed.decoding_for(PUNCTUATED) == punctuated_alone.decoding_for(PUNCTUATED)
    assert routed.decoding_for(UNPUNCTUATED) == without.decoding_for(UNPUNCTUATED)


def test_whole_streamed_and_piped_agree(routed):
    """Streamed equals whole exactly (the same batches); piped one window at a time equals whole read
    one window at a time exactly; in shared batches only float rounding may move the scores."""
    one_window = Segmenter(batch_size=1)
    for text in (PUNCTUATED * 12, UNPUNCTUATED * 12):
        whole = routed.segment(text)
        chunks = [text[i : i + 7] for i in range(0, len(text), 7)]
        assert list(routed.segment_stream(chunks)) == whole
        assert list(one_window.pipe([text, PUNCTUATED], batch_size=1))[0] == one_window.segment(text)
        assert_same_spans(list(routed.pipe([text, PUNCTUATED]))[0], whole)


def test_no_window_runs_before_the_start_chooses(monkeypatch):
    """With pieces much shorter than the start that chooses and one window per batch, windows are
    ready long before the choice: they wait for it, so the streamed text still gets the scorer of
    its start."""
    import segmenter.readers.stream as stream
    import segmenter.text.conditions as conditions

    routed = Segmenter(batch_size=1)
    texts = (PUNCTUATED * 30, UNPUNCTUATED * 30)
    expected = [routed.segment(text) for text in texts]  # one piece: the choice comes first
    monkeypatch.setattr(stream, "PIECE_CHARS", 24)
    monkeypatch.setattr(conditions, "LOOK_CHARS", 5000)
    for text, spans in zip(texts, expected, strict=True):
        chunks = [text[i : i + 11] for i in range(0, len(text), 11)]
        assert list(routed.segment_stream(chunks)) == spans
        assert routed.segment(text) == spans


def test_a_punctuated_probe_outside_the_folder_is_refused():
    with pytest.raises(ProbeError, match="punctuated_probe must name a folder inside"):
        meta = json.loads((ACCURATE / "meta.json").read_text(encoding="utf-8"))
        ProbeMeta.from_json({**meta, "punctuated_probe": "../fast"})


def test_a_missing_punctuated_probe_is_refused(tmp_path):
    folder = _copy_accurate(tmp_path / "accurate")
    shutil.rmtree(folder / "punctuated")
    with pytest.raises(ProbeError, match="missing"):
        Segmenter(probe=str(folder))


def test_a_punctuated_probe_that_reads_other_features_is_refused(tmp_path):
    folder = _copy_accurate(tmp_path / "accurate")
    shutil.rmtree(folder / "punctuated")
    shutil.copytree(MODELS / "fast", folder / "punctuated")  # reads no line breaks
    with pytest.raises(ProbeError, match="a punctuated probe must read the same"):
        Segmenter(probe=str(folder))


def test_a_punctuated_probe_may_read_another_block(tmp_path):
    """Each probe runs its own encoder, so the two may read different blocks (the tokens they read
    are the same); the texts are still routed by their condition."""
    folder = _copy_accurate(tmp_path / "accurate")
    meta = json.loads((folder / "punctuated" / "meta.json").read_text(encoding="utf-8"))
    (folder / "punctuated" / "meta.json").write_text(json.dumps({**meta, "layers": [2]}), encoding="utf-8")
    routed = Segmenter(probe=str(folder))
    assert routed.reader.routes["clean"].scorer.features.layers == (2,)
    assert routed.reader.routes["corrupt"].scorer.features.layers == (3,)
    alone = Segmenter(probe=str(folder / "punctuated"))
    np.testing.assert_array_equal(
        routed.gap_probabilities([PUNCTUATED])[0].probs, alone.gap_probabilities([PUNCTUATED])[0].probs
    )
    assert routed.segment(PUNCTUATED) == alone.segment(PUNCTUATED)


def test_the_punctuated_probe_travels_with_its_probe(tmp_path):
    from segmenter.probe.probe import Probe

    probe = Probe.load(ACCURATE)
    assert probe.punctuated is not None and probe.punctuated.source == str(ACCURATE / "punctuated")
    restored = Probe.from_bytes(probe.to_bytes())  # how the spaCy component saves it
    np.testing.assert_array_equal(restored.punctuated.weights[0], probe.punctuated.weights[0])
    saved = Probe.load(probe.save(tmp_path / "copy"))
    assert (tmp_path / "copy" / "punctuated" / "probe.npz").is_file()
    np.testing.assert_array_equal(saved.punctuated.mean, probe.punctuated.mean)
    # a probe built in memory that names a punctuated probe it does not hold is refused
    alone = probe.to_bytes()
    del alone["punctuated"]
    with pytest.raises(ProbeError, match="does not hold"):
        Segmenter(probe=Probe.from_bytes(alone))


def test_the_reader_tree_says_which_reads_what(routed):
    from segmenter.readers.tree import ProbeReader, RouteReader

    assert isinstance(routed.reader, RouteReader)
    assert routed.reader.routes["clean"] is not routed.reader.routes["corrupt"]
    assert routed.reader.routes["corrupt"].scorer.encoder is routed.encoder
    one = Segmenter(preset="fast")
    assert isinstance(one.reader, ProbeReader)  # one reader for every text


def test_a_punctuated_probe_that_names_one_of_its_own_is_refused(tmp_path):
    """Its folder linked to its parent would otherwise be read forever."""
    from segmenter.probe.probe import Probe

    folder = _copy_accurate(tmp_path / "accurate")
    shutil.rmtree(folder / "punctuated")
    (folder / "punctuated").symlink_to(folder, target_is_directory=True)
    with pytest.raises(ProbeError, match="cannot name one of its own"):
        Probe.load(folder)
    nested = Probe.load(ACCURATE).to_bytes()
    nested["punctuated"]["punctuated"] = dict(nested["punctuated"])  # a stored probe three deep
    with pytest.raises(ProbeError, match="names one of its own"):
        Probe.from_bytes(nested)
