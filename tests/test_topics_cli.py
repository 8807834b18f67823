"""`segmenter topics` through click's CliRunner: formats, output file, exit codes."""

from __future__ import annotations

import json

import pytest

from segmenter.cli.main import main

COOKING = (
    "Chop the onions finely and fry them in butter. Add the garlic once the onions turn golden. "
    "Stir in the tomatoes and let the sauce simmer."
)
FOOTBALL = (
    "The striker scored twice in the second half. The goalkeeper saved a penalty in the final minute. "
    "Fans celebrated the league title in the stadium."
)
TEXT = COOKING + " " + FOOTBALL + "\n"


@pytest.fixture
def sample(tmp_path):
    path = tmp_path / "sample.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def test_lines_put_a_blank_line_between_sections(runner, sample, tmp_path):
    other = tmp_path / "other.txt"
    other.write_text(FOOTBALL, encoding="utf-8")
    result = runner.invoke(main, ["topics", "--n-topics", "2", str(sample), str(other)])
    assert result.exit_code == 0, result.output
    blocks = result.stdout.split("\n\n")
    assert blocks[0].splitlines() == [
        "Chop the onions finely and fry them in butter.",
        "Add the garlic once the onions turn golden.",
        "Stir in the tomatoes and let the sauce simmer.",
    ]
    assert " ".join(blocks[1].splitlines()) == FOOTBALL
    assert len(blocks) == 4  # the second file: its own two sections after a blank line
    assert not result.stdout.startswith("\n") and result.stdout.endswith(".\n")


def test_jsonl_offsets_and_output_file(runner, sample, tmp_path):
    out = tmp_path / "topics.jsonl"
    result = runner.invoke(
        main, ["topics", "--format", "jsonl", "--n-topics", "2", "-o", str(out), str(sample)]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["index"] for r in records] == [0, 1]
    for record in records:
        assert set(record) == {"file", "index", "start", "end", "text"} and record["file"] == str(sample)
        assert TEXT[record["start"] : record["end"]] == record["text"]
    assert [r["text"] for r in records] == [COOKING, FOOTBALL]


def test_stdin_and_options(runner):
    result = runner.invoke(main, ["topics", "--max-sentences", "2", "--format", "jsonl"], input=TEXT)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(records) >= 3  # six sentences, at most two a section
    empty = runner.invoke(main, ["topics", "-"], input="   \n")
    assert empty.exit_code == 0 and empty.stdout == ""


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["topics", "missing.txt"], 1, "missing.txt"),
        (["topics", "--n-topics", "0", "-"], 2, "--n-topics"),
        (["topics", "--sensitivity", "0", "-"], 2, "--sensitivity"),
        (["topics", "--sensitivity", "nan", "-"], 2, "--sensitivity"),
        (["topics", "--format", "xml", "-"], 2, "--format"),
        (["topics", "-o", " ", "-"], 2, "empty"),
        (["topics", "--model", "/nonexistent/model", "-"], 1, "model"),
    ],
)
def test_exit_codes(runner, args, code, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, args, input="A cat. A dog.")
    assert result.exit_code == code, result.output
    assert message in result.output
    if code == 1:
        assert len(result.output.strip().splitlines()) == 1


def test_binary_file_fails_before_the_model_loads(runner, tmp_path):
    path = tmp_path / "bin.dat"
    path.write_bytes(b"\x00\x01\x02 binary")
    result = runner.invoke(main, ["topics", "--model", "/nonexistent/model", str(path)])
    assert result.exit_code == 1 and "bin.dat" in result.output
