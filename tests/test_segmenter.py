"""The Segmenter API: windows, strategies, invariants, probes, and the real packaged model."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from invariants import assert_invariants

from segmenter import ConfigError, ProbeError, Segmenter, WindowConfig
from segmenter.encoder.torch.encoder import Encoder
from segmenter.probe.probe import Probe
from segmenter.readers.windows import GapAverager, plan
from segmenter.training.probe import THRESHOLDS

SAMPLE = (
    "The storm knocked out power across the valley on Tuesday. Crews worked through the night to "
    "restore it. By morning most homes had electricity again, officials said."
)


# -- windows --------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 5, 6, 7, 50, 257])
def test_every_gap_lies_inside_some_window(n):
    config = WindowConfig(size=8, stride=3)
    windows = plan(n, config)
    covered = set()
    for w in windows:
        assert 0 <= w.start < w.end <= n and len(w) <= config.content
        covered.update(range(w.start, w.end - 1))
    assert covered == set(range(n - 1))


def test_gap_average_weights_window_centres():
    averager = GapAverager(10)
    windows = plan(10, WindowConfig(size=8, stride=4))  # content 6: [0,6) and [4,10)
    assert [(w.start, w.end) for w in windows] == [(0, 6), (4, 10)]
    for w in windows:
        averager.add(w, np.full(len(w) - 1, float(w.start)))
    result = averager.result()
    assert result[0] == 0.0 and result[-1] == 4.0
    assert result[4] == 2.0  # gap 4 has weight 1 in the first window and 1 in the second


def test_window_config_rejects_stride_without_overlap():
    with pytest.raises(ConfigError, match="stride"):
        WindowConfig(size=16, stride=14)


# -- a tiny random model (fast) --------------------------------------------------------------------


@pytest.fixture(scope="module", params=["probe", "sep-attention", "similarity"])
def tiny_segmenter(request, tiny_bert_dir, tiny_probe_dir):
    probe = tiny_probe_dir if request.param == "probe" else None
    return Segmenter(model=str(tiny_bert_dir), strategy=request.param, probe=probe, batch_size=3)


def test_probe_meta_records_training(tiny_probe_dir, tiny_bert_dir):
    meta = Probe.load(tiny_probe_dir).meta
    assert meta["backbone"] == str(tiny_bert_dir)
    assert meta["layers"] == [1, 2] and meta["training_data"] == ["synthetic"]
    assert meta["threshold"] in THRESHOLDS.tolist()
    assert set(meta["thresholds"].values()) <= set(THRESHOLDS.tolist())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(
        alphabet=st.characters(codec="utf-8", categories=("L", "N", "P", "Z", "S", "Cc", "Mn")), max_size=300
    )
)
def test_invariants_on_arbitrary_text(tiny_segmenter, text):
    assert_invariants(text, tiny_segmenter.segment(text))


def test_text_longer_than_one_window(tiny_segmenter):
    text = " ".join(f"Sentence number {i} is here." for i in range(200))  # ~1400 tokens, window 126
    assert len(tiny_segmenter.encoder.tokenize(text)) > 5 * tiny_segmenter.window.size
    spans = tiny_segmenter.segment(text)
    assert_invariants(text, spans)


def test_pipe_matches_one_by_one(tiny_segmenter):
    texts = [SAMPLE, "", "Short one.", SAMPLE[:50] + "\n\n" + SAMPLE]
    together = list(tiny_segmenter.pipe(texts, batch_size=2))
    alone = [tiny_segmenter.segment(t) for t in texts]
    assert [[(s.start, s.end) for s in spans] for spans in together] == [
        [(s.start, s.end) for s in spans] for spans in alone
    ]


def test_blank_line_splits_even_without_model_boundary(tiny_bert_dir):
    seg = Segmenter(model=str(tiny_bert_dir), strategy="similarity", threshold=1.0)
    assert seg.split("alpha beta\n\n  gamma delta\r\n\r\nepsilon") == ["alpha beta", "gamma delta", "epsilon"]


def test_threshold_extremes(tiny_bert_dir):
    text = "one two three four five"
    assert len(Segmenter(model=str(tiny_bert_dir), strategy="similarity", threshold=1.0).split(text)) == 1
    assert len(Segmenter(model=str(tiny_bert_dir), strategy="similarity", threshold=0.0).split(text)) == 5


def test_probe_for_another_backbone_is_refused(tiny_probe_dir):
    with pytest.raises(ProbeError, match="trained on backbone"):
        Segmenter(probe=tiny_probe_dir)


def test_corrupted_probe_file_names_the_file(tiny_probe_dir, tmp_path, tiny_bert_dir):
    broken = tmp_path / "broken"
    Probe.load(tiny_probe_dir).save(broken)
    (broken / "probe.npz").write_bytes(b"not a zip file")
    with pytest.raises(ProbeError, match="probe.npz"):
        Segmenter(model=str(tiny_bert_dir), probe=broken)


def test_unknown_strategy_is_a_config_error():
    with pytest.raises(ConfigError, match="choose one of"):
        Segmenter(strategy="magic")


# -- the real packaged model ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_segmenter():
    return Segmenter()


def test_real_model_splits_plain_sentences(real_segmenter):
    assert real_segmenter.split(SAMPLE) == [
        "The storm knocked out power across the valley on Tuesday.",
        "Crews worked through the night to restore it.",
        "By morning most homes had electricity again, officials said.",
    ]


def test_real_model_splits_unpunctuated_text(real_segmenter):
    text = "i went to the store yesterday i bought some milk and bread then i walked home"
    spans = real_segmenter.segment(text)
    assert_invariants(text, spans)
    assert len(spans) >= 2


def test_real_model_long_document(real_segmenter):
    text = " ".join([SAMPLE] * 40)  # several windows
    spans = real_segmenter.segment(text)
    assert_invariants(text, spans)
    assert 80 <= len(spans) <= 160


def test_real_model_attention_rows_sum_to_one():
    encoder = Encoder(max_layer=3)
    tokens = encoder.tokenize(SAMPLE)
    ids = np.array([[encoder.cls_id, *tokens.ids, encoder.sep_id]])
    capture = encoder.forward(ids, np.ones_like(ids), layers=(1, 3), attention_layers=(1, 3))
    np.testing.assert_allclose(capture.attentions.sum(-1), 1.0, atol=1e-5)
    assert capture.contexts.shape == (2, 1, ids.shape[1], 12, 32)


def test_unavailable_device_is_a_config_error(tiny_bert_dir):
    import torch

    if torch.cuda.is_available():  # pragma: no cover - only on GPU machines
        assert (
            Segmenter(model=str(tiny_bert_dir), strategy="similarity", device="cuda").encoder.device.type
            == "cuda"
        )
        return
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        Segmenter(model=str(tiny_bert_dir), strategy="similarity", device="cuda")
    with pytest.raises(ConfigError, match="unknown device"):
        Segmenter(model=str(tiny_bert_dir), strategy="similarity", device="toaster")


def test_gpu_index_beyond_the_machine_is_a_config_error(monkeypatch):
    """cuda:N past the last GPU is refused by name before torch fails with "invalid device ordinal"."""
    import torch

    from segmenter.encoder.torch.encoder import resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert resolve_device("cuda:0") == torch.device("cuda:0")
    assert resolve_device("cuda") == torch.device("cuda")
    with pytest.raises(ConfigError, match=r"'cuda:7' requested but this machine has 1 CUDA GPU \(cuda:0 to"):
        resolve_device("cuda:7")


def test_presets_pick_their_shipped_probes():
    from segmenter.encoder.torch.encoder import Encoder

    # in float32, so that the torch model's weights are there to inspect (on a CPU with VNNI, auto is
    # int8; in bfloat16 on a CPU they are reordered for oneDNN, segmenter.encoder.torch.packed_linear)
    accurate, fast = Segmenter(precision="float32"), Segmenter(preset="fast", precision="float32")
    assert accurate.features.layers == (3,) and fast.features.layers == (2,)
    assert fast.encoder.loaded_layers == 2  # layers after the last one read are never loaded
    # the tuned presets run the packaged weights plus their deltas
    query = "encoder.layer.0.attention.self.query"
    tuned_weight = fast.encoder.model.encoder.layer[0].attention.self.query.weight
    frozen = Encoder(max_layer=1, precision="float32")
    frozen_weight = frozen.model.encoder.layer[0].attention.self.query.weight
    delta = torch.from_numpy(fast.probe.deltas[f"{query}.b"] @ fast.probe.deltas[f"{query}.a"])
    torch.testing.assert_close(tuned_weight, frozen_weight + delta.float(), atol=1e-5, rtol=1e-5)
    assert not torch.equal(tuned_weight, frozen_weight)
    fastest = Segmenter(preset="fastest")  # two blocks narrowed to 6 of 12 heads and 768 of 1,536 units
    assert fastest.features.layers == (2,) and fastest.encoder.loaded_layers == 2
    block = fastest.encoder.model.encoder.layer[0]
    assert block.intermediate.dense.out_features == 768  # a packed bfloat16 linear layer keeps its sizes
    assert block.attention.self.query.out_features == 6 * 32  # heads of 32 dimensions
    text = "It rained all day. We stayed in and read."
    for seg in (accurate, fast, fastest):
        assert [s.text for s in seg.segment(text)] == ["It rained all day.", "We stayed in and read."]
    with pytest.raises(ConfigError, match="preset"):
        Segmenter(preset="medium")
    with pytest.raises(ConfigError, match="'frozen' was retired: it was trained on the UD English dev"):
        Segmenter(preset="frozen")
