"""Averaged probes: one wider MLP computes the mean logit of its members, and training builds it."""

from __future__ import annotations

import numpy as np
import pytest

from segmenter.config import FeatureConfig, WindowConfig
from segmenter.encoder.torch.encoder import Encoder
from segmenter.errors import ConfigError
from segmenter.gold.corpus import Document
from segmenter.probe.features import WindowFeatures
from segmenter.probe.probe import Probe
from segmenter.training.fitting import average, fit
from segmenter.training.probe import TrainConfig, train_probe


def _data(seed: int = 0, width: int = 6):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(300, 2 * width)).astype(np.float32)
    return x, (x[:, 0] - x[:, -1] > 0.3).astype(np.int8)


def test_average_is_the_mean_logit_of_its_members():
    x, y = _data()
    members = [fit(x, y, kind="mlp", c=0.1, hidden=8, seed=seed) for seed in range(3)]
    merged = average(members)
    assert merged.weights[0].shape == (x.shape[1], 24)
    expected = np.mean([m.logits(x) for m in members], axis=0)
    np.testing.assert_allclose(merged.logits(x), expected, atol=1e-5)
    window = WindowFeatures(signals=None, vectors=x[:9, :6])
    (fast,) = merged.predict_windows([window.token_matrix()], context=1)
    np.testing.assert_allclose(fast, merged.predict(window.gap_matrix(1)), atol=1e-5)


def test_average_refuses_what_it_cannot_merge():
    x, y = _data()
    mlp = fit(x, y, kind="mlp", c=0.1, hidden=8)
    with pytest.raises(ValueError, match="one-hidden-layer"):
        average([mlp, fit(x, y, kind="logistic")])
    x2, y2 = _data(seed=1)
    with pytest.raises(ValueError, match="different features"):
        average([mlp, fit(x2, y2, kind="mlp", c=0.1, hidden=8)])
    with pytest.raises(ValueError, match="at least one"):
        average([])


def test_members_are_validated():
    with pytest.raises(ConfigError, match="at least 1"):
        TrainConfig(members=0)
    with pytest.raises(ConfigError, match="logistic"):
        TrainConfig(kind="logistic", members=2)


def test_training_with_members_averages_consecutive_seeds(tiny_bert_dir, tmp_path):
    encoder = Encoder(str(tiny_bert_dir), max_layer=1)
    docs = [Document(f"d{i}", ("The cat sat down.", f"Number {i} ended!")) for i in range(5)]
    base = dict(features=FeatureConfig(layers=(1,), hidden=True), window=WindowConfig(16, 10), hidden_units=8)
    single = train_probe(encoder, docs, TrainConfig(**base, seed=3), ["synthetic"])
    pair = train_probe(encoder, docs, TrainConfig(**base, seed=3, members=2), ["synthetic"])
    assert pair.meta["members"] == 2 and single.meta["members"] == 1
    assert pair.weights[0].shape == (single.dimension, 16)
    np.testing.assert_array_equal(pair.weights[0][:, :8], single.weights[0])  # member 1 = seed 3's fit
    assert not np.array_equal(pair.weights[0][:, 8:], single.weights[0])  # member 2 has its own seed
    reloaded = Probe.load(pair.save(tmp_path / "pair"))
    np.testing.assert_array_equal(reloaded.weights[0], pair.weights[0])
