"""Shared fixtures: the real packaged backbone (offline), and a tiny random BERT and MPNet for fast unit
tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_data() -> Path:
    """The gold data folder next to the project (../shared/data)."""
    return DATA


@pytest.fixture(autouse=True, scope="session")
def private_cache(tmp_path_factory):
    """Caches (the int8 graphs of `segmenter.encoder.onnx.export`) go to a folder of this run, never the
    user's."""
    import os

    saved = os.environ.get("SEGMENTER_CACHE")
    os.environ["SEGMENTER_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if saved is None:
        os.environ.pop("SEGMENTER_CACHE", None)
    else:
        os.environ["SEGMENTER_CACHE"] = saved


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory) -> Path:
    """A randomly initialised 12-layer x 12-head BERT (hidden 48) with the packaged WordPiece tokenizer."""
    import torch
    from transformers import BertConfig, BertModel

    from segmenter.encoder.torch.encoder import packaged_model_path

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny-bert")
    config = BertConfig(
        vocab_size=30522,
        hidden_size=48,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=96,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(path)
    source = packaged_model_path()
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(source / name, path / name)
    return path


@pytest.fixture(scope="session")
def tiny_mpnet_dir(tmp_path_factory) -> Path:
    """A randomly initialised 12-layer x 12-head MPNet (hidden 48) with an MPNet tokenizer (`<s>`, `</s>`,
    `<pad>` at MPNet's ids 0, 2, 1) over the packaged WordPiece vocabulary. Its relative position bias
    is drawn large, so that a kernel that left it out would give other attention."""
    import torch
    from transformers import MPNetConfig, MPNetModel, MPNetTokenizerFast

    from segmenter.encoder.torch.encoder import packaged_model_path

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny-mpnet")
    specials = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
    words = (packaged_model_path() / "vocab.txt").read_text(encoding="utf-8").splitlines()
    vocab = ["<s>", "<pad>", "</s>", "[UNK]"] + [w for w in words if w not in specials] + ["<mask>"]
    tokenizer = MPNetTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True)
    config = MPNetConfig(
        vocab_size=len(vocab),
        hidden_size=48,
        num_hidden_layers=12,
        num_attention_heads=12,
        intermediate_size=96,
        max_position_embeddings=130,
    )
    model = MPNetModel(config)
    with torch.no_grad():
        model.encoder.relative_attention_bias.weight.normal_(0.0, 2.0)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_encoder(tiny_bert_dir):
    from segmenter.encoder.torch.encoder import Encoder

    return Encoder(str(tiny_bert_dir))


@pytest.fixture(scope="session")
def real_encoder():
    from segmenter.encoder.torch.encoder import Encoder

    return Encoder()


@pytest.fixture(scope="session")
def tiny_probe_dir(tiny_bert_dir, tmp_path_factory) -> Path:
    """A probe trained on the tiny random model, so the probe strategy runs end to end quickly."""
    from segmenter.config import FeatureConfig, WindowConfig
    from segmenter.encoder.torch.encoder import Encoder
    from segmenter.gold.corpus import Document
    from segmenter.training.probe import TrainConfig, train_probe

    encoder = Encoder(str(tiny_bert_dir), max_layer=2)
    docs = [Document(f"d{i}", ("The cat sat down.", "It was tired!", f"Number {i} ended.")) for i in range(6)]
    config = TrainConfig(
        features=FeatureConfig(layers=(1, 2), hidden=True), window=WindowConfig(16, 10), holdout=0.3
    )
    return train_probe(encoder, docs, config, ["synthetic"]).save(tmp_path_factory.mktemp("probe"))


@pytest.fixture(scope="module")
def one_torch_thread():
    """Small models gain little from threads, and on a shared machine they only contend."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture
def tiny_conllu(tmp_path) -> Path:
    """Six two-sentence documents in CoNLL-U (text lines only), for training runs that must be quick."""
    path = tmp_path / "tiny.conllu"
    path.write_text(
        "".join(
            f"# newdoc id = d{i}\n# text = The cat sat.\n# text = It slept {i} hours!\n" for i in range(6)
        ),
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def monkeypatch_module():
    """Small stream pieces and a short look-ahead, so a few hundred characters cross many piece
    boundaries."""
    import segmenter.readers.stream as stream
    import segmenter.text.conditions as conditions

    patch = pytest.MonkeyPatch()
    patch.setattr(stream, "PIECE_CHARS", 24)
    patch.setattr(conditions, "LOOK_CHARS", 30)
    yield patch
    patch.undo()


@pytest.fixture(scope="module")
def runner():
    """click's CliRunner, for invoking `segmenter.cli.main.main` in-process (stdout and stderr apart)."""
    from click.testing import CliRunner

    return CliRunner()
