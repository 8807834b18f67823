"""Each optional part (pip extra) missing: the feature that needs it raises one line naming the extra, and
the CLI command prints it as `Error: ...` and exits 1.

A library is made unimportable by putting None in sys.modules for it and its loaded submodules (what
Python does for a module that is not installed, as far as an import statement can tell); monkeypatch
puts the real modules back after each test.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from segmenter.cli import main
from segmenter.errors import MissingExtraError, SegmenterError
from segmenter.extras import missing_extra, require, require_installed


def _message(extra: str, feature: str) -> str:
    return f"{feature} needs the [{extra}] extra: pip install 'attention-segmenter[{extra}]'"


@pytest.fixture
def block(monkeypatch):
    """block("sklearn", ...): those libraries, and every submodule of them loaded so far, unimportable."""

    def unimportable(*names: str) -> None:
        for name in names:
            for loaded in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
                monkeypatch.setitem(sys.modules, loaded, None)
            monkeypatch.setitem(sys.modules, name, None)

    return unimportable


def _fails_in_one_line(args: list[str], extra: str, feature: str) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert result.output == f"Error: {_message(extra, feature)}\n"


# --- the helper ---------------------------------------------------------------------------------------


def test_the_error_is_one_line_naming_the_extra_and_its_install_command(block):
    block("sklearn")
    with pytest.raises(MissingExtraError) as caught:
        require("sklearn", "train", "training a probe")
    assert str(caught.value) == _message("train", "training a probe")
    assert "\n" not in str(caught.value)
    assert isinstance(caught.value, SegmenterError) and isinstance(caught.value, ImportError)
    assert isinstance(caught.value.__cause__, ModuleNotFoundError)
    assert str(missing_extra("ray", "--engine ray")) == _message("ray", "--engine ray")


def test_require_installed_imports_nothing_and_finds_what_is_there(block):
    require_installed(("json", "numpy"), "bench", "x")
    assert "no_such_module_here" not in sys.modules
    with pytest.raises(MissingExtraError, match=r"\[bench\]"):
        require_installed(("json", "no_such_module_here"), "bench", "x")
    block("pysbd")
    with pytest.raises(MissingExtraError, match=r"^segmenter bench needs the \[bench\] extra"):
        require_installed(("pysbd",), "bench", "segmenter bench")


# --- [spacy] ------------------------------------------------------------------------------------------


def test_spacy_component_without_spacy(block, monkeypatch):
    block("spacy", "srsly")
    monkeypatch.delitem(sys.modules, "segmenter.spacy_component", raising=False)
    with pytest.raises(MissingExtraError) as caught:
        importlib.import_module("segmenter.spacy_component")
    assert str(caught.value) == _message("spacy", "the spaCy component")


# --- [analysis] ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("library", ["matplotlib", "sklearn"])
def test_analyze_without_its_libraries_fails_before_the_work(block, tmp_path, library):
    block(library)
    _fails_in_one_line(
        ["analyze", "--dataset", "golden-rules", "--max-docs", "1", "--out", str(tmp_path / "a")],
        "analysis",
        "segmenter analyze",
    )
    assert not (tmp_path / "a").exists()


def test_analyze_without_the_probe_needs_no_sklearn(block, tmp_path, monkeypatch):
    """--no-probe: scikit-learn is not asked for (the run goes on to the dataset, here refused)."""
    block("sklearn")
    result = CliRunner().invoke(main, ["analyze", "--no-probe", "--dataset", "golden:/nowhere.jsonl",
                                       "--out", str(tmp_path / "a")])  # fmt: skip
    assert result.exit_code == 1 and "dataset file not found" in result.output


def test_analysis_figures_and_layer_probe_without_their_libraries(block):
    from segmenter.analysis import plots
    from segmenter.analysis.probe_layers import GapSet, score_layers

    block("matplotlib")
    with pytest.raises(MissingExtraError, match=r"needs the \[analysis\] extra"):
        plots._pyplot()
    block("sklearn")
    with pytest.raises(MissingExtraError, match=r"needs the \[analysis\] extra"):
        score_layers(GapSet(4), GapSet(4), 2, 1.0)


# --- [train] ------------------------------------------------------------------------------------------


def test_fitting_a_probe_without_sklearn(block):
    from segmenter.probe import fit

    block("sklearn")
    features, labels = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32), np.arange(8) % 2
    for kind in ("logistic", "mlp"):
        with pytest.raises(MissingExtraError) as caught:
            fit(features, labels, kind=kind)
        assert str(caught.value) == _message("train", "training a probe")


def test_train_without_sklearn(block, tmp_path, tiny_conllu, tiny_bert_dir):
    block("sklearn")
    args = ["train", "--data", f"conllu:{tiny_conllu}", "--out", str(tmp_path / "probe")]
    shape = ["--model", str(tiny_bert_dir), "--layers", "1,2", "--window-size", "16"]
    _fails_in_one_line([*args, *shape], "train", "training a probe")
    assert not (tmp_path / "probe").exists()


# --- [bench] ------------------------------------------------------------------------------------------


def test_every_baseline_without_its_library_is_a_skip_naming_the_extra(block):
    from segmenter.bench.systems import (
        DEFAULT_SYSTEMS,
        SYSTEM_LIBRARIES,
        SystemUnavailable,
        libraries,
        load_system,
    )

    assert set(SYSTEM_LIBRARIES) <= set(DEFAULT_SYSTEMS)
    assert libraries("attention:similarity") == () and libraries("attention-fast") == ()
    block(*{module for modules in SYSTEM_LIBRARIES.values() for module in modules})
    for name in SYSTEM_LIBRARIES:
        with pytest.raises(SystemUnavailable, match=r"needs the \[bench\] extra: pip install"):
            load_system(name)


@pytest.mark.parametrize("system", ["pysbd", "spacy-parser", "punkt", "spacy-attention"])
def test_bench_without_a_system_library(block, system):
    from segmenter.bench.systems import libraries

    block(libraries(system)[-1])
    _fails_in_one_line(
        ["bench", "--system", "attention", "--system", system, "--limit-docs", "1", "--same-process"],
        "bench",
        f"segmenter bench (system {system})",
    )


def test_bench_by_default_without_the_extra(block):
    from segmenter.bench.systems import SYSTEM_LIBRARIES

    block(*{module for modules in SYSTEM_LIBRARIES.values() for module in modules})
    result = CliRunner().invoke(main, ["bench"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: segmenter bench (system ") and result.output.count("\n") == 1
    assert result.output.endswith("needs the [bench] extra: pip install 'attention-segmenter[bench]'\n")


def test_bench_figure_without_matplotlib(block, tmp_path):
    from segmenter.bench.report import plot_f1_vs_speed

    block("matplotlib")
    args = ["bench", "--system", "attention", "--limit-docs", "1", "--out", str(tmp_path / "b")]
    _fails_in_one_line(args, "bench", "segmenter bench --out (its F1/speed figure)")
    assert not (tmp_path / "b").exists()
    with pytest.raises(MissingExtraError, match=r"needs the \[bench\] extra"):
        plot_f1_vs_speed([], tmp_path / "f.png")


@pytest.mark.parametrize("library", ["nltk", "sklearn", "matplotlib"])
def test_bench_topics_without_its_libraries(block, tmp_path, library):
    block(library)
    _fails_in_one_line(["bench-topics", "--out", str(tmp_path / "t")], "bench", "segmenter bench-topics")


# --- [ray] --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("library", ["ray", "pyarrow"])
def test_ray_engine_without_its_libraries(block, tmp_path, library):
    text = tmp_path / "in.txt"
    text.write_text("It rained. We stayed in.\n", encoding="utf-8")
    block(library)
    _fails_in_one_line(
        ["segment", "--engine", "ray", str(text), "-o", str(tmp_path / "out")], "ray", "--engine ray"
    )
    assert not (tmp_path / "out").exists()


def test_ray_inputs_without_pyarrow(block, monkeypatch):
    block("pyarrow")
    monkeypatch.delitem(sys.modules, "segmenter.ray_inputs", raising=False)
    with pytest.raises(MissingExtraError, match=r"needs the \[ray\] extra"):
        importlib.import_module("segmenter.ray_inputs")


# --- the core install ---------------------------------------------------------------------------------


def test_segmenting_needs_no_extra(block, tmp_path):
    block("spacy", "srsly", "matplotlib", "sklearn", "ray", "pyarrow", "nltk", "pysbd")
    text = Path(tmp_path / "in.txt")
    text.write_text("It rained. We stayed in.\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["segment", str(text), "--preset", "fast"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["It rained.", "We stayed in."]
