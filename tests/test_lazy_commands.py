"""The optional commands: listed by `segmenter --help` without importing heavy libraries, loaded from
their module (or the `segmenter.commands` entry points) only when run, and a one-line error when one
cannot be loaded."""

from __future__ import annotations

import subprocess
import sys
import types
from importlib.metadata import EntryPoint, entry_points

import click
import pytest
from click.testing import CliRunner

from segmenter.cli.lazy import ENTRY_POINT_GROUP, LazyCommand, optional_commands
from segmenter.cli.main import main
from segmenter.errors import InputError

HEAVY = ("torch", "transformers", "spacy", "matplotlib", "sklearn", "ray", "pyarrow", "nltk", "pysbd")


REFUSAL = "the thing needs the [thing] extra: pip install 'attention-segmenter[thing]'"


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_the_harness_commands_are_entry_points_of_the_installed_distribution():
    found = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    assert found["bench"] == "segmenter.bench.cli:bench"
    assert found["bench-topics"] == "segmenter.bench.topics:bench_topics"
    assert found["bench-chunks"] == "segmenter.bench.chunks:bench_chunks"


def test_help_lists_every_command_and_imports_no_heavy_library():
    listed = CliRunner().invoke(main, ["--help"])
    assert listed.exit_code == 0, listed.output
    for command in (
        "segment",
        "train",
        "topics",
        "models",
        "bench",
        "bench-chunks",
        "bench-topics",
        "analyze",
    ):
        assert f"  {command} " in listed.output
    loaded = _run(
        "import sys\nfrom segmenter.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    assert loaded.splitlines()[-1] == "[]"


def test_a_command_loads_only_its_own_module():
    loaded = _run(
        "import sys\nfrom segmenter.cli.main import main\n"
        "try:\n    main(['segment', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('segmenter.bench', 'segmenter.analysis',"
        " 'segmenter.cli.topics', 'segmenter.cli.models'))))"
    )
    assert loaded.splitlines()[-1] == "[]"


def test_a_lazy_command_runs_the_real_one_with_its_options(monkeypatch):
    @click.command("hello")
    @click.option("--name", default="world", help="who to greet")
    def hello(name):
        """Say hello."""
        click.echo(f"hello {name}")

    monkeypatch.setitem(sys.modules, "fake_commands", types.SimpleNamespace(hello=hello))
    group = click.Group("g", commands=[LazyCommand(EntryPoint("hello", "fake_commands:hello", "g"))])
    assert "Say hello." in CliRunner().invoke(group, ["--help"]).output
    assert CliRunner().invoke(group, ["hello", "--name", "you"]).output == "hello you\n"
    assert "who to greet" in CliRunner().invoke(group, ["hello", "--help"]).output
    assert CliRunner().invoke(group, ["hello", "--bad"]).exit_code == 2  # the real command's usage error


class _RefusingModule(types.ModuleType):
    """A command module whose command refuses to load, as one needing a missing extra does."""

    def __getattr__(self, name):
        raise InputError(REFUSAL)


def test_a_command_that_refuses_to_load_is_listed_and_fails_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "refusing_commands", _RefusingModule("refusing_commands"))
    group = click.Group("g", commands=[LazyCommand(EntryPoint("refusing", "refusing_commands:command", "g"))])
    listed = CliRunner().invoke(group, ["--help"])
    assert listed.exit_code == 0 and "refusing  (unavailable: the thing needs" in listed.output
    ran = CliRunner().invoke(group, ["refusing"])
    assert ran.exit_code == 1
    assert ran.output == f"Error: {REFUSAL}\n"


def test_an_unimportable_command_is_a_one_line_error():
    group = click.Group("g", commands=[LazyCommand(EntryPoint("broken", "no_such_module_anywhere:cmd", "g"))])
    ran = CliRunner().invoke(group, ["broken"])
    assert ran.exit_code == 1
    assert ran.output.startswith("Error: cannot load the broken command (no_such_module_anywhere:cmd): ")
    assert ran.output.count("\n") == 1


@pytest.mark.parametrize("taken", [(), ("bench",)])
def test_the_group_own_commands_and_each_name_once(taken):
    names = [command.name for command in optional_commands(taken=taken)]
    assert len(names) == len(set(names))
    assert {"analyze", "topics", "models", "bench-topics"} <= set(names)
    assert ("bench" in names) == ("bench" not in taken)
