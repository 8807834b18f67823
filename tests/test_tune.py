"""Tuned probes: low-rank encoder deltas are trained, stored with the probe, and merged on load."""

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
from segmenter.encoder.torch.adapter import merge
from segmenter.encoder.torch.encoder import Encoder
from segmenter.errors import ConfigError, InputError, ProbeError
from segmenter.gold.corpus import Document, wrapped
from segmenter.probe.probe import Probe
from segmenter.training.adapters import DENSE, LowRankLinear, attach, export
from segmenter.training.tune import TuneConfig, tune_probe

pytestmark = pytest.mark.usefixtures("one_torch_thread")

DOCS = [Document(f"d{i}", ("The cat sat down.", "It was tired!", f"Number {i} ended.")) for i in range(6)]
SMALL = dict(blocks=2, rank=2, epochs=2, hidden_units=8, window=WindowConfig(16, 10), holdout=0.3)


@pytest.fixture(scope="module")
def tuned(tiny_bert_dir) -> Probe:
    return tune_probe(str(tiny_bert_dir), DOCS, TuneConfig(**SMALL), ["synthetic"])


def _hidden(model, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state


def test_merged_deltas_compute_what_the_trained_adapter_computed(tiny_bert_dir):
    adapted = Encoder(str(tiny_bert_dir), max_layer=2, precision="float32").model
    attach(adapted, n_blocks=2, rank=3, seed=1)
    wrapped = [m for m in adapted.modules() if isinstance(m, LowRankLinear)]
    assert len(wrapped) == 2 * len(DENSE)
    with torch.no_grad():
        for module in wrapped:  # B starts at zero; give it values as training would
            module.b.normal_(std=0.05)
    ids = torch.tensor([[101, 1996, 4937, 2938, 1012, 2009, 2001, 5458, 999, 102]])
    deltas = export(adapted)
    plain = Encoder(str(tiny_bert_dir), max_layer=2, precision="float32")
    merged = Encoder(str(tiny_bert_dir), max_layer=2, precision="float32", deltas=deltas)
    torch.testing.assert_close(_hidden(merged.model, ids), _hidden(adapted, ids), rtol=1e-4, atol=1e-5)
    assert not torch.allclose(_hidden(plain.model, ids), _hidden(adapted, ids), atol=1e-3)
    # only the attached parameters train
    assert all(not p.requires_grad for n, p in adapted.named_parameters() if not n.endswith((".a", ".b")))


def test_deltas_for_another_shape_or_without_a_partner_are_refused(tiny_bert_dir):
    model = Encoder(str(tiny_bert_dir), max_layer=1, precision="float32").model
    name = "encoder.layer.0.attention.self.query"
    with pytest.raises(ProbeError, match="another backbone"):
        merge(model, {f"{name}.a": np.zeros((2, 7), np.float32), f"{name}.b": np.zeros((48, 2), np.float32)})
    with pytest.raises(ProbeError, match="inconsistent"):
        merge(model, {f"{name}.a": np.zeros((2, 48), np.float32)})
    with pytest.raises(ProbeError, match="lacks"):  # a name outside the loaded blocks' layout
        merge(
            model,
            {
                "bert.pooler.dense.a": np.zeros((1, 48), np.float32),
                "bert.pooler.dense.b": np.zeros((48, 1), np.float32),
            },
        )
    with pytest.raises(ProbeError, match="lacks"):  # an index into a module that is no list
        merge(
            model,
            {
                "embeddings.0.dense.a": np.zeros((1, 48), np.float32),
                "embeddings.0.dense.b": np.zeros((48, 1), np.float32),
            },
        )
    huge = np.full((1, 48), 1e30, np.float32)
    with pytest.raises(ProbeError, match="overflows"):
        merge(model, {f"{name}.a": huge, f"{name}.b": np.full((48, 1), 1e30, np.float32)})
    # a delta for a block this encoder does not load changes nothing and is no error
    before = model.encoder.layer[0].output.dense.weight.clone()
    far = "encoder.layer.5.output.dense"
    merge(model, {f"{far}.a": np.ones((1, 96), np.float32), f"{far}.b": np.ones((48, 1), np.float32)})
    torch.testing.assert_close(model.encoder.layer[0].output.dense.weight, before)


def test_tuning_gives_a_probe_that_carries_its_deltas(tuned, tiny_bert_dir, tmp_path):
    assert sorted({k.rsplit(".", 1)[0] for k in tuned.deltas}) == sorted(
        f"encoder.layer.{i}.{path}" for i in range(2) for path in DENSE
    )
    assert tuned.deltas["encoder.layer.0.attention.self.query.a"].shape == (2, 48)
    assert any(np.abs(v).max() > 0 for k, v in tuned.deltas.items() if k.endswith(".b"))  # B moved off zero
    meta = tuned.meta
    assert meta["layers"] == [2] and meta["hidden"] and meta["surface"] and not meta["signals"]
    assert meta["lines"] and meta["conditions"] == ["clean", "corrupt", "lines", "wrapped"]
    assert meta["tuned"]["blocks"] == 2 and meta["tuned"]["rank"] == 2
    assert set(meta["thresholds"]) >= {"clean", "corrupt"}  # and "wrapped": DOCS have no paragraphs
    assert meta["n_train_boundaries"] > 0 and meta["training_data"] == ["synthetic"]
    reloaded = Probe.load(tuned.save(tmp_path / "tuned"))
    assert reloaded.deltas.keys() == tuned.deltas.keys()
    for key, value in tuned.deltas.items():
        np.testing.assert_array_equal(reloaded.deltas[key], value)
    carried = Probe.from_bytes(tuned.to_bytes())  # the spaCy component's serialisation
    assert carried.deltas.keys() == tuned.deltas.keys()
    for key, value in tuned.deltas.items():
        np.testing.assert_array_equal(carried.deltas[key], value)


def test_the_segmenter_merges_a_tuned_probes_deltas(tuned, tiny_bert_dir):
    seg = Segmenter(model=str(tiny_bert_dir), probe=tuned, precision="float32")
    base = Encoder(str(tiny_bert_dir), max_layer=2, precision="float32").model
    name = "encoder.layer.1.intermediate.dense"
    expected = base.encoder.layer[1].intermediate.dense.weight + torch.from_numpy(
        tuned.deltas[f"{name}.b"] @ tuned.deltas[f"{name}.a"]
    )
    torch.testing.assert_close(seg.encoder.model.encoder.layer[1].intermediate.dense.weight, expected)
    assert seg.encoder.loaded_layers == 2
    text = "The dog ran.  It stopped!\nthen it slept"
    assert_invariants(text, seg.segment(text))


def test_a_probe_with_broken_deltas_is_refused_on_load(tuned, tmp_path):
    folder = tuned.save(tmp_path / "broken")
    with np.load(folder / "probe.npz") as data:
        arrays = {k: data[k] for k in data.files if k != "delta:encoder.layer.0.output.dense.b"}
    np.savez(folder / "probe.npz", **arrays)
    with pytest.raises(ProbeError, match="inconsistent"):
        Probe.load(folder)


def test_tune_config_is_validated():
    for field in ("blocks", "rank", "epochs", "hidden_units", "batch_size"):
        with pytest.raises(ConfigError, match=field):
            TuneConfig(**{field: 0})


def test_train_cli_tunes_and_refuses_frozen_options(tiny_bert_dir, tmp_path, tiny_conllu):
    data = tiny_conllu
    out = tmp_path / "tuned"
    args = ["--data", f"conllu:{data}", "--out", str(out), "--model", str(tiny_bert_dir)]
    tune = [
        "--blocks",
        "1",
        "--rank",
        "2",
        "--epochs",
        "1",
        "--hidden-units",
        "8",
        "--window-size",
        "16",
        "--unmarked-share",
        "0.5",
    ]
    runner = CliRunner()
    result = runner.invoke(main, ["train", "tune", *args, *tune])
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "meta.json").read_text())
    assert meta["tuned"] == {**meta["tuned"], "blocks": 1, "rank": 2, "epochs": 1}
    assert meta["unmarked_share"] == 0.5
    assert meta["layers"] == [1] and meta["hidden_units"] == 8
    assert meta["signals"] is False  # a tuned probe reads no signals unless asked
    elsewhere = [
        "train",
        "tune",
        "--data",
        f"conllu:{data}",
        "--out",
        str(tmp_path / "s"),
        "--model",
        str(tiny_bert_dir),
    ]
    signals = runner.invoke(main, [*elsewhere, *tune, "--signals"])
    assert signals.exit_code == 0, signals.output
    assert json.loads((tmp_path / "s" / "meta.json").read_text())["signals"] is True
    refused = runner.invoke(main, ["train", "tune", *args, *tune, "--layers", "1,2"])
    assert refused.exit_code == 2 and "--layers describes a probe of the frozen encoder" in refused.output
    untuned = runner.invoke(main, ["train", "probe", *args, "--learning-rate", "0.01"])
    assert untuned.exit_code == 2 and "--learning-rate applies only with --tune-blocks" in untuned.output
    too_deep = runner.invoke(main, ["train", "tune", *args, "--blocks", "13"])
    assert too_deep.exit_code == 1 and "layer 13 does not exist" in too_deep.output
    text = "The dog ran. It stopped."
    seg = runner.invoke(main, ["segment", "--model", str(tiny_bert_dir), "--probe", str(out)], input=text)
    assert seg.exit_code == 0, seg.output
    assert " ".join(seg.stdout.split()) == text


def test_documents_without_a_candidate_gap_are_refused(tiny_bert_dir):
    # one long word per document: many tokens but a single word start, so there is no gap to learn from
    docs = [Document(f"w{i}", ("xq" * 40,)) for i in range(4)]
    with pytest.raises(InputError, match="no candidate gaps"):
        tune_probe(str(tiny_bert_dir), docs, TuneConfig(**{**SMALL, "epochs": 1}), ["one long word"])


def test_training_gaps_line_up_with_the_inference_features(tiny_bert_dir):
    """The head's logit at window position p during training is the exported probe's probability of the
    gap before text token p-1 at inference, and its label is what the frozen-probe trainer would use."""
    from segmenter.config import FeatureConfig
    from segmenter.readers.extract import run_batch
    from segmenter.readers.windows import plan
    from segmenter.training.tune import IGNORE, _batch, _example, _gap_logits

    encoder = Encoder(str(tiny_bert_dir), max_layer=2, precision="float32")
    doc = Document(
        "d", ("The cat sat down.", "It was Tired!", "Number 7 ended, ok?", "Yes. no"), paragraph_starts=(2,)
    )
    doc = wrapped(doc, 12)  # line breaks inside sentences and at a paragraph start: the line flag varies
    example = _example(encoder, doc, lines=True)
    assert 0 < example.tokens.surface[:, -2].sum() < len(example.tokens)  # the line-start feature
    model = encoder.model.float().eval()
    attach(model, n_blocks=2, rank=3, seed=1)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, LowRankLinear):
                module.b.normal_(std=0.1)
    width = encoder.hidden_size + example.tokens.surface.shape[1]
    head = torch.nn.Sequential(torch.nn.Linear(2 * width, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    windows = plan(len(example.tokens), WindowConfig(16, 10))
    ids, mask, labels, surface = _batch(encoder, [example], windows)
    with torch.no_grad():
        trained = torch.sigmoid(_gap_logits(model, head, ids, mask, surface)).numpy()  # (B, T)
    probe = Probe(
        np.zeros(2 * width, np.float32),
        np.ones(2 * width, np.float32),
        tuple(layer.weight.detach().numpy().T.copy() for layer in (head[0], head[2])),
        tuple(layer.bias.detach().numpy().copy() for layer in (head[0], head[2])),
        deltas=export(model),
    )
    inference = Encoder(str(tiny_bert_dir), max_layer=2, precision="float32", deltas=probe.deltas)
    features = FeatureConfig(layers=(2,), vectors=False, signals=False, hidden=True, surface=True, lines=True)
    gold = set(doc.boundaries)
    assert len(windows) > 1 and (labels == 1).any()
    for row, (window, feats) in enumerate(run_batch(inference, [example.tokens], windows, features)):
        n = len(window)
        np.testing.assert_allclose(probe.predict(feats.gap_matrix(1)), trained[row, 2 : 1 + n], atol=1e-5)
        np.testing.assert_allclose(
            probe.predict_windows([feats.token_matrix()], 1)[0], trained[row, 2 : 1 + n], atol=1e-5
        )
        starts = np.flatnonzero(example.tokens.word_start[window.start + 1 : window.end])
        expected = np.full(n - 1, IGNORE)
        expected[starts] = [
            int(s in gold) for s in example.tokens.offsets[window.start + 1 + starts, 0].tolist()
        ]
        np.testing.assert_array_equal(labels[row, 2 : 1 + n].numpy(), expected)
        assert (labels[row, :2] == IGNORE).all() and (labels[row, 1 + n :] == IGNORE).all()


def test_training_signals_are_the_inference_signals(tiny_bert_dir):
    """With signals, the head's logit during training is the exported probe's probability at inference:
    the attention signals read from the block being tuned are those `run_batch` computes, standardised
    by the probe's mean and scale."""
    from segmenter.config import FeatureConfig
    from segmenter.readers.extract import run_batch
    from segmenter.readers.windows import plan
    from segmenter.training.tune import _batch, _example, _gap_logits, _SignalReader

    encoder = Encoder(str(tiny_bert_dir), max_layer=2, precision="float32")
    doc = Document("d", ("The cat sat down.", "It was Tired!", "Number 7 ended, ok?", "Yes. no"))
    example = _example(encoder, doc, lines=False)
    model = encoder.model.float().eval()
    windows = plan(len(example.tokens), WindowConfig(16, 10))
    ids, mask, _, surface = _batch(encoder, [example], windows)
    reader = _SignalReader(encoder, 2, span=4)
    reader.fit_scale([(ids, mask, None, None)])
    assert (reader.scale != 1).all()  # fitted, not the defaults
    # No deltas here (the test above covers them): the random model's similarity contrast barely varies,
    # so standardising it would magnify the rounding between unmerged and merged deltas.
    width = reader.width + encoder.hidden_size + example.tokens.surface.shape[1]
    head = torch.nn.Sequential(torch.nn.Linear(2 * width, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    with torch.no_grad():
        trained = torch.sigmoid(_gap_logits(model, head, ids, mask, surface, reader)).numpy()  # (B, T)
    mean, scale = np.zeros(width, np.float32), np.ones(width, np.float32)
    mean[: reader.width], scale[: reader.width] = reader.mean.numpy(), reader.scale.numpy()
    probe = Probe(
        np.tile(mean, 2),
        np.tile(scale, 2),
        tuple(layer.weight.detach().numpy().T.copy() for layer in (head[0], head[2])),
        tuple(layer.bias.detach().numpy().copy() for layer in (head[0], head[2])),
    )
    inference = Encoder(str(tiny_bert_dir), max_layer=2, precision="float32")
    features = FeatureConfig(layers=(2,), vectors=False, signals=True, hidden=True, surface=True)
    assert len(windows) > 1
    for row, (window, feats) in enumerate(run_batch(inference, [example.tokens], windows, features)):
        n = len(window)
        np.testing.assert_allclose(probe.predict(feats.gap_matrix(1)), trained[row, 2 : 1 + n], atol=1e-5)


def test_tuning_with_signals_gives_a_probe_the_segmenter_runs(tiny_bert_dir):
    probe = tune_probe(str(tiny_bert_dir), DOCS, TuneConfig(**SMALL, signals=True), ["synthetic"])
    assert probe.meta["signals"] is True and probe.meta["layers"] == [2]
    assert not np.allclose(probe.scale, 1.0)  # the signals are standardised
    seg = Segmenter(model=str(tiny_bert_dir), probe=probe, precision="float32")
    text = "The cat sat down. It was tired! Number 3 ended."
    assert_invariants(text, seg.segment(text))
