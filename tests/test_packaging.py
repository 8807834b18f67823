"""A wheel built from the project carries the shipped probes (the top-level `models/`, as
`segmenter.models`) and the benchmark harness (as `segmenter.bench`, with its gold data), and the
default segmenter works from it.

The editable install the README uses reads `models/` from the checkout; a user who installs
a wheel has only what the wheel holds.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from segmenter.gold.specs import load_dataset
from segmenter.probe.shipped import models_dir

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Built from a copy of the sources, so the build leaves nothing in the checkout."""
    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for name in ("segmenter", "benchmarks", "models"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    subprocess.run([*pip, str(source), "-w", str(out)], check=True, capture_output=True, cwd=out)
    (built,) = out.glob("*.whl")
    return built


@pytest.mark.slow
def test_wheel_holds_every_shipped_probe_file(wheel):
    shipped = sorted(
        path.relative_to(models_dir()).as_posix()
        for path in models_dir().rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    )
    assert any(name.endswith("accurate/probe.npz") for name in shipped)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert {f"segmenter/models/{name}" for name in shipped} <= names
        for name in shipped:
            assert archive.read(f"segmenter/models/{name}") == (ROOT / "models" / name).read_bytes()
        assert any(name.startswith("segmenter/bench/data/golden_rules/") for name in names)
        assert any(name.startswith("segmenter/bench/data/ud_english_ewt/") for name in names)
        assert "segmenter/bench/cli.py" in names
        assert not any(name.startswith("benchmarks/") for name in names)  # no generic top-level package
        assert not any(name.startswith("models/") for name in names)


@pytest.mark.slow
def test_the_wheel_holds_no_large_file_but_weights_and_benchmark_data(wheel):
    """Selection history and notes stay out of the wheel: every file over 100 KB is a probe's arrays
    or the harness's gold data."""
    with zipfile.ZipFile(wheel) as archive:
        large = [i.filename for i in archive.infolist() if i.file_size > 100_000]
    assert any(name.endswith(".npz") for name in large)  # the probes' arrays are large: the check can fail
    allowed = [n for n in large if n.endswith(".npz") or n.startswith("segmenter/bench/data/")]
    assert large == allowed, f"files over 100 KB that are neither weights nor benchmark data: {large}"


@pytest.mark.slow
def test_default_segmenter_runs_from_the_installed_wheel(wheel, tmp_path):
    target = tmp_path / "site"
    install = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--no-index",
        "--target",
        str(target),
        str(wheel),
    ]
    subprocess.run(install, check=True, capture_output=True)
    script = (
        "import segmenter; from segmenter import Segmenter; "
        "print(segmenter.__file__); print([s.text for s in Segmenter().segment('It rained. We stayed in.')])"
    )
    env = {"PYTHONPATH": str(target), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, env=env, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    where, spans = result.stdout.splitlines()[-2:]
    assert where.startswith(str(target))
    assert spans == "['It rained.', 'We stayed in.']"


@pytest.mark.slow
def test_harness_commands_and_gold_data_come_from_the_installed_wheel(wheel, tmp_path):
    """The harness installs as segmenter.bench with its data, `load_dataset` reads the built-in copies
    from there, and the wheel's entry points list bench and bench-topics for `segmenter --help`."""
    target = tmp_path / "site"
    install = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--target", str(target)]
    subprocess.run([*install, str(wheel)], check=True, capture_output=True)
    script = (
        "import segmenter.bench.cli, segmenter.gold.specs as gold\n"
        "from importlib.metadata import entry_points\n"
        "print(segmenter.bench.cli.__file__); print(gold.DATA_DIR)\n"
        "print(sorted(f'{ep.name}={ep.value}' for ep in entry_points(group='segmenter.commands')))\n"
        "print(*(len(gold.load_dataset(name).documents) for name in ('ewt-test', 'golden-rules')))\n"
        "from segmenter.cli.main import main\n"
        "main(['--help'])\n"
    )
    env = {"PYTHONPATH": str(target), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, env=env, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]
    harness, data, commands, sizes, *help_text = result.stdout.splitlines()
    assert harness == str(target / "segmenter" / "bench" / "cli.py")
    assert data == str(target / "segmenter" / "bench" / "data")
    entry_points = [
        "bench-chunks=segmenter.bench.chunks:bench_chunks",
        "bench-topics=segmenter.bench.topics:bench_topics",
        "bench=segmenter.bench.cli:bench",
    ]
    assert commands == str(entry_points)
    expected = [len(load_dataset(name).documents) for name in ("ewt-test", "golden-rules")]  # the checkout's
    assert sizes == " ".join(map(str, expected))
    for command in ("bench", "bench-chunks", "bench-topics", "analyze", "topics", "models"):
        assert any(line.startswith(f"  {command} ") for line in help_text)
