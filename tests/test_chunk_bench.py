"""The chunking benchmark's parts: the metric by hand, the data reader on a small folder."""

from __future__ import annotations

import json

import numpy as np
import pytest

from segmenter.bench.chunk_data import read_chunking
from segmenter.bench.chunk_metrics import length, merged, precision_omega, retrieval_scores, touching


def test_union_of_ranges():
    assert merged([(5, 9), (0, 3), (2, 4), (9, 10), (7, 7)]) == [(0, 4), (5, 10)]
    assert length([(0, 10), (5, 15), (20, 21)]) == 16


def test_scores_by_hand():
    excerpts = [(10, 20), (30, 40)]  # 20 excerpt characters
    # retrieved: (0, 15) covers 5 of the first excerpt, (12, 35) covers 8 + 5, one chunk of another corpus
    retrieved = [(True, (0, 15)), (True, (12, 35)), (False, (10, 20))]
    scores = retrieval_scores(excerpts, retrieved)
    found = 10 + 5  # union of the overlaps: 10-20 and 30-35
    assert scores.recall == pytest.approx(found / 20)
    assert scores.precision == pytest.approx(found / (15 + 23 + 10))  # every retrieved chunk's length
    assert scores.iou == pytest.approx(found / (15 + 23 + 10 + 5))  # 35-40 uncovered
    assert retrieval_scores(excerpts, [(False, (10, 20))]).recall == 0.0


def test_precision_omega_reads_every_chunk_touching_an_excerpt():
    chunks = [(0, 10), (10, 25), (25, 50), (50, 60)]
    excerpts = [(12, 30)]
    assert touching(excerpts, chunks) == [(10, 25), (25, 50)]
    assert precision_omega(excerpts, chunks) == pytest.approx(18 / 40)
    assert precision_omega(excerpts, [(0, 5)]) == 0.0  # nothing touches: no characters found


def _folder(tmp_path, references, corpus="a"):
    (tmp_path / "corpora").mkdir(parents=True)
    (tmp_path / "corpora" / "a.md").write_text("Hello world. Bye now.", encoding="utf-8")
    row = '"Q?","{}",{}\n'.format(json.dumps(references).replace('"', '""'), corpus)
    (tmp_path / "questions.csv").write_text("question,references,corpus_id\n" + row, encoding="utf-8")
    return tmp_path


def test_reader_checks_every_reference(tmp_path):
    good = [{"content": "Bye now.", "start_index": 13, "end_index": 21}]
    data = read_chunking(_folder(tmp_path / "good", good))
    assert data.corpora == {"a": "Hello world. Bye now."}
    assert data.questions[0].references == ((13, 21),) and data.questions[0].corpus == "a"
    bad = [{"content": "Bye now.", "start_index": 12, "end_index": 20}]
    with pytest.raises(ValueError, match="row 2: reference 12-20"):
        read_chunking(_folder(tmp_path / "bad", bad))
    with pytest.raises(ValueError, match="unknown corpus 'b'"):
        read_chunking(_folder(tmp_path / "other", good, corpus="b"))


def test_fixed_windows_cover_the_tokens_with_their_overlap():
    from segmenter.bench.chunks import fixed_windows

    offsets = np.array([(0, 2), (3, 5), (6, 8), (9, 11), (12, 14)])  # five tokens
    assert fixed_windows(offsets, 2, 0) == [(0, 5), (6, 11), (12, 14)]
    assert fixed_windows(offsets, 3, 1) == [(0, 8), (6, 14)]  # the last window reaches the end: stop
    assert fixed_windows(offsets, 9, 0) == [(0, 14)]


def test_packing_closes_a_chunk_before_the_piece_that_would_overflow():
    from segmenter.bench.chunks import packed

    pieces = [(0, 4), (5, 9), (10, 30), (31, 35)]
    assert packed(pieces, [2, 2, 9, 1], 5) == [(0, 9), (10, 30), (31, 35)]  # 9 alone is over budget
    assert packed(pieces, [1, 1, 1, 1], 10) == [(0, 35)]
    assert packed([], [], 5) == []


def test_bench_chunks_refuses_bad_input_in_one_line(tmp_path):
    from click.testing import CliRunner

    from segmenter.bench.chunks import bench_chunks

    missing = CliRunner().invoke(bench_chunks, ["--data", str(tmp_path), "--out", str(tmp_path / "o")])
    assert missing.exit_code == 1 and "no questions.csv" in missing.output
    folder = _folder(tmp_path / "data", [{"content": "Bye now.", "start_index": 13, "end_index": 21}])
    args = ["--data", str(folder), "--out", str(tmp_path / "o"), "--max-tokens", "20", "--overlap", "20"]
    overlap = CliRunner().invoke(bench_chunks, args)
    assert overlap.exit_code == 1 and "--overlap must be smaller" in overlap.output
    assert not (tmp_path / "o").exists()


# --- chunkers: fixed windows in cl100k, the library's Chunker, the other libraries' baselines -------------

MARKDOWN = """# Chunking for retrieval

Retrieval systems cut their documents into chunks before they embed them. A chunk that is too long is \
truncated by the embedder; one that is too short loses its context. Which length is best depends on the \
questions asked.

## Fixed windows

The simplest chunker cuts every *n* tokens, wherever that falls: in the middle of a word, a sentence or \
a table. It is fast and predictable! Nobody reads its chunks, though.

- one item of a list
- another item, with a [link](https://example.com/path?x=1&y=2)
- a third one, with a dash (like this) and the words café, naïve and Zürich

## Sentences

Does a sentence-aware chunker do better? It keeps sentences whole. Dr. Smith said so in 2024, at 3.5 p.m. \
on a Tuesday, and the room agreed.

> A quote that spans
> two lines of the text.

| column | value |
|--------|-------|
| a      | 1     |
| b      | 2     |

The weather report came next. Rain is expected over the hills tomorrow, with sun in the afternoon. The \
wind turns north by the evening and the nights grow cold.
"""
NON_ASCII = "日本語のテキスト 🎉🎉 emoji 𝔘𝔫𝔦𝔠𝔬𝔡𝔢, e\u0301te\u0301, Ωμέγα. "


class FakeVectors:
    """Unit vectors from a hash of each text: the semantic chunkers run without a model."""

    dimension = 16

    def __call__(self, texts):
        import hashlib

        seeds = [int.from_bytes(hashlib.sha256(t.encode()).digest()[:4], "little") for t in texts]
        out = np.array([np.random.default_rng(s).normal(size=16) for s in seeds], dtype=np.float32)
        out = out.reshape(len(texts), 16)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture
def no_network(monkeypatch):
    import socket

    def refuse(*args, **kwargs):
        raise AssertionError("a network call")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture(scope="module")
def counting():
    from segmenter.bench.chunk_baselines import cl100k

    return cl100k()


@pytest.fixture(scope="module")
def segmenter():
    from segmenter.api import Segmenter

    return Segmenter()


def _pairs(ranges):
    return zip(ranges, ranges[1:], strict=False)


def _covers_every_word(text, ranges):
    covered = np.zeros(len(text), dtype=bool)
    for start, end in ranges:
        covered[start:end] = True
    return all(covered[i] for i, char in enumerate(text) if not char.isspace())


def test_fixed_windows_lose_tokens_until_their_text_fits():
    from segmenter.bench.chunks import fixed_windows

    offsets = np.array([(0, 2), (3, 5), (6, 8), (9, 11), (12, 14)])
    fits = lambda start, end: end - start <= 5  # noqa: E731
    assert fixed_windows(offsets, 3, 0, fits) == [(0, 5), (6, 11), (12, 14)]
    assert fixed_windows(offsets, 3, 1, fits) == [(0, 5), (3, 8), (6, 11), (9, 14)]


def test_cl100k_token_offsets_are_exact_on_non_ascii_text(counting):
    text = NON_ASCII * 3 + MARKDOWN
    tokens = counting.encode(text)
    offsets = counting.offsets(text)  # (T, 2)
    assert len(offsets) == len(tokens) and offsets[0, 0] == 0 and offsets[-1, 1] == len(text)
    assert (offsets[1:, 0] == offsets[:-1, 1]).all() and (offsets[:, 1] >= offsets[:, 0]).all()
    byte_starts = np.cumsum([0] + [len(counting.encoding.decode_single_token_bytes(t)) for t in tokens])[:-1]
    for (start, _), byte_start in zip(
        offsets, byte_starts, strict=True
    ):  # the character holding its first byte
        assert len(text[:start].encode()) <= byte_start < len(text[: start + 1].encode())
    whole = [i for i, t in enumerate(tokens) if counting.encoding.decode_single_token_bytes(t).isascii()]
    assert all(counting.encoding.decode([tokens[i]]) == text[slice(*offsets[i])] for i in whole)


def test_fixed_windows_in_cl100k_cover_the_text_and_fit(counting):
    from segmenter.bench.chunks import make_chunker

    text = MARKDOWN + NON_ASCII * 4
    windows = make_chunker("fixed", 16, 0, counting)(text)
    assert "".join(text[a:b] for a, b in windows) == text  # in order, no gap, no overlap
    assert all(counting.count(text[a:b]) <= 16 for a, b in windows)
    overlapping = make_chunker("fixed", 16, 4, counting)(text)
    assert all(counting.count(text[a:b]) <= 16 for a, b in overlapping)
    assert overlapping[0][0] == 0 and overlapping[-1][1] == len(text) and len(overlapping) > len(windows)
    assert all(b[0] < a[1] and a[0] < b[0] for a, b in _pairs(overlapping))  # each overlaps the last


def test_locate_maps_chunks_back_and_reports_the_ones_it_cannot():
    from segmenter.bench.chunk_baselines import Mapped, locate

    text = "alpha beta.\n\ngamma  delta. alpha beta."
    found = locate(text, ["alpha beta.", " gamma delta.\n", "nowhere", "alpha beta.", ""])
    assert found.ranges == [(0, 11), (13, 26), (27, 38)]  # the repeat found after the chunk before it
    assert found.inexact == 1 and found.unlocated == ["nowhere"]
    assert locate("a b a b a", ["a b a", "a b a"], overlapping=True).ranges == [(0, 5), (4, 9)]
    # an overlapping chunk reaches past the one before it: "." is not the first full stop after "a."
    assert locate("a. b. c.", ["a. b", "."], overlapping=True).ranges == [(0, 4), (4, 5)]
    cut = locate("x 日本 y", ["x 日\ufffd", "\ufffd本 y"])  # a token window that cut a character
    assert cut.ranges == [(0, 3), (3, 6)] and cut.inexact == 2
    mapped = Mapped(lambda text: ["alpha", "zzz"], overlapping=False)
    assert mapped("alpha") == [(0, 5)]
    assert mapped.chunks == 2 and mapped.unlocated == ["zzz"] and mapped.inexact == 0


ALWAYS_IN_BUDGET = {
    "langchain-recursive",
    "langchain-token",
    "llamaindex-sentence",
    "semchunk",
    "semantic-text-splitter",
}


BASELINE_NAMES = (
    "langchain-recursive", "langchain-token", "llamaindex-sentence", "llamaindex-semantic",
    "chonkie-sentence", "chonkie-semantic", "semchunk", "semantic-text-splitter",
)  # fmt: skip


def test_every_baseline_is_tested():
    from segmenter.bench.chunk_baselines import BASELINES

    assert set(BASELINES) == set(BASELINE_NAMES)


@pytest.mark.parametrize("name", BASELINE_NAMES)
def test_each_baseline_gives_exact_slices_in_order(name, counting, no_network):
    """Every baseline of the [bench] extra runs offline, and each chunk it returns is a slice of the text."""
    from segmenter.bench.chunk_baselines import BASELINES, baseline, locate

    for overlap in (0, 8) if BASELINES[name].overlap else (0,):
        chunker = baseline(name, 32, overlap, counting, FakeVectors())
        chunks = [chunk for chunk in chunker.split(MARKDOWN) if chunk.strip()]
        assert len(chunks) >= 2
        located = locate(MARKDOWN, chunks, overlapping=overlap > 0)
        assert located.unlocated == [] and located.inexact == 0
        assert [MARKDOWN[a:b] for a, b in located.ranges] == chunks
        starts = [a for a, _ in located.ranges]
        assert starts == sorted(set(starts))
        if not overlap:
            assert all(b[0] >= a[1] for a, b in _pairs(located.ranges))
        assert _covers_every_word(MARKDOWN, located.ranges)
        if name in ALWAYS_IN_BUDGET:
            assert max(counting.count(chunk) for chunk in chunks) <= 32
        assert chunker(MARKDOWN) == located.ranges and chunker.unlocated == [] and chunker.inexact == 0


@pytest.mark.parametrize("name", ["ours", "ours-no-topics", "sentences"])
def test_our_chunkers_through_the_library(name, counting, segmenter):
    from segmenter.bench.chunks import make_chunker

    ranges = make_chunker(name, 40, 0, counting, segmenter, FakeVectors())(MARKDOWN)
    assert len(ranges) > 2 and ranges == sorted(ranges)
    assert all(b[0] >= a[1] for a, b in _pairs(ranges))
    assert _covers_every_word(MARKDOWN, ranges)
    if name != "sentences":  # the packer leaves a sentence over the budget whole
        assert max(counting.count(MARKDOWN[a:b]) for a, b in ranges) <= 40
    if name == "ours":
        overlapped = make_chunker(name, 40, 10, counting, segmenter, FakeVectors())(MARKDOWN)
        assert any(b[0] < a[1] for a, b in _pairs(overlapped))


def test_a_missing_library_is_a_one_line_error_naming_it(tmp_path, monkeypatch):
    from click.testing import CliRunner

    import segmenter.bench.chunk_baselines as baselines
    from segmenter.bench.chunks import bench_chunks, default_chunkers

    installed = baselines._installed
    monkeypatch.setattr(baselines, "_installed", lambda module: module != "chonkie" and installed(module))
    folder = _folder(tmp_path / "data", [{"content": "Bye now.", "start_index": 13, "end_index": 21}])
    args = ["--data", str(folder), "--out", str(tmp_path / "o"), "--chunker", "chonkie-sentence"]
    missing = CliRunner().invoke(bench_chunks, args)
    assert missing.exit_code == 1 and missing.output.count("\n") == 1
    assert "chonkie-sentence needs the chonkie package: pip install chonkie" in missing.output
    chosen, left_out = default_chunkers("cl100k")
    assert "chonkie-sentence" not in chosen and "chonkie-semantic (not installed)" in left_out
    assert "ours" in chosen and "langchain-token" in chosen
    assert "langchain-token" not in default_chunkers("wordpieces")[0]
    args = [
        "--data",
        str(folder),
        "--out",
        str(tmp_path / "o"),
        "--chunker",
        "langchain-token",
        "--tokens",
        "wordpieces",
    ]
    wordpieces = CliRunner().invoke(bench_chunks, args)
    assert wordpieces.exit_code == 1 and "use --tokens cl100k" in wordpieces.output
    assert not (tmp_path / "o").exists()


def test_bench_chunks_end_to_end_on_a_tiny_folder(tmp_path):
    """One corpus, two questions: results.json keeps the command and every setting, results.md the
    columns, and the figure is drawn."""
    from click.testing import CliRunner

    from segmenter.bench.chunks import bench_chunks, markdown

    (tmp_path / "data" / "corpora").mkdir(parents=True)
    (tmp_path / "data" / "corpora" / "notes.md").write_text(MARKDOWN, encoding="utf-8")
    rows = []
    questions = {
        "What does a fixed chunker cut?": "cuts every *n* tokens",
        "Will it rain?": "Rain is expected",
    }
    for question, excerpt in questions.items():
        start = MARKDOWN.index(excerpt)
        reference = [{"content": excerpt, "start_index": start, "end_index": start + len(excerpt)}]
        rows.append('"{}","{}",notes\n'.format(question, json.dumps(reference).replace('"', '""')))
    (tmp_path / "data" / "questions.csv").write_text(
        "question,references,corpus_id\n" + "".join(rows), encoding="utf-8"
    )
    out = tmp_path / "out"
    args = ["--data", str(tmp_path / "data"), "--out", str(out), "--max-tokens", "32", "--max-tokens", "64"]
    args += ["--overlap", "8", "--chunker", "fixed", "--chunker", "ours", "--chunker", "langchain-recursive"]
    ran = CliRunner().invoke(bench_chunks, args, catch_exceptions=False)
    assert ran.exit_code == 0, ran.output
    record = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert "--tokens cl100k --max-tokens 32 --max-tokens 64 --overlap 8 --chunker fixed" in record["command"]
    assert record["settings"]["tokens"] == "cl100k" and record["settings"]["max_tokens"] == [32, 64]
    assert record["environment"]["libraries"]["langchain-text-splitters"]
    labels = [r["chunker"] for r in record["results"]]
    assert labels == [
        f"{name} {size}/8" for name in ("fixed", "ours", "langchain-recursive") for size in (32, 64)
    ]
    for r in record["results"]:
        assert r["truncated"] == 0 and r["chunks_per_s"] > 0 and r["mean_tokens"] <= r["max_tokens"]
    assert record["results"][-1]["located"]["unlocated"] == 0
    table = (out / "results.md").read_text(encoding="utf-8")
    assert "| truncated |" in table and "| chunks/s |" in table and "cl100k tokens" in table
    assert (out / "recall_iou.png").stat().st_size > 10_000
    record["results"][-1]["located"].update(unlocated=2, inexact=1)
    assert "langchain-recursive 64/8: of " in markdown(record) and "2 not found" in markdown(record)
