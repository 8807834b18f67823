"""`segmenter chunk` through click's CliRunner: formats, output file, streaming, exit codes (a tiny
random model, so that chunks fall anywhere)."""

from __future__ import annotations

import json

import pytest

from segmenter.api import Segmenter
from segmenter.chunking.chunker import Chunker
from segmenter.cli.main import main

TEXT = (
    "Chop the onions finely and fry them in butter. Add the garlic once the onions turn golden.\n\n"
    "The striker scored twice in the second half. The goalkeeper saved a penalty in the final minute. "
    "Fans celebrated the league title in the stadium.\n"
) * 3


@pytest.fixture
def tiny_options(tiny_bert_dir, tiny_probe_dir):
    return ["--model", str(tiny_bert_dir), "--probe", str(tiny_probe_dir), "--no-topics", "--no-progress"]


def test_jsonl_gives_the_chunkers_chunks_with_exact_offsets(runner, tiny_options, tmp_path, tiny_bert_dir,
                                                             tiny_probe_dir):  # fmt: skip
    source, out = tmp_path / "recipe.txt", tmp_path / "chunks.jsonl"
    source.write_text(TEXT, encoding="utf-8")
    result = runner.invoke(
        main, ["chunk", *tiny_options, "--max-tokens", "24", "--format", "jsonl", "-o", str(out), str(source)]
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    expected = Chunker(Segmenter(model=str(tiny_bert_dir), probe=str(tiny_probe_dir)), max_tokens=24,
                       topics=False).chunk(TEXT)  # fmt: skip
    assert [(r["start"], r["end"], r["tokens"]) for r in records] == [
        (c.start, c.end, c.tokens) for c in expected
    ]
    for index, record in enumerate(records):
        assert record["index"] == index and record["file"] == str(source) and record["tokens"] <= 24
        assert TEXT[record["start"] : record["end"]] == record["text"]


def test_lines_put_each_chunk_on_one_line_and_stdin_works(runner, tiny_options):
    result = runner.invoke(main, ["chunk", *tiny_options, "--max-tokens", "30", "-"], input=TEXT)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) > 1 and " ".join(lines).split() == TEXT.split()


def test_a_file_read_in_pieces_gives_the_same_chunks(runner, tiny_options, tmp_path, monkeypatch):
    source = tmp_path / "long.txt"
    source.write_text(TEXT * 20, encoding="utf-8")
    whole = runner.invoke(main, ["chunk", *tiny_options, "--format", "jsonl", str(source)])
    import segmenter.cli.chunk as chunk_cli
    from segmenter.io import checked_input

    reads = []

    def small_reads(name, encoding, errors):  # the file comes in many reads of 333 bytes
        return (reads.append(piece) or piece for piece in checked_input(name, encoding, errors, 333))

    monkeypatch.setattr(chunk_cli, "checked_input", small_reads)
    pieces = runner.invoke(main, ["chunk", *tiny_options, "--format", "jsonl", str(source)])
    assert whole.exit_code == pieces.exit_code == 0
    assert len(reads) > 10 and whole.stdout == pieces.stdout and len(whole.stdout.splitlines()) > 3


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["chunk", "missing.txt"], 1, "missing.txt"),
        (["chunk", "--max-tokens", "0", "-"], 2, "--max-tokens"),
        (["chunk", "--max-tokens", "10", "--overlap", "10", "-"], 2, "overlap must be below"),
        (["chunk", "--tokenizer", "no_such_encoding", "-"], 1, "no_such_encoding"),
        (["chunk", "--format", "xml", "-"], 2, "--format"),
    ],
)
def test_exit_codes(runner, args, code, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(main, args, input="A cat. A dog.")
    assert result.exit_code == code, result.output
    assert message in result.output
    if code == 1:
        assert len(result.output.strip().splitlines()) == 1


def test_a_failed_run_leaves_the_output_file_alone(runner, tmp_path):
    out = tmp_path / "kept.jsonl"
    out.write_text("earlier results\n", encoding="utf-8")
    result = runner.invoke(main, ["chunk", "-o", str(out), str(tmp_path / "missing.txt")])
    assert result.exit_code == 1 and out.read_text(encoding="utf-8") == "earlier results\n"
