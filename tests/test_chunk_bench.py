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


def test_partition_keeps_each_chunk_in_budget_and_cuts_between_topics():
    from segmenter.bench.chunks import partitioned

    pieces = [(i * 10, i * 10 + 9) for i in range(8)]
    vectors = np.repeat(np.eye(2), [3, 5], axis=0)  # pieces 0-2 one topic, 3-7 another
    # a budget of 6 one-token pieces: the topic change at piece 3 is the cut, both chunks fit
    assert partitioned(pieces, [1] * 8, vectors, 6, 1.0) == [(0, 29), (30, 79)]
    # a budget of 4: the second topic must be cut once more, and no chunk is over 4
    chunks = partitioned(pieces, [1] * 8, vectors, 4, 1.0)
    assert chunks[0] == (0, 29) and all((end - start + 1) // 10 <= 4 for start, end in chunks)
    assert partitioned(pieces[:2], [9, 1], vectors[:2], 4, 1.0) == [(0, 9), (10, 19)]  # over budget alone


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
