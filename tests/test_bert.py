"""The direct BERT loader (`segmenter.encoder.torch.bert`) computes what transformers' BertModel computes, bit
for bit, and the packaged default loads without importing transformers' modelling code."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch

from segmenter.encoder.torch.bert import load_bert
from segmenter.encoder.torch.encoder import Encoder, packaged_model_path
from tests.conftest import shared_data

KERNELS = [("sdpa", torch.float32), ("eager", torch.bfloat16), ("eager", torch.float32)]


def _batch() -> tuple[torch.Tensor, torch.Tensor]:
    """(3, 24) ids with [CLS] first, rows padded to 24, 17 and 9 tokens."""
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, 30000, (3, 24), generator=generator)
    ids[:, 0] = 101
    mask = torch.ones_like(ids)
    mask[1, 17:] = 0
    mask[2, 9:] = 0
    return ids.masked_fill(mask == 0, 0), mask


@pytest.mark.parametrize(("attention", "dtype"), KERNELS)
def test_outputs_equal_transformers_bit_for_bit_in_eval_and_train(tiny_bert_dir, attention, dtype):
    from transformers import AutoModel

    ours, _, _ = load_bert(tiny_bert_dir, attention)
    theirs = AutoModel.from_pretrained(str(tiny_bert_dir), attn_implementation=attention)
    ours, theirs = ours.to(dtype=dtype).eval(), theirs.to(dtype=dtype).eval()
    ids, mask = _batch()
    with torch.inference_mode():
        for m in (mask, torch.ones_like(mask)):  # padded rows, and a batch without padding
            expected = theirs(input_ids=ids, attention_mask=m).last_hidden_state
            assert torch.equal(ours(input_ids=ids, attention_mask=m).last_hidden_state, expected)
    ours.train()
    theirs.train()  # dropout draws from the generator in the same order
    torch.manual_seed(7)
    expected = theirs(input_ids=ids, attention_mask=mask).last_hidden_state
    torch.manual_seed(7)
    assert torch.equal(ours(input_ids=ids, attention_mask=mask).last_hidden_state, expected)


def test_the_tokenizer_file_tokenizes_as_transformers_tokenizer_does():
    from transformers import AutoTokenizer

    _, special, ours = load_bert(packaged_model_path(), "sdpa")
    hf = AutoTokenizer.from_pretrained(str(packaged_model_path()))
    theirs = hf.backend_tokenizer
    for tokenizer in (ours, theirs):
        tokenizer.no_truncation()
    text = (shared_data() / "ud" / "UD_English-EWT" / "en_ewt-ud-dev.conllu").read_text(encoding="utf-8")
    text = text[:100_000] + " Héllo wörld… ＡＢＣ 東京 e\u0301 \u200b x\u00ad [CLS] U.S.A. 3.14 ##ing"
    a, b = ours.encode(text, add_special_tokens=False), theirs.encode(text, add_special_tokens=False)
    assert (a.ids, a.offsets, a.word_ids) == (b.ids, b.offsets, b.word_ids)
    assert special == {
        "cls_token": hf.cls_token_id,
        "sep_token": hf.sep_token_id,
        "pad_token": hf.pad_token_id,
        "unk_token": hf.unk_token_id,
    }


@pytest.mark.parametrize(
    "change",
    [
        {"model_type": "roberta"},
        {"hidden_act": "gelu_new"},
        {"position_embedding_type": "relative_key"},
        {"is_decoder": True},
    ],
)
def test_other_models_are_left_to_transformers(tiny_bert_dir, tmp_path, change):
    folder = tmp_path / "model"
    shutil.copytree(tiny_bert_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **change}))
    assert load_bert(folder, "sdpa") is None


def test_a_folder_without_safetensors_weights_is_left_to_transformers(tiny_bert_dir, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(tiny_bert_dir, folder)
    (folder / "model.safetensors").unlink()
    assert load_bert(folder, "sdpa") is None


def test_encoder_captures_equal_on_both_loading_paths(tiny_bert_dir, monkeypatch):
    """Hooks, our attention kernel and the block outputs read the same numbers from either model."""
    direct = Encoder(str(tiny_bert_dir), precision="float32")
    monkeypatch.setattr("segmenter.encoder.torch.bert.load_bert", lambda *_: None)
    through_transformers = Encoder(str(tiny_bert_dir), precision="float32")
    assert type(direct.model) is not type(through_transformers.model)
    ids, mask = _batch()
    kwargs = {"layers": (2, 5), "attention_layers": (5,), "hidden": True, "summary_layers": (3,)}
    a = direct.forward(ids.numpy(), mask.numpy(), **kwargs)
    b = through_transformers.forward(ids.numpy(), mask.numpy(), **kwargs)
    for name in ("contexts", "attentions", "hidden", "summaries"):
        assert (getattr(a, name) == getattr(b, name)).all(), name
    assert direct.tokenizer.convert_ids_to_tokens(101) == "[CLS]"  # loaded on first use


def test_the_default_model_segments_without_importing_transformers_models():
    code = (
        "import sys; from segmenter import Segmenter; "
        "print(Segmenter().split('It rained. We stayed in.')); "
        "print(sorted(m for m in sys.modules if m.startswith('transformers')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    spans, modules = out.splitlines()
    assert spans == "['It rained.', 'We stayed in.']"
    assert modules == "[]"


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_transformers_models_read_attention_through_a_registered_attention_function(
    tiny_bert_dir, monkeypatch, precision
):
    """Through transformers the encoder switches the model to its registered attention function: the
    layers it does not read run the model's own kernel (SDPA, or eager products in bfloat16) bit for
    bit, and the probabilities it keeps are the model's own attention weights."""
    from transformers import BertModel

    monkeypatch.setattr("segmenter.encoder.torch.bert.load_bert", lambda *_: None)
    encoder = Encoder(str(tiny_bert_dir), precision=precision)
    assert encoder.model.config._attn_implementation.startswith("segmenter_reading_")
    kernel = encoder.model.config._attn_implementation.removeprefix("segmenter_reading_")
    reference = BertModel.from_pretrained(tiny_bert_dir, attn_implementation=kernel).eval()
    reference = reference.to(next(encoder.model.parameters()).dtype)
    ids, mask = _batch()
    capture = encoder.forward(ids.numpy(), mask.numpy(), layers=(3,), attention_layers=(2,), hidden=True)
    with torch.inference_mode():
        own = reference(input_ids=ids, attention_mask=mask, output_hidden_states=True)
    hidden = own.hidden_states[3].float().numpy()  # block 3's output
    real = mask.numpy().astype(bool)
    if precision == "float32":  # reading layer 2 rounds differently from SDPA only in the last bits
        np.testing.assert_allclose(capture.hidden[0][real], hidden[real], atol=1e-5)
    weights = eager_weights(reference, ids, mask, layer=2)  # (B, H, T, T)
    tolerance = 2e-2 if precision == "bfloat16" else 1e-5
    for row, n in enumerate(mask.sum(1).tolist()):  # the real queries and keys of each row
        np.testing.assert_allclose(
            capture.attentions[0, row, :, :n, :n], weights[row, :, :n, :n], atol=tolerance
        )
    plain = encoder.forward(ids.numpy(), mask.numpy(), layers=(1,), hidden=True)
    with torch.inference_mode():
        first = reference(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states[1]
    assert (plain.hidden[0] == first.float().numpy()).all()  # no layer read: the model's own kernel


def eager_weights(model, ids, mask, layer: int) -> np.ndarray:
    """Layer `layer`'s attention probabilities (B, H, T, T) as transformers' eager attention gives them."""
    from transformers import BertModel

    eager = BertModel.from_pretrained(model.name_or_path, attn_implementation="eager").eval().float()
    with torch.inference_mode():
        out = eager(input_ids=ids, attention_mask=mask, output_attentions=True)
    return out.attentions[layer - 1].float().numpy()
