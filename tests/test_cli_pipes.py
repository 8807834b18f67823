"""Inputs that give their data only once, named as file paths: a pipe's /dev/fd/N (what a process
substitution passes), a FIFO given by name, /dev/stdin. The CLI checks every input before it loads the
model; for these it must read once and keep what it read, in the batched path and in the streamed one.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from types import SimpleNamespace
from unittest import mock

import pytest
from children import run_shell
from click.testing import CliRunner

from segmenter.api import Segmenter
from segmenter.cli import main as cli
from segmenter.cli.main import main

TEXT = "The bus was late again. Nobody seemed surprised.\n\nA new paragraph starts here. It ends."
LONG_TEXT = "".join(f"Line {i % 10}.\n" for i in range(3000))  # the 3,000-line input


@pytest.fixture(scope="module")
def tiny(tiny_bert_dir):
    return Segmenter(model=str(tiny_bert_dir), strategy="similarity")


def spans_of(stdout: str) -> list[tuple[int, int, str]]:
    return [(r["start"], r["end"], r["text"]) for r in map(json.loads, stdout.splitlines())]


def expected(segmenter: Segmenter, text: str) -> list[tuple[int, int, str]]:
    return [(s.start, s.end, s.text) for s in segmenter.segment(text)]


def run_cli(segmenter: Segmenter, *args: str):
    with mock.patch.object(cli, "_build", lambda *_: segmenter):
        return CliRunner().invoke(main, ["segment", "--format", "jsonl", *args])


def feed_pipe(data: bytes) -> tuple[int, threading.Thread]:
    """The read end of a pipe that a thread fills with `data` and then closes."""
    read_end, write_end = os.pipe()

    def write() -> None:
        with os.fdopen(write_end, "wb") as stream:
            stream.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return read_end, writer


@pytest.mark.parametrize(
    ("text", "piece_bytes"),
    [(TEXT, 1 << 20), (LONG_TEXT, 1 << 20), (TEXT, 16)],
    ids=["short", "3000 lines", "streamed in pieces"],
)
def test_pipe_given_as_a_path_is_read_once_and_segmented_whole(tiny, monkeypatch, text, piece_bytes):
    """Regression: the check before loading the model read the first MiB and the run opened the pipe
    again, so the text was lost (empty output, exit 0)."""
    monkeypatch.setattr(cli, "SMALL_FILE_CHARS", piece_bytes)
    read_end, writer = feed_pipe(text.encode("utf-8"))
    try:
        result = run_cli(tiny, f"/dev/fd/{read_end}")
    finally:
        os.close(read_end)
    writer.join(timeout=60)
    assert result.exit_code == 0, result.output
    assert spans_of(result.stdout) == expected(tiny, text)


def test_pipe_among_regular_files_keeps_the_order(tiny, tmp_path):
    first, last = tmp_path / "first.txt", tmp_path / "last.txt"
    first.write_text("It rained. We stayed in.", encoding="utf-8")
    last.write_text("The end. Really.", encoding="utf-8")
    read_end, writer = feed_pipe(TEXT.encode("utf-8"))
    try:
        result = run_cli(tiny, str(first), f"/dev/fd/{read_end}", str(last))
    finally:
        os.close(read_end)
    writer.join(timeout=60)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert list(dict.fromkeys(r["file"] for r in records)) == [str(first), f"/dev/fd/{read_end}", str(last)]
    piped = [(r["start"], r["end"], r["text"]) for r in records if r["file"] == f"/dev/fd/{read_end}"]
    assert piped == expected(tiny, TEXT)


def test_binary_data_from_a_pipe_is_refused_before_the_model_loads(tiny):
    read_end, writer = feed_pipe(b"abc\x00def")
    with mock.patch.object(cli, "_build", side_effect=AssertionError("the model must not load")):
        try:
            result = CliRunner().invoke(main, ["segment", f"/dev/fd/{read_end}"])
        finally:
            os.close(read_end)
    writer.join(timeout=60)
    assert result.exit_code == 1
    assert "binary" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_fifo_by_name_and_dev_stdin_in_one_run(tiny, tiny_bert_dir, tmp_path):
    """Regression: a FIFO given by name hung (the second open waited for a writer that was gone), and
    /dev/stdin gave empty output. A real shell runs a real child here."""
    (tmp_path / "a.txt").write_text(TEXT, encoding="utf-8")
    (tmp_path / "b.txt").write_text(LONG_TEXT[:2000], encoding="utf-8")
    segment = f"{sys.executable} -m segmenter.cli.main segment --model {tiny_bert_dir} --strategy similarity"
    script = f"mkfifo fifo; (cat a.txt > fifo &); cat b.txt | {segment} --format jsonl fifo /dev/stdin"
    done = run_shell(script, tmp_path)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    by_file = SimpleNamespace(
        fifo=[(r["start"], r["end"], r["text"]) for r in records if r["file"] == "fifo"],
        stdin=[(r["start"], r["end"], r["text"]) for r in records if r["file"] == "/dev/stdin"],
    )
    assert by_file.fifo == expected(tiny, TEXT)
    assert by_file.stdin == expected(tiny, LONG_TEXT[:2000])
