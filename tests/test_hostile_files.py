"""Hostile probe and pipeline files: nesting deep enough to exhaust the parser's recursion, files far
larger than any real one, arrays that unpack to more than their file holds. Each is refused with one
line (exit 1 from the CLI, a `SegmenterError` from the API), never a traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import srsly
from click.testing import CliRunner

import segmenter.probe.probe as probe_module
from segmenter.cli.main import main
from segmenter.errors import ConfigError, ProbeError
from segmenter.probe.bounded import MAX_ARRAY_BYTES, MAX_DEPTH, MAX_JSON_BYTES, parse_json, parse_msgpack
from segmenter.probe.probe import Probe

ROOT = Path(__file__).resolve().parents[1]
SHIPPED_PROBE = ROOT / "models" / "all-MiniLM-L6-v2" / "accurate"
DEEP = 100_000


@pytest.fixture
def sample(tmp_path) -> Path:
    path = tmp_path / "ok.txt"
    path.write_text("It rained. We stayed in.", encoding="utf-8")
    return path


def probe_folder(tmp_path: Path, meta: bytes | None = None) -> Path:
    folder = tmp_path / "p"
    shutil.copytree(SHIPPED_PROBE, folder)
    if meta is not None:
        (folder / "meta.json").write_bytes(meta)
    return folder


HOSTILE_META = {
    "open brackets": b"[" * DEEP,
    "balanced brackets": b"[" * DEEP + b"]" * DEEP,
    "nested objects": b'{"a":' * DEEP + b"1" + b"}" * DEEP,
    "one level too deep": b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1),
    "larger than the limit": b'{"pad": "' + b" " * MAX_JSON_BYTES + b'"}',
}


@pytest.mark.parametrize("meta", list(HOSTILE_META.values()), ids=list(HOSTILE_META))
def test_hostile_meta_json_is_one_line_and_exit_1(tmp_path, sample, meta):
    """Regression: 100,000 nested brackets gave a 44-line traceback ending in RecursionError."""
    folder = probe_folder(tmp_path, meta)
    result = CliRunner().invoke(main, ["segment", "--probe", str(folder), str(sample)])
    assert result.exit_code == 1, (result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert str(folder / "meta.json") in lines[0]
    assert "deeper than" in lines[0] or "larger than" in lines[0]


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = '{"note": "' + "[{" * DEEP + '\\" ]]"}'
    assert parse_json(text) == {"note": "[{" * DEEP + '" ]]'}
    assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None


def test_probe_arrays_file_larger_than_the_limit(tmp_path):
    folder = probe_folder(tmp_path)
    with open(folder / "probe.npz", "r+b") as stream:  # sparse: no disk space used
        stream.truncate(MAX_ARRAY_BYTES + 1)
    with pytest.raises(ProbeError, match=r"probe\.npz is corrupted \(larger than"):
        Probe.load(folder)


def test_probe_arrays_that_unpack_to_more_than_the_limit(tmp_path, monkeypatch):
    """A compressed member may hold far more than its file; the members' unpacked sizes are checked
    before any is read (here against a lowered limit: 3 MB of zeros packed into a few kilobytes)."""
    folder = probe_folder(tmp_path)
    np.savez_compressed(folder / "probe.npz", mean=np.zeros(750_000, dtype=np.float32))
    assert (folder / "probe.npz").stat().st_size < 1 << 20
    monkeypatch.setattr(probe_module, "MAX_ARRAY_BYTES", 1 << 20)
    monkeypatch.setattr(np.lib.npyio.NpzFile, "__getitem__", lambda *_: pytest.fail("an array was read"))
    with pytest.raises(ProbeError, match="unpack to more than 1 MiB"):
        Probe.load(folder)


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_parse_msgpack_refuses_deep_large_and_garbled_data():
    with pytest.raises(ValueError, match="not valid msgpack"):
        parse_msgpack(b"\x91" * DEEP + b"\x90")  # msgpack's own stack limit
    with pytest.raises(ValueError, match="deeper than"):
        parse_msgpack(srsly.msgpack_dumps(nested(MAX_DEPTH + 1)))
    with pytest.raises(ValueError, match="larger than"):
        parse_msgpack(b"\x90" * 11, limit=10)
    with pytest.raises(ValueError, match="not valid msgpack"):
        parse_msgpack(b"\xc1")
    assert parse_msgpack(srsly.msgpack_dumps(nested(MAX_DEPTH))) == nested(MAX_DEPTH)


# -- the spaCy component's saved files --------------------------------------------------------------


@pytest.fixture
def saved_component(tmp_path) -> Path:
    """A component saved with the unsupervised strategy (no encoder needed to save or load it)."""
    from segmenter.integrations.spacy import AttentionSegmenter

    folder = tmp_path / "component"
    AttentionSegmenter(strategy="similarity").to_disk(folder)
    return folder


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("cfg", b"[" * DEEP),
        ("cfg", b"[" * DEEP + b"]" * DEEP),
        ("cfg", b"[1, 2]"),
        ("cfg", b" " * (MAX_JSON_BYTES + 1)),
        ("probe", b"\x91" * DEEP + b"\x90"),
        ("probe", b"\xc1"),
    ],
    ids=[
        "cfg open brackets",
        "cfg balanced brackets",
        "cfg not an object",
        "cfg too large",
        "probe deep",
        "probe garbled",
    ],
)
def test_hostile_saved_component_files_are_one_config_error(saved_component, name, data):
    from segmenter.integrations.spacy import AttentionSegmenter

    (saved_component / name).write_bytes(data)
    with pytest.raises(ConfigError, match=f"{name}.* corrupted") as caught:
        AttentionSegmenter().from_disk(saved_component)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "data",
    [b"\x91" * DEEP + b"\x90", b"\xc1", srsly.msgpack_dumps([1, 2]), srsly.msgpack_dumps({"cfg": 3})],
    ids=["deep", "garbled", "not a dict", "cfg not a dict"],
)
def test_hostile_component_bytes_are_one_config_error(data):
    from segmenter.integrations.spacy import AttentionSegmenter

    with pytest.raises(ConfigError, match="corrupted"):
        AttentionSegmenter().from_bytes(data)
