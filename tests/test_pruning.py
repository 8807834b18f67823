"""Narrowed blocks: a pruned block computes what the full block computes without the dropped heads and
units; tuning can prune, and the probe carries what it kept to the segmenter."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from invariants import assert_invariants

from segmenter.api import Segmenter
from segmenter.cli.main import main
from segmenter.config import WindowConfig
from segmenter.encoder.torch.encoder import Encoder
from segmenter.encoder.torch.pruning import check_keep, keep_key
from segmenter.errors import ConfigError, ProbeError
from segmenter.gold.corpus import Document
from segmenter.probe.probe import Probe
from segmenter.training.pruning import choose, importance
from segmenter.training.tune import TuneConfig, tune_probe

pytestmark = pytest.mark.usefixtures("one_torch_thread")

HEAD = 4  # the tiny model's head width: 12 heads over 48 dimensions
IDS = torch.tensor([[101, 1996, 4937, 2938, 1012, 2009, 2001, 5458, 999, 102, 0, 0]])
MASK = torch.tensor([[1] * 10 + [0, 0]])
DOCS = [Document(f"d{i}", ("The cat sat down.", "It was tired!", f"Number {i} ended.")) for i in range(6)]
SMALL = dict(blocks=2, rank=2, epochs=1, hidden_units=8, window=WindowConfig(16, 10), holdout=0.3)


def _hidden(model, ids=IDS, mask=MASK) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=mask).last_hidden_state


def _encoder(tiny_bert_dir, **kwargs) -> Encoder:
    return Encoder(str(tiny_bert_dir), max_layer=2, precision="float32", **kwargs)


def test_a_pruned_block_computes_the_full_block_without_the_dropped_heads_and_units(tiny_bert_dir):
    keep = {
        keep_key(0, "heads"): np.array([0, 3, 4, 11]),
        keep_key(0, "units"): np.arange(0, 96, 3),
        keep_key(1, "units"): np.arange(50),
    }
    pruned = _encoder(tiny_bert_dir, pruning=keep).model
    silenced = _encoder(tiny_bert_dir).model  # the dropped heads' and units' outputs zeroed instead
    with torch.no_grad():
        first = silenced.encoder.layer[0]
        dropped_heads = [h for h in range(12) if h not in keep[keep_key(0, "heads")]]
        for h in dropped_heads:
            first.attention.output.dense.weight[:, h * HEAD : (h + 1) * HEAD] = 0
        for block, kept in ((0, keep[keep_key(0, "units")]), (1, keep[keep_key(1, "units")])):
            dropped = np.setdiff1d(np.arange(96), kept)
            silenced.encoder.layer[block].output.dense.weight[:, dropped] = 0
    assert pruned.encoder.layer[0].attention.self.query.weight.shape == (4 * HEAD, 48)
    assert pruned.encoder.layer[0].attention.output.dense.weight.shape == (48, 4 * HEAD)
    assert pruned.encoder.layer[0].intermediate.dense.weight.shape == (32, 48)
    assert pruned.encoder.layer[1].output.dense.weight.shape == (48, 50)
    assert pruned.encoder.layer[1].attention.self.query.weight.shape == (48, 48)  # heads kept whole
    torch.testing.assert_close(_hidden(pruned), _hidden(silenced), rtol=1e-5, atol=1e-5)
    assert not torch.allclose(_hidden(pruned), _hidden(_encoder(tiny_bert_dir).model), atol=1e-3)


def test_keeping_everything_changes_nothing_and_later_blocks_are_skipped(tiny_bert_dir):
    keep = {keep_key(0, "heads"): np.arange(12), keep_key(0, "units"): np.arange(96)}
    keep[keep_key(5, "heads")] = np.array([1])  # a block this two-block encoder does not load
    torch.testing.assert_close(
        _hidden(_encoder(tiny_bert_dir, pruning=keep).model), _hidden(_encoder(tiny_bert_dir).model)
    )


def test_broken_pruning_arrays_are_refused(tiny_bert_dir):
    for bad in ([2, 1], [1, 1], [-1, 2], [0.5, 2], [], [[0, 1]]):
        with pytest.raises(ValueError, match="ascending unique"):
            check_keep({keep_key(0, "heads"): np.array(bad, dtype=np.float32)})
    with pytest.raises(ValueError, match="unknown"):
        check_keep({"encoder.layer.0.query": np.array([0])})
    assert check_keep({keep_key(0, "units"): np.array([0.0, 2.0])})[keep_key(0, "units")].dtype == np.int64
    with pytest.raises(ProbeError, match="head 12 of block 0, which has 12"):
        _encoder(tiny_bert_dir, pruning={keep_key(0, "heads"): np.array([0, 12])})
    with pytest.raises(ProbeError, match="unit 96 of block 1, which has 96"):
        _encoder(tiny_bert_dir, pruning={keep_key(1, "units"): np.array([96])})


def test_importance_ranks_a_silenced_head_and_unit_last_and_choose_keeps_the_largest(tiny_bert_dir):
    model = _encoder(tiny_bert_dir).model
    with torch.no_grad():  # head 5 and unit 7 of block 0 no longer reach the block's output
        model.encoder.layer[0].attention.output.dense.weight[:, 5 * HEAD : 6 * HEAD] = 0
        model.encoder.layer[0].output.dense.weight[:, 7] = 0
    scores = importance(model, [(IDS, MASK)], blocks=2)
    assert set(scores) == {keep_key(b, k) for b in range(2) for k in ("heads", "units")}
    assert scores[keep_key(0, "heads")].shape == (12,) and scores[keep_key(0, "units")].shape == (96,)
    assert scores[keep_key(0, "heads")][5] == 0 and scores[keep_key(0, "units")][7] == 0
    assert (np.delete(scores[keep_key(0, "heads")], 5) > 0).all()
    keep = choose(scores, heads=11, units=None)
    assert keep_key(0, "units") not in keep and 5 not in keep[keep_key(0, "heads")]
    assert len(keep[keep_key(1, "heads")]) == 11 and (np.diff(keep[keep_key(1, "heads")]) > 0).all()
    order = np.argsort(-scores[keep_key(1, "units")], kind="stable")
    np.testing.assert_array_equal(choose(scores, None, 10)[keep_key(1, "units")], np.sort(order[:10]))
    assert choose(scores, heads=12, units=500) == {}  # nothing to drop


def test_padding_does_not_move_the_importance(tiny_bert_dir):
    model = _encoder(tiny_bert_dir).model
    short = importance(model, [(IDS[:, :10], MASK[:, :10])], blocks=1)
    padded = importance(model, [(IDS, MASK)], blocks=1)
    for key, values in short.items():
        np.testing.assert_allclose(padded[key], values, rtol=1e-4, atol=1e-6)


@pytest.fixture(scope="module")
def pruned_probe(tiny_bert_dir) -> Probe:
    return tune_probe(str(tiny_bert_dir), DOCS, TuneConfig(**SMALL, heads=6, units=40), ["synthetic"])


def test_tuning_prunes_and_the_probe_carries_what_it_kept(pruned_probe, tmp_path):
    assert sorted(pruned_probe.pruning) == [keep_key(b, k) for b in range(2) for k in ("heads", "units")]
    assert all(len(v) == 6 for k, v in pruned_probe.pruning.items() if k.endswith("heads"))
    assert all(len(v) == 40 for k, v in pruned_probe.pruning.items() if k.endswith("units"))
    # the deltas were trained on the narrowed layers
    assert pruned_probe.deltas["encoder.layer.0.attention.self.query.b"].shape == (6 * HEAD, 2)
    assert pruned_probe.deltas["encoder.layer.1.output.dense.a"].shape == (2, 40)
    assert pruned_probe.meta["tuned"]["kept"] == {"heads": 6, "units": 40}
    for carried in (Probe.load(pruned_probe.save(tmp_path / "p")), Probe.from_bytes(pruned_probe.to_bytes())):
        assert carried.pruning.keys() == pruned_probe.pruning.keys()
        for key, value in pruned_probe.pruning.items():
            np.testing.assert_array_equal(carried.pruning[key], value)


def test_the_segmenter_runs_a_pruned_probe(pruned_probe, tiny_bert_dir):
    seg = Segmenter(model=str(tiny_bert_dir), probe=pruned_probe)
    assert seg.encoder.model.encoder.layer[1].intermediate.dense.out_features == 40
    text = "The dog ran.  It stopped!\nthen it slept"
    assert_invariants(text, seg.segment(text))
    assert [s.start for s in seg.segment(text)] == [s.start for s in next(iter(seg.pipe([text])))]


def test_pruning_options_are_validated():
    for field in ("heads", "units"):
        with pytest.raises(ConfigError, match=field):
            TuneConfig(**{field: 0})
    with pytest.raises(ConfigError, match="do not prune heads with signals"):
        TuneConfig(signals=True, heads=6)
    assert TuneConfig(signals=True, units=10).pruned


def test_train_cli_keeps_heads_and_units(tiny_bert_dir, tmp_path, tiny_conllu):
    out = tmp_path / "pruned"
    args = ["train", "tune", "--model", str(tiny_bert_dir), "--data", f"conllu:{tiny_conllu}"]
    args += ["--blocks", "1", "--epochs", "1", "--window-size", "16", "--no-progress", "--out", str(out)]
    result = CliRunner().invoke(main, [*args, "--keep-heads", "3", "--keep-units", "20"])
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "meta.json").read_text())
    assert meta["tuned"]["kept"] == {"heads": 3, "units": 20}
    assert len(Probe.load(out).pruning[keep_key(0, "heads")]) == 3
    refused = CliRunner().invoke(main, [*args, "--keep-heads", "0", "--out", str(tmp_path / "x")])
    assert refused.exit_code == 2 and "--keep-heads" in refused.output
