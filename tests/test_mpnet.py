"""MPNet as a backbone: capture of attention, per-head contexts and block outputs, separators from its own
special tokens, and the head analysis, on a tiny random 12 x 12 MPNet (no download)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from segmenter.analysis.analyze import run_analysis
from segmenter.analysis.params import AnalysisParams
from segmenter.encoder.torch.attention import layout, self_attention
from segmenter.encoder.torch.encoder import Encoder
from tests.test_analysis_model import SMALL_PROBE, check_attention_rows, make_docs

LAYERS = tuple(range(1, 13))


@pytest.fixture(scope="module")
def tiny_mpnet(tiny_mpnet_dir):
    return Encoder(str(tiny_mpnet_dir), precision="float32")


def batch(enc: Encoder) -> tuple[np.ndarray, np.ndarray]:
    """Two rows `<s> ... </s>`, the second padded with `<pad>`."""
    long = enc.tokenize("It rained all day. We stayed in and read a book.").ids
    short = enc.tokenize("Bye now.").ids
    ids = np.full((2, len(long) + 2), enc.pad_id, dtype=np.int64)
    ids[0] = [enc.cls_id, *long, enc.sep_id]
    ids[1, : len(short) + 2] = [enc.cls_id, *short, enc.sep_id]
    return ids, (ids != enc.pad_id).astype(np.int64)


def test_the_tokenizer_s_own_separators_are_used(tiny_mpnet):
    tokens = tiny_mpnet.tokenizer.convert_ids_to_tokens([tiny_mpnet.cls_id, tiny_mpnet.sep_id])
    assert tokens == ["<s>", "</s>"]
    assert (tiny_mpnet.cls_id, tiny_mpnet.sep_id, tiny_mpnet.pad_id) == (0, 2, 1)
    assert tiny_mpnet.max_positions == 128  # MPNet positions start after the padding index, as RoBERTa's
    assert layout(tiny_mpnet.model.encoder.layer[0]) == "mpnet"


def test_capture_matches_the_model_s_own_attention(tiny_mpnet):
    ids, mask = batch(tiny_mpnet)
    capture = tiny_mpnet.forward(ids, mask, layers=LAYERS, attention_layers=LAYERS, hidden=True)
    with torch.inference_mode():
        reference = tiny_mpnet.model(
            input_ids=torch.as_tensor(ids),
            attention_mask=torch.as_tensor(mask),
            output_attentions=True,
            output_hidden_states=True,
        )
    real = mask.astype(bool)
    attention = np.stack([a.numpy() for a in reference.attentions])  # (L, B, H, T, T)
    hidden = np.stack([h.numpy() for h in reference.hidden_states])  # (L+1, B, T, D)
    assert capture.attentions.shape == attention.shape == (12, 2, 12, ids.shape[1], ids.shape[1])
    for row in range(2):
        n = int(real[row].sum())
        np.testing.assert_allclose(
            capture.attentions[:, row, :, :n, :n], attention[:, row, :, :n, :n], atol=1e-5
        )
        np.testing.assert_allclose(capture.hidden[:, row, :n], hidden[1:, row, :n], atol=1e-4)
        # per-head contexts: each head's probabilities times its value vectors of the layer's input
        for layer in (1, 6, 12):
            attn = self_attention(tiny_mpnet.model.encoder.layer[layer - 1])
            with torch.inference_mode():
                values = attn.v(torch.as_tensor(hidden[layer - 1, row, :n])).view(n, 12, 4)  # (n, H, d)
            expected = np.einsum("hqk,khd->qhd", attention[layer - 1, row, :, :n, :n], values.numpy())
            np.testing.assert_allclose(capture.contexts[layer - 1, row, :n], expected, atol=1e-5)


def test_the_relative_position_bias_is_in_the_captured_attention(tiny_mpnet):
    """Without the bias the probabilities would differ: the fixture draws it large."""
    ids, mask = batch(tiny_mpnet)
    capture = tiny_mpnet.forward(ids[:1], mask[:1], layers=(1,), attention_layers=(1,), contexts=False)
    attn = self_attention(tiny_mpnet.model.encoder.layer[0])
    with torch.inference_mode():
        x = tiny_mpnet.model.embeddings(input_ids=torch.as_tensor(ids[:1]))
        q = attn.q(x).view(1, -1, 12, 4).transpose(1, 2)
        k = attn.k(x).view(1, -1, 12, 4).transpose(1, 2)
        without = torch.softmax(q @ k.transpose(-1, -2) / 2.0, dim=-1).numpy()
    assert np.abs(capture.attentions[0] - without).max() > 0.05


def test_attention_read_in_some_layers_leaves_the_others_as_the_model_runs_them(tiny_mpnet):
    ids, mask = batch(tiny_mpnet)
    full = tiny_mpnet.forward(ids, mask, layers=(2, 5), hidden=True)
    read = tiny_mpnet.forward(
        ids, mask, layers=(2, 5), attention_layers=(2,), summary_layers=(2,), hidden=True
    )
    real = mask.astype(bool)
    np.testing.assert_allclose(read.hidden[:, real], full.hidden[:, real], atol=1e-4)
    np.testing.assert_allclose(read.contexts[:, real], full.contexts[:, real], atol=1e-5)
    to_sep = read.summaries[0, :, 1]  # (B, H, T): attention each token sends to its row's final </s>
    last = mask.sum(-1) - 1
    for row in range(2):
        np.testing.assert_allclose(to_sep[row], read.attentions[0, row, :, :, last[row]], atol=1e-6)


def test_bfloat16_capture_stays_close_to_float32(tiny_mpnet_dir, tiny_mpnet):
    low = Encoder(str(tiny_mpnet_dir), precision="bfloat16")
    ids, mask = batch(tiny_mpnet)
    a = tiny_mpnet.forward(ids, mask, layers=(1, 12), attention_layers=(1, 12), contexts=False).attentions
    b = low.forward(ids, mask, layers=(1, 12), attention_layers=(1, 12), contexts=False).attentions
    n = int(mask[0].sum())
    assert np.abs(a[:, 0, :, :n, :n] - b[:, 0, :, :n, :n]).max() < 0.05


def test_attention_rows_sum_to_one_with_padding(tiny_mpnet):
    check_attention_rows(tiny_mpnet)


def test_head_analysis_on_a_tiny_12_layer_mpnet(tiny_mpnet):
    analysis = run_analysis(tiny_mpnet, make_docs(), AnalysisParams(top_percent=5.0, **SMALL_PROBE), "hand")
    heads = analysis.heads
    assert (heads["n_layers"], heads["n_heads"], heads["head_dim"]) == (12, 12, 4)
    assert np.array(heads["sep_attention"]).shape == (12, 12)
    assert all(len(scores) == 12 for scores in heads["probe_f1_by_layer"].values())
    assert len(heads["claims"]) == 4
    # the texts are `<s> s1 </s> s2 </s> ...`: as many </s> as sentences, one <s> in front
    tokens = analysis.example_tokens
    assert tokens[0] == "<s>" and tokens[-1] == "</s>"
    assert "[CLS]" not in tokens and "[SEP]" not in tokens
    assert tokens.count("</s>") == analysis.example.text.n_sentences


def test_the_report_names_the_model_s_own_separators(tiny_mpnet, tmp_path):
    from segmenter.analysis.report import write_report

    analysis = run_analysis(tiny_mpnet, make_docs(3), AnalysisParams(probe=False), "hand")
    assert analysis.heads["special_tokens"] == {"cls": "<s>", "sep": "</s>"}
    report = write_report(analysis, tmp_path / "out")["report"].read_text(encoding="utf-8")
    assert "[CLS] and [SEP] stand for this model's own `<s>` and `</s>`" in report


def test_a_frozen_probe_trained_on_mpnet_runs_the_default_strategy(tiny_mpnet_dir, tmp_path):
    """The path of the shipped all-mpnet-base-v2 probe: `train probe` on the frozen MPNet (signals, which
    read its attention, and a block output), saved, then loaded by `Segmenter(model=...)` as a preset
    would be; the spans keep every invariant and the probe's meta names the backbone."""
    from segmenter import Segmenter
    from segmenter.config import FeatureConfig, WindowConfig
    from segmenter.gold.corpus import Document
    from segmenter.training.probe import TrainConfig, train_probe
    from tests.invariants import assert_invariants

    encoder = Encoder(str(tiny_mpnet_dir), max_layer=5, precision="float32")
    docs = [Document(f"d{i}", ("The cat sat down.", "It was tired!", f"Number {i} ended.")) for i in range(6)]
    features = FeatureConfig(layers=(5,), vectors=False, signals=True, hidden=True, surface=True, lines=False)
    config = TrainConfig(features=features, window=WindowConfig(16, 12), holdout=0.3)
    folder = train_probe(encoder, docs, config, ["synthetic"]).save(tmp_path / "probe")
    segmenter = Segmenter(model=str(tiny_mpnet_dir), probe=str(folder), precision="float32")
    assert segmenter.encoder.loaded_layers == 5 and segmenter.features.signals
    text = "It rained all day. We stayed in and read.\n\nThen the sun came out"
    assert_invariants(text, segmenter.segment(text))
    assert segmenter.probe.meta["backbone"] == str(tiny_mpnet_dir)


def test_the_shipped_mpnet_probe_fits_the_12_layer_backbone():
    """The shipped all-mpnet-base-v2 probe describes features of a 768-wide, 12-head encoder (the
    backbone itself is not needed: its shape is MPNet-base's)."""
    from types import SimpleNamespace

    from segmenter.probe.probe import Probe
    from segmenter.probe.shipped import probe_dir_for
    from segmenter.readers.build import expected_width, settings_from_meta

    probe = Probe.load(probe_dir_for("all-mpnet-base-v2"))
    settings = settings_from_meta(probe.meta)
    base = SimpleNamespace(n_heads=12, head_dim=64, hidden_size=768)
    assert probe.meta["backbone"] == "all-mpnet-base-v2"
    assert max(settings.features.layers) <= 12
    assert expected_width(settings.features, base) == probe.dimension
