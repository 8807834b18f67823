"""Two readers, two backbones: a probe whose meta names a partner preset reads every text with it, and
the mean of both readers' gap probabilities is what gets decoded, streamed or whole."""

from __future__ import annotations

import json
import random
import shutil

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from invariants import assert_invariants
from test_stream import random_chunks, texts

from segmenter import Segmenter
from segmenter.errors import ProbeError
from segmenter.probe.meta import ProbeMeta
from segmenter.readers.candidates import mean_by_offset
from segmenter.readers.tree import MeanReader

PAIRED_THRESHOLDS = {"clean": 0.45, "corrupt": 0.35}


def test_mean_by_offset_averages_shared_candidates_and_keeps_the_others():
    offsets, probs = mean_by_offset(
        [np.array([3, 7, 12]), np.array([7, 9, 12])], [[0.2, 0.4, 1.0], [0.8, 0.5, 0.0]]
    )
    assert offsets.tolist() == [3, 7, 9, 12]
    assert probs.tolist() == pytest.approx([0.2, 0.6, 0.5, 0.5])
    empty = mean_by_offset([np.zeros(0, np.int64), np.array([4])], [np.zeros(0), np.array([0.25])])
    assert empty[0].tolist() == [4] and empty[1].tolist() == [0.25]


@pytest.fixture(scope="module")
def paired_probe_dir(tiny_probe_dir, tmp_path_factory):
    """The tiny probe, naming the packaged `fastest` as its partner."""
    folder = tmp_path_factory.mktemp("paired") / "probe"
    shutil.copytree(tiny_probe_dir, folder)
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    meta["paired_with"] = {"preset": "fastest", "thresholds": PAIRED_THRESHOLDS}
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def readers(tiny_bert_dir, paired_probe_dir, one_torch_thread):
    """(the pair, the tiny probe alone, the partner alone), in float32 so no int8 graph is built."""
    settings = {"model": str(tiny_bert_dir), "probe": str(paired_probe_dir), "precision": "float32"}
    pair = Segmenter(**settings, batch_size=2)
    alone = Segmenter(**settings, batch_size=2, paired=False)
    partner = Segmenter(preset="fastest", precision="float32", batch_size=2)
    return pair, alone, partner


def test_the_pair_decodes_the_mean_with_the_thresholds_of_the_mean(readers):
    pair, alone, partner = readers
    assert isinstance(pair.reader, MeanReader) and not isinstance(alone.reader, MeanReader)
    assert pair.decoding_for("It rained. We left.").threshold == PAIRED_THRESHOLDS["clean"]
    assert pair.decoding_for("so we left it rained").threshold == PAIRED_THRESHOLDS["corrupt"]
    assert alone.decoding_for("It rained. We left.").threshold != PAIRED_THRESHOLDS["clean"]
    text = "It rained all day. We stayed in and read. so then we left\n\nThe end."
    (mine,) = alone.gap_probabilities([text])
    (theirs,) = partner.gap_probabilities([text])
    expected_offsets, expected = mean_by_offset([mine.offsets, theirs.offsets], [mine.probs, theirs.probs])
    (paired,) = pair.gap_probabilities([text])
    assert paired.offsets.tolist() == expected_offsets.tolist()
    assert paired.probs == pytest.approx(expected, abs=1e-6)
    assert not np.allclose(mine.probs, theirs.probs)  # two readers that differ: the mean is no copy


def test_a_threshold_given_by_the_caller_reads_the_mean_at_it(tiny_bert_dir, paired_probe_dir):
    settings = {"model": str(tiny_bert_dir), "probe": str(paired_probe_dir), "precision": "float32"}
    pair = Segmenter(**settings, threshold=0.9)
    assert isinstance(pair.reader, MeanReader)
    assert {pair.decoding_for(t).threshold for t in ("It rained.", "so it rained")} == {0.9}


@settings(max_examples=25, deadline=None)
@example(text="the the the the the the the the the the sat. sat. the ", seed=0, n_chunks=0)
@given(text=texts(max_words=80), seed=st.integers(0, 1000), n_chunks=st.integers(0, 12))
def test_a_paired_text_streamed_equals_it_whole(readers, monkeypatch_module, text, seed, n_chunks):
    pair = readers[0]
    whole = pair.segment(text)
    assert list(pair.segment_stream(random_chunks(text, random.Random(seed), n_chunks))) == whole
    assert whole == next(pair.pipe([text]))  # the batch size each reader streams with
    assert_invariants(text, whole)


def test_paired_with_round_trips_and_refuses_garbled_values():
    meta = {"layers": [1], "vectors": False, "signals": False, "span": 4, "hidden": True}
    meta |= {"window": {"size": 16, "stride": 10}, "threshold": 0.5}
    read = ProbeMeta.from_json({**meta, "paired_with": {"preset": "accurate", "thresholds": {"clean": 0.5}}})
    assert read.paired_with == ("accurate", {"clean": 0.5})
    assert read.to_json()["paired_with"] == {"preset": "accurate", "thresholds": {"clean": 0.5}}
    assert ProbeMeta.from_json(meta).paired_with is None
    for garbled in ("accurate", {"preset": "accurate"}, {"preset": "accurate", "thresholds": {"clean": 2.0}}):
        with pytest.raises((ProbeError, ValueError), match="paired_with|field|thresholds"):
            ProbeMeta.from_json({**meta, "paired_with": garbled})
