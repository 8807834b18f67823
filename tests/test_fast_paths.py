"""The fast inference paths compute exactly what their plain definitions compute.

- the encoder's own attention (kept probabilities) gives the model's SDPA outputs;
- attention summaries are the columns and means of the full probabilities;
- the batched similarity contrast equals the per-window definition;
- `Probe.predict_windows` equals `predict` on gap matrices (and stays close with a bfloat16 first layer);
- vectorised surface flags equal the per-token definition;
- precision "auto" resolves to a concrete dtype, and bfloat16 stays close to float32;
- in bfloat16 on a CPU the model's plain attention (`Backend.attention`) gives SDPA's outputs.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from segmenter.encoder import backend as backend_module
from segmenter.encoder.backend import Backend, choose_backend
from segmenter.encoder.torch.encoder import Encoder, resolve_device
from segmenter.errors import ConfigError
from segmenter.probe.contrast import batch_contrast
from segmenter.probe.features import WindowFeatures
from segmenter.readers.windows import Window, batch_inputs
from segmenter.text.surface import FLAGS, token_flags
from segmenter.training.fitting import fit

TEXTS = [
    "The cat sat. It rained all day and we stayed in.",
    "short one",
    "Another text, somewhat longer than the others; with more words to fill it up!",
]


def _batch(encoder: Encoder):
    tokens = [encoder.tokenize(text) for text in TEXTS]
    windows = [Window(i, 0, len(t)) for i, t in enumerate(tokens)]
    ids, mask = batch_inputs([t.ids for t in tokens], windows, encoder.cls_id, encoder.sep_id, encoder.pad_id)
    return ids, mask


@pytest.mark.parametrize("tiny", [True, False], ids=["tiny", "real"])
def test_reading_attention_changes_no_output(tiny_bert_dir, tiny):
    encoder = Encoder(str(tiny_bert_dir) if tiny else None, max_layer=3, precision="float32")
    ids, mask = _batch(encoder)
    layers = (1, 2, 3)
    plain = encoder.forward(ids, mask, layers=layers, hidden=True)
    read = encoder.forward(
        ids, mask, layers=layers, hidden=True, summary_layers=layers, attention_layers=(2,)
    )
    real = mask.astype(bool)  # (B, T)
    for name in ("hidden", "contexts"):
        a, b = getattr(plain, name), getattr(read, name)
        np.testing.assert_allclose(a[:, real], b[:, real], atol=1e-4, rtol=1e-4)
    assert plain.summaries is None and read.summaries.shape == (
        3,
        len(TEXTS),
        3,
        encoder.n_heads,
        ids.shape[1],
    )


def test_summaries_are_columns_of_the_attention(tiny_encoder):
    ids, mask = _batch(tiny_encoder)
    capture = tiny_encoder.forward(ids, mask, layers=(2,), attention_layers=(2,), summary_layers=(2,))
    for row, n in enumerate(mask.sum(1)):
        att = capture.attentions[0, row, :, :n, :n]  # (H, n, n) real part
        summary = capture.summaries[0, row, :, :, :n]  # (3, H, n)
        np.testing.assert_allclose(att.sum(-1), 1.0, atol=1e-5)
        np.testing.assert_allclose(summary[0], att.mean(axis=1), atol=1e-6)  # received
        np.testing.assert_allclose(summary[1], att[:, :, n - 1], atol=1e-6)  # to the final [SEP]
        np.testing.assert_allclose(summary[2], att[:, :, 0], atol=1e-6)  # to [CLS]


def _contrast_one(contexts: np.ndarray, span: int) -> np.ndarray:
    """Reference: (L, H, n) contrast of one window's (L, n, H, d) context vectors, gap by gap."""
    n_layers, n, n_heads, _ = contexts.shape
    unit = contexts / np.maximum(np.linalg.norm(contexts, axis=-1, keepdims=True), 1e-6)
    out = np.zeros((n_layers, n_heads, n))
    for g in range(1, n):
        left, right = unit[:, max(g - span, 0) : g], unit[:, g : min(g + span, n)]
        within_left = np.einsum("lihd,ljhd->lh", left, left) / left.shape[1] ** 2
        within_right = np.einsum("lihd,ljhd->lh", right, right) / right.shape[1] ** 2
        across = np.einsum("lihd,ljhd->lh", left, right) / (left.shape[1] * right.shape[1])
        out[:, :, g - 1] = 0.5 * (within_left + within_right) - across
    return out


@settings(max_examples=30, deadline=None)
@given(
    lengths=st.lists(st.integers(1, 12), min_size=1, max_size=4),
    span=st.integers(1, 5),
    seed=st.integers(0, 99),
)
def test_batched_contrast_matches_the_definition(lengths, span, seed):
    rng = np.random.default_rng(seed)
    width = max(lengths) + 2
    contexts = rng.normal(size=(2, len(lengths), width, 3, 4)).astype(np.float32)  # (L, B, T, H, d)
    batched = batch_contrast(contexts, np.array(lengths), span)  # (L, B, H, N)
    for row, n in enumerate(lengths):
        expected = _contrast_one(contexts[:, row, 1 : n + 1], span)
        np.testing.assert_allclose(batched[:, row, :, :n], expected, atol=1e-4)
        assert not batched[:, row, :, n:].any()


@pytest.mark.parametrize("context", [1, 2])
def test_predict_windows_equals_predict_on_gap_matrices(context):
    rng = np.random.default_rng(context)
    width = 6
    x = rng.normal(size=(400, 2 * context * width)).astype(np.float32)
    probe = fit(x, (x[:, 0] + x[:, -1] > 0).astype(np.int8), kind="mlp", c=0.1, hidden=8)
    windows = [
        WindowFeatures(signals=None, vectors=rng.normal(size=(n, width)).astype(np.float32))
        for n in (2, 3, 17)
    ]
    fast = probe.predict_windows([w.token_matrix() for w in windows], context)
    rounded = probe.predict_windows([w.token_matrix() for w in windows], context, "bfloat16")
    for w, probs, probs_bf16 in zip(windows, fast, rounded, strict=True):
        exact = probe.predict(w.gap_matrix(context))
        np.testing.assert_allclose(probs, exact, atol=1e-5)
        np.testing.assert_allclose(probs_bf16, exact, atol=2e-2)  # bfloat16 first product: ~3 digits
        assert probs_bf16.dtype == exact.dtype


def _flags_one(text: str, start: int, end: int) -> list[bool]:
    """Reference: the flags of one token, straight from their definitions."""
    piece = text[start:end]
    if not piece:
        return [False] * len(FLAGS)
    letters = [c for c in piece if c.isalpha()]
    return [
        piece[0].isupper(),
        len(letters) > 1 and all(c.isupper() for c in letters),
        piece[0].islower(),
        piece[0].isdigit(),
        piece in (".", "!", "?", "\u2026", "..."),
        piece in tuple("\"')]}\u201d\u2019\u00bb"),
        piece in (",", ";", ":"),
    ]


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from(list("aAbZ.!?\u2026,;:)\"'\u2019\u00bb1 \u2167\u00c9\u00e9\ud800")),
        max_size=30,
    ),
    data=st.data(),
)
def test_vectorised_flags_match_the_definition(text, data):
    spans = data.draw(st.lists(st.tuples(st.integers(0, len(text)), st.integers(0, 4)), max_size=10))
    offsets = np.array([(a, min(a + k, len(text))) for a, k in spans], dtype=np.int64).reshape(-1, 2)
    expected = np.array([_flags_one(text, a, b) for a, b in offsets.tolist()], dtype=np.float32)
    np.testing.assert_array_equal(token_flags(text, offsets), expected.reshape(-1, len(FLAGS)))


def test_precision_auto_resolves_and_unknown_is_refused():
    assert choose_backend("auto", resolve_device("cpu")).precision in ("float32", "bfloat16")
    assert choose_backend("float32", resolve_device("cpu")) == Backend("float32")
    assert choose_backend("int8", resolve_device("cpu")) == Backend("int8")
    with pytest.raises(ConfigError, match="precision"):
        choose_backend("float16", resolve_device("cpu"))
    with pytest.raises(ConfigError, match="CPU only"):
        choose_backend("int8", torch.device("cuda"))


def test_bfloat16_features_stay_close_to_float32(tiny_bert_dir):
    full, half = (Encoder(str(tiny_bert_dir), max_layer=2, precision=p) for p in ("float32", "bfloat16"))
    assert half.model.dtype.is_floating_point and half.precision == "bfloat16"
    ids, mask = _batch(full)
    a = full.forward(ids, mask, layers=(1, 2), hidden=True, summary_layers=(1, 2))
    b = half.forward(ids, mask, layers=(1, 2), hidden=True, summary_layers=(1, 2))
    assert b.hidden.dtype == np.float32  # captures are float32 whatever the arithmetic
    real = mask.astype(bool)
    scale = np.abs(a.hidden[:, real]).max()
    assert np.abs(a.hidden[:, real] - b.hidden[:, real]).max() < 0.05 * scale
    np.testing.assert_allclose(a.summaries, b.summaries, atol=0.05)


@pytest.mark.parametrize(
    "flags, bfloat16_cpu_kernel",
    [({"avx512_bf16"}, "eager"), ({"avx512_bf16", "amx_bf16", "amx_tile"}, "sdpa"), (set(), "eager")],
)
def test_the_attention_kernel_follows_precision_device_and_cpu(monkeypatch, flags, bfloat16_cpu_kernel):
    """Plain products for bfloat16 on a CPU without AMX; SDPA with AMX, in float32 and on a GPU."""
    monkeypatch.setattr(backend_module, "cpu_flags", lambda: frozenset(flags))
    assert choose_backend("bfloat16", torch.device("cpu")).attention == bfloat16_cpu_kernel
    assert choose_backend("float32", torch.device("cpu")).attention == "sdpa"
    assert choose_backend("bfloat16", torch.device("cuda")).attention == "sdpa"


def test_bfloat16_cpu_attention_is_plain_and_matches_sdpa(tiny_bert_dir, monkeypatch):
    monkeypatch.setattr(backend_module, "cpu_flags", lambda: frozenset({"avx512_bf16"}))  # no AMX
    assert choose_backend("bfloat16", torch.device("cpu")).attention == "eager"
    plain = Encoder(str(tiny_bert_dir), max_layer=2, precision="bfloat16")
    fused = Encoder(str(tiny_bert_dir), max_layer=2, precision="bfloat16")
    fused.model.set_attn_implementation("sdpa")
    assert plain.model.config._attn_implementation == "eager"
    assert fused.model.config._attn_implementation == "sdpa"
    ids, mask = _batch(plain)
    a = plain.forward(ids, mask, layers=(1, 2), hidden=True)
    b = fused.forward(ids, mask, layers=(1, 2), hidden=True)
    real = mask.astype(bool)
    scale = np.abs(b.hidden[:, real]).max()
    assert np.abs(a.hidden[:, real] - b.hidden[:, real]).max() < 0.02 * scale
    np.testing.assert_allclose(a.contexts[:, real], b.contexts[:, real], atol=0.02 * np.abs(b.contexts).max())
