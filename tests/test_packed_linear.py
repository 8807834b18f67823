"""bfloat16 linear layers reordered once for oneDNN (`segmenter.encoder.torch.packed_linear`): the same
products."""

from __future__ import annotations

import contextlib

import pytest
import torch
from invariants import assert_same_spans
from torch import nn

from segmenter import Segmenter
from segmenter.encoder.torch.packed_linear import PackedLinear, pack_linears, packing_available

TEXTS = [
    "It rained all day. We stayed in. Dr. Smith arrived at 5 p.m. and left.",
    "okay so um thanks everyone for joining today great thanks jenny",
    "Hi Sarah,\n\nThe report is attached.\n\nBest,\nTom",
]
SHAPES = [(384, 384), (384, 1536), (1536, 384), (384, 768), (768, 384)]  # MiniLM's, whole and narrowed
ROWS = [1, 7, 57, 171, 256, 2048]


@contextlib.contextmanager
def threads(count: int):
    saved = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


def layers_and_inputs():
    torch.manual_seed(0)
    for inputs, outputs in SHAPES:
        linear = nn.Linear(inputs, outputs).to(torch.bfloat16).eval()
        yield linear, PackedLinear(linear), [torch.randn(rows, inputs).to(torch.bfloat16) for rows in ROWS]


needs_packing = pytest.mark.skipif(not packing_available(), reason="no oneDNN bfloat16 products here")


@needs_packing
def test_at_one_thread_a_packed_layer_multiplies_like_torch_bit_for_bit():
    with threads(1):
        for linear, packed, inputs in layers_and_inputs():
            for x in inputs:
                assert torch.equal(packed(x), linear(x)), (linear, x.shape)


@needs_packing
def test_at_two_threads_a_packed_layer_differs_at_most_in_the_last_bit():
    with threads(2):
        for linear, packed, inputs in layers_and_inputs():
            for x in inputs:
                # within one bfloat16 step (2**-7 of the value)
                torch.testing.assert_close(packed(x), linear(x), rtol=2**-6, atol=1e-6)


def test_pack_linears_replaces_bfloat16_layers_only():
    model = nn.Sequential(nn.Linear(8, 8).to(torch.bfloat16), nn.Sequential(nn.Linear(8, 8)))
    assert pack_linears(model) == (1 if packing_available() else 0)
    assert isinstance(model[0], PackedLinear) == packing_available()
    assert type(model[1][0]) is nn.Linear  # float32: left as it was


def test_the_encoder_packs_its_blocks_where_it_can():
    blocks = Segmenter(precision="bfloat16").encoder.model.encoder.layer
    assert isinstance(blocks[0].attention.self.query, PackedLinear) == packing_available()
    assert isinstance(blocks[-1].output.dense, PackedLinear) == packing_available()
    float_query = Segmenter(precision="float32").encoder.model.encoder.layer[0].attention.self.query
    assert float_query.weight.dtype == torch.float32


def test_a_packed_segmenter_finds_the_same_spans(monkeypatch):
    packed = Segmenter(precision="bfloat16")
    with threads(1):
        found_alone = [packed.segment(text) for text in TEXTS]
    found = [packed.segment(text) for text in TEXTS]
    monkeypatch.setattr("segmenter.encoder.torch.packed_linear.packing_available", lambda: False)
    plain = Segmenter(precision="bfloat16")
    assert isinstance(plain.encoder.model.encoder.layer[0].attention.self.query, nn.Linear)
    with threads(1):
        assert [plain.segment(text) for text in TEXTS] == found_alone  # offsets and scores, exactly
    for text, spans in zip(TEXTS, found, strict=True):
        assert_same_spans(plain.segment(text), spans)
