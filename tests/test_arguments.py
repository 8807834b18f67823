"""Bad arguments are refused where they are given, with one clear line: CLI options with a usage error
(exit 2), `Segmenter(...)` and the spaCy component at construction with a `ConfigError` naming the
argument, before any model or probe loads; a str where an iterable of texts belongs is a TypeError at
the call, not a segmentation of each character."""

from __future__ import annotations

import pytest
import spacy
from click.testing import CliRunner

import segmenter.readers.build as segmenter_module
from segmenter.api import Segmenter
from segmenter.cli.main import main
from segmenter.config import DecodeConfig
from segmenter.errors import ConfigError
from segmenter.integrations.spacy import AttentionSegmenter


@pytest.fixture
def sample(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("It rained. We stayed in.", encoding="utf-8")
    return path


def assert_usage_error(result, *needles: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in result.stderr, result.stderr


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "-0.1", "1.5"])
def test_threshold_outside_zero_to_one_is_a_usage_error(sample, value):
    """Regression: --threshold nan passed click's range check and failed later with exit 1."""
    result = CliRunner().invoke(main, ["segment", "--threshold", value, str(sample)])
    assert_usage_error(result, "--threshold")


@pytest.mark.parametrize(
    ("option", "value"), [("--c", "nan"), ("--learning-rate", "inf"), ("--holdout", "nan")]
)
def test_train_float_options_refuse_nan_and_inf(tmp_path, option, value):
    subcommand = ["tune", "--blocks", "1"] if option == "--learning-rate" else ["probe"]
    data = ["--data", f"conllu:{tmp_path / 'missing.conllu'}", "--out", str(tmp_path / "p")]
    assert_usage_error(CliRunner().invoke(main, ["train", *subcommand, *data, option, value]), option)


def test_empty_output_path_is_a_usage_error(sample):
    """Regression: -o "" said `output  is a directory` and exited 1."""
    result = CliRunner().invoke(main, ["segment", str(sample), "-o", ""])
    assert_usage_error(result, "-o", "empty")
    assert "is a directory" not in result.stderr


def test_empty_input_name_is_a_usage_error(sample):
    result = CliRunner().invoke(main, ["segment", str(sample), ""])
    assert_usage_error(result, "FILES", "empty")


@pytest.fixture
def nothing_loads(monkeypatch):
    """Fail the test if a probe or an encoder is loaded: bad arguments must be refused first."""

    def refuse(*args, **kwargs):
        raise AssertionError("loaded something before checking the arguments")

    monkeypatch.setattr(segmenter_module, "load_probe_for", refuse)
    monkeypatch.setattr(segmenter_module, "open_encoder", refuse)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch_size": 1.5}, "batch_size must be a whole number of at least 1, got 1.5"),
        ({"batch_size": True}, "batch_size must be a whole number"),
        ({"batch_size": 0}, "batch_size must be a whole number of at least 1, got 0"),
        ({"batch_size": "16"}, "batch_size must be a whole number"),
        ({"threshold": "0.5"}, "threshold must be a number between 0 and 1, got '0.5'"),
        ({"threshold": float("nan")}, "threshold must be a number between 0 and 1, got nan"),
        ({"threshold": 2}, "threshold must be a number between 0 and 1"),
        ({"threshold": True}, "threshold must be a number between 0 and 1"),
        ({"max_chars": 1.5}, "max_chars must be a whole number of at least 1 or None, got 1.5"),
        ({"max_chars": 0}, "max_chars must be a whole number of at least 1 or None"),
        ({"max_chars": "80"}, "max_chars must be a whole number"),
        ({"model": 3}, "model must be None, a Hugging Face id or a local path, got int 3"),
        ({"probe": 5}, "probe must be None, a folder or a Probe, got int 5"),
    ],
)
def test_bad_segmenter_arguments_fail_at_construction(nothing_loads, kwargs, message):
    """Regression: batch_size=1.5 was accepted and failed later with `slice indices must be integers`,
    threshold="0.5" with an unclear TypeError, max_chars=1.5 split every word off."""
    with pytest.raises(ConfigError) as caught:
        Segmenter(**kwargs)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_numpy_numbers_are_accepted():
    import numpy as np

    config = DecodeConfig(threshold=np.float32(0.25), max_chars=np.int64(10))
    assert config.threshold == pytest.approx(0.25) and config.max_chars == 10


@pytest.fixture(scope="module")
def tiny(tiny_bert_dir):
    return Segmenter(model=str(tiny_bert_dir), strategy="similarity")


@pytest.mark.parametrize("texts", ["Hello. World.", b"Hello. World."], ids=["str", "bytes"])
def test_one_text_where_texts_belong_is_a_type_error_at_the_call(tiny, texts):
    """Regression: pipe("Hello. World.") segmented each character as a text."""
    with pytest.raises(TypeError, match="must be an iterable of str, not one"):
        tiny.pipe(texts)  # not even iterated: the call itself refuses
    with pytest.raises(TypeError, match="must be an iterable of str, not one"):
        tiny.segment_stream(texts)
    with pytest.raises(TypeError, match="must be an iterable of str, not one"):
        tiny.gap_probabilities(texts)
    with pytest.raises(ConfigError, match="batch_size"):
        tiny.pipe(["a"], batch_size=1.5)
    assert [[s.text for s in spans] for spans in tiny.pipe(["Hello. World."])] == [
        [s.text for s in tiny.segment("Hello. World.")]
    ]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"batch_size": 1.5}, "batch_size must be a whole number"),
        ({"threshold": "0.5"}, "threshold must be a number between 0 and 1"),
        ({"model": 3}, "model must be a name or a path"),
    ],
)
def test_bad_component_settings_fail_at_construction(settings, message):
    with pytest.raises(ConfigError, match=message):
        AttentionSegmenter(**settings)


def test_component_pipe_refuses_one_text_or_one_doc():
    nlp = spacy.blank("en")
    component = AttentionSegmenter(strategy="similarity")
    for wrong in ("Hello. World.", nlp("Hello. World.")):
        with pytest.raises(TypeError, match="takes an iterable of Doc"):
            component.pipe(wrong)
