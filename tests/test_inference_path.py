"""The one inference path: incremental window planning and averaging equal the whole-text ones, `pipe`
equals `segment` (exactly with one window per batch), and `Segmenter` is built from one config."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segmenter import ConfigError, Segmenter, WindowConfig
from segmenter.config import SegmenterConfig
from segmenter.readers.windows import GapAverager, Window, WindowPlanner, plan

WORDS = st.sampled_from(
    ["the", "cat", "sat", "It", "rained.", "Then", "we", "left!", "ok", "so", "\n\n", "\n"]
)


@given(
    size=st.integers(8, 40),
    overlap=st.integers(1, 20),
    counts=st.lists(st.integers(0, 400), max_size=8),
)
def test_planner_fed_in_steps_plans_what_plan_plans(size, overlap, counts):
    config = WindowConfig(size=size, stride=max(1, min(size - 3, size - 2 - overlap)))
    steps = sorted(counts) or [0]
    planner = WindowPlanner(config)
    windows = [w for n in steps[:-1] for w in planner.advance(n, final=False)]
    windows += planner.advance(steps[-1], final=True)
    assert windows == plan(steps[-1], config)
    assert planner.advance(steps[-1] + 5, final=True) == []  # nothing after the end


@given(n=st.integers(2, 300), seed=st.integers(0, 1000))
def test_averager_grown_and_trimmed_gives_the_whole_text_averages(n, seed):
    config = WindowConfig(size=16, stride=6)
    windows = plan(n, config)
    rng = np.random.default_rng(seed)
    scores = [rng.random(len(w) - 1).astype(np.float32) for w in windows]
    whole = GapAverager(n)
    for window, s in zip(windows, scores, strict=True):
        whole.add(window, s)
    expected = whole.result()

    growing, got, done = GapAverager(), [], 0
    for i, (window, s) in enumerate(zip(windows, scores, strict=True)):
        growing.grow(window.end)
        growing.add(window, s)
        final = min((later.start for later in windows[i + 1 :]), default=n - 1)  # no later window reaches
        if final > done:
            got.append(growing.averages(done, final))
            growing.trim(done := final)
    assert np.array_equal(np.concatenate(got) if got else np.zeros(0, np.float32), expected)


@pytest.fixture(scope="module")
def one_window_batches(tiny_bert_dir, tiny_probe_dir, one_torch_thread):
    return Segmenter(model=str(tiny_bert_dir), probe=str(tiny_probe_dir), batch_size=1)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(st.lists(WORDS, max_size=120).map(" ".join), max_size=6))
def test_pipe_with_one_window_per_batch_is_segment_exactly(one_window_batches, texts):
    assert list(one_window_batches.pipe(texts, batch_size=1)) == [
        one_window_batches.segment(t) for t in texts
    ]


@pytest.mark.slow
def test_pipe_is_segment_on_real_documents(real_model_documents):
    """The packaged model on real EWT test documents: one window per batch gives the same spans and
    scores; shared batches give the same boundaries."""
    segmenter, texts = real_model_documents
    alone = [segmenter.segment(t) for t in texts]
    assert list(segmenter.pipe(texts, batch_size=1)) == alone
    shared = list(segmenter.pipe(texts))
    assert [[(s.start, s.end) for s in spans] for spans in shared] == [
        [(s.start, s.end) for s in spans] for spans in alone
    ]


@pytest.fixture(scope="module")
def real_model_documents(one_torch_thread):
    from segmenter.gold.corpus import read_conllu

    ewt_test = (
        Path(__file__).resolve().parents[1]
        / "benchmarks"
        / "data"
        / "ud_english_ewt"
        / "en_ewt-ud-test.conllu"
    )
    documents = list(read_conllu(ewt_test))[:40]
    return Segmenter(batch_size=1), [doc.text for doc in documents]


# -- one config ----------------------------------------------------------------------------------------


def test_config_given_whole_or_as_fields_builds_the_same_segmenter(tiny_bert_dir, tiny_probe_dir):
    config = SegmenterConfig(model=str(tiny_bert_dir), probe=str(tiny_probe_dir), threshold=0.3, batch_size=2)
    whole = Segmenter(config)
    fields = Segmenter(**dataclasses.asdict(config))
    assert whole.config == fields.config == config
    overridden = Segmenter(config, threshold=0.9)
    assert overridden.config == dataclasses.replace(config, threshold=0.9)
    assert {d.threshold for d in overridden.decodings.values()} == {0.9}  # every condition's
    assert {d.threshold for d in whole.decodings.values()} == {0.3}
    text = "The cat sat. It rained all day. Then we left."
    assert whole.segment(text) == fields.segment(text)


@pytest.mark.parametrize(
    "settings, named",
    [
        ({"strategy": "rules"}, "strategy"),
        ({"preset": "huge"}, "preset"),
        ({"precision": "float8"}, "precision"),
        ({"batch_size": 0}, "batch_size"),
        ({"threshold": 1.5}, "threshold"),
        ({"max_chars": 0}, "max_chars"),
        ({"model": 3}, "model"),
        ({"probe": 3.5}, "probe"),
    ],
)
def test_config_names_the_bad_setting_before_anything_loads(settings, named):
    with pytest.raises(ConfigError, match=named):
        Segmenter(**settings)


def test_a_positional_model_is_the_model_setting(tiny_bert_dir, tmp_path):
    by_position = Segmenter(tiny_bert_dir, strategy="sep-attention")
    assert by_position.config == Segmenter(model=str(tiny_bert_dir), strategy="sep-attention").config
    text = "one two three. four five six."
    assert by_position.segment(text) == Segmenter(model=str(tiny_bert_dir), strategy="sep-attention").segment(
        text
    )
    with pytest.raises(ConfigError, match="given twice"):
        Segmenter(str(tiny_bert_dir), model=str(tmp_path))


def test_segmenter_refuses_what_is_not_a_config():
    with pytest.raises(ConfigError, match="a model name or folder, a SegmenterConfig"):
        Segmenter(3)
    with pytest.raises(TypeError, match="unknown settings colour"):
        Segmenter(colour="red")


def test_window_is_a_dataclass_of_the_text_and_token_range():
    assert len(Window(0, 3, 9)) == 6


def test_per_head_vectors_are_captured_only_for_features_that_read_them(tiny_bert_dir, monkeypatch):
    from segmenter.config import FeatureConfig
    from segmenter.encoder.torch.encoder import Encoder
    from segmenter.readers.extract import run_batch

    encoder = Encoder(str(tiny_bert_dir), max_layer=2)
    tokens = [encoder.tokenize("The cat sat. It slept.")]
    batch = plan(len(tokens[0]), WindowConfig(size=16, stride=10))
    asked = []
    forward = encoder.forward
    monkeypatch.setattr(encoder, "forward", lambda *a, **k: asked.append(k["contexts"]) or forward(*a, **k))
    hidden_only = FeatureConfig(layers=(2,), vectors=False, signals=False, hidden=True, surface=False)
    for features in (hidden_only, dataclasses.replace(hidden_only, signals=True)):
        found = run_batch(encoder, tokens, batch, features)
        assert found and found[0][1].hidden.shape[0] == len(batch[0])
    assert asked == [False, True]
