"""The topic benchmark's parts: Pk/WindowDiff by hand, C99 on hand-made cases, the data builders."""

from __future__ import annotations

import numpy as np
import pytest

from segmenter.bench.c99 import c99, divisive_boundaries, rank_matrix
from segmenter.bench.topic_data import read_choi, read_choi_file, ud_concatenations
from segmenter.bench.topic_metrics import boundary_string, scores, window_size
from segmenter.bench.topics import even, texttiling_starts, word_index


def test_pk_and_windowdiff_by_hand():
    # ref "010000", hyp "011000", k = round(6 / 2 / 2) = 2; five windows of two units:
    # Pk: only window [2:4] ("00" vs "10") disagrees on "any boundary" -> 1/5;
    # WindowDiff: windows [1:3] (1 vs 2 boundaries) and [2:4] (0 vs 1) differ -> 2/5
    assert boundary_string([2], 6) == "010000" and window_size([2], 6) == 2
    assert scores([2], [2, 3], 6) == (pytest.approx(0.2), pytest.approx(0.4))
    assert scores([3, 6], [3, 6], 9) == (0.0, 0.0)
    with pytest.raises(ValueError):
        boundary_string([6], 6)


def test_rank_matrix_by_hand_and_against_the_definition():
    similarity = np.array([[1.0, 0.2, 0.5], [0.2, 1.0, 0.3], [0.5, 0.3, 1.0]])
    rank = rank_matrix(similarity, mask=3)
    assert rank[0, 0] == pytest.approx(2 / 3)  # neighbours 0.2, 0.2, 1.0: two lower
    assert rank[1, 1] == pytest.approx(6 / 8)  # eight neighbours, six below 1.0
    assert rank[0, 1] == pytest.approx(0.0)  # 0.2 is the lowest around it
    rng = np.random.default_rng(0)
    matrix = rng.random((9, 9))
    expected = np.zeros_like(matrix)
    for i in range(9):
        for j in range(9):
            block = matrix[max(0, i - 2) : i + 3, max(0, j - 2) : j + 3]
            expected[i, j] = np.count_nonzero(block < matrix[i, j]) / (block.size - 1)
    assert np.allclose(rank_matrix(matrix, mask=5), expected)


def test_divisive_clustering_splits_a_block_matrix():
    rank = np.full((7, 7), 0.1)
    rank[:3, :3] = rank[3:, 3:] = 0.9
    assert divisive_boundaries(rank, n_sections=2) == [3]
    assert divisive_boundaries(rank) == [3]


CATS = [
    "The cat chased a mouse around the kitchen.",
    "Cats sleep most of the day, the cat dozing on a warm kitchen chair.",
    "A hungry cat meows for its mouse-shaped treats.",
    "The old cat purred while the kitten chased the mouse.",
]
ENGINES = [
    "The engine needs fresh oil and a new filter.",
    "A diesel engine burns fuel under high pressure.",
    "Check the engine oil before the fuel tank is filled.",
    "The mechanic replaced the engine filter and the fuel pump.",
]


def test_c99_finds_the_topic_change_of_a_hand_made_text():
    assert c99(CATS + ENGINES, n_sections=2) == [4]
    assert c99(CATS + ENGINES + CATS, n_sections=3) == [4, 8]
    assert c99(["Only one sentence."]) == []


def test_even_and_texttiling_baselines():
    assert even(10, 2) == [5] and even(9, 3) == [3, 6] and even(3, 5) == [1, 2]
    starts, ran = texttiling_starts(["Too short."])
    assert (starts, ran) == ([], False)
    long = (CATS + ENGINES) * 6
    starts, ran = texttiling_starts(long)
    assert ran and all(0 < s < len(long) for s in starts) and starts == sorted(set(starts))


def test_word_index_maps_offsets_to_words():
    to_word, n = word_index("ab  cd e")
    assert n == 3 and [to_word(o) for o in (0, 1, 2, 4, 7)] == [0, 0, 0, 1, 2]


def test_choi_reader(tmp_path):
    folder = tmp_path / "choi2000" / "1" / "3-5"
    folder.mkdir(parents=True)
    (folder / "0.ref").write_text("==========\na .\nb .\n==========\nc .\n==========\n", encoding="utf-8")
    (folder / "10.ref").write_text("==========\nx .\n==========\ny .\n==========\n", encoding="utf-8")
    doc = read_choi_file(folder / "0.ref")
    assert doc.sentences == ("a .", "b .", "c .") and doc.starts == (2,)
    assert [d.id for d in read_choi("3-5", tmp_path)] == ["3-5/0", "3-5/10"]


def test_ud_concatenations_mark_where_each_excerpt_starts(tmp_path):
    ud = tmp_path / "ud" / "t"
    ud.mkdir(parents=True)
    docs = "".join(
        f"# newdoc id = d{d}\n" + "".join(f"# text = Doc {d} sentence {i}.\n" for i in range(12))
        for d in range(12)
    )
    (ud / "t.conllu").write_text(docs, encoding="utf-8")
    samples = ud_concatenations(tmp_path, files=("t/t.conllu",), samples=3, seed=7)
    again = ud_concatenations(tmp_path, files=("t/t.conllu",), samples=3, seed=7)
    assert samples == again
    for sample in samples:
        assert len(sample.starts) == 9
        for offset in sample.starts:
            assert sample.text[offset - 1] == " " and sample.text.startswith("Doc ", offset)
            before = sample.text[:offset].split("Doc ")[-1].split()[0]
            after = sample.text[offset:].split()[1]
            assert before != after  # a new excerpt is another document


def test_results_tables_split_real_documents_from_choi_and_ud():
    from segmenter.bench.topics import markdown

    def cell(pk, sections, seconds=1.0):
        return {"pk": pk, "windowdiff": pk + 0.01, "n_docs": 2, "mean_sections": sections,
                "gold_sections": 4.0, "seconds": seconds, "chars_per_s": 1000.0 / seconds}  # fmt: skip

    tasks = ("choi-3-5", "ud-test", "book-test")
    record = {
        "tasks": dict.fromkeys(tasks, 2),
        "raw_tasks": ["ud-test", "book-test"],
        "results": {name: {t: cell(0.2, 3.0) for t in tasks} for name in ("attention", "none")},
    }
    real, synthetic = markdown(record).split("\n\n")
    assert real.splitlines()[0] == "| system | book-test Pk / WD | sections per document |"
    assert "| attention | 0.200 / 0.210 | 3.0 |" in real and "| (gold) | - | 4.0 |" in real
    assert "choi-3-5 Pk / WD | ud-test Pk / WD" in synthetic and "book-test" not in synthetic
    assert "| attention | 0.200 / 0.210 | 0.200 / 0.210 | 1,000 | 1,000 |" in synthetic
    assert "| none | 0.200 / 0.210 | 0.200 / 0.210 | - | - |" in synthetic  # computes nothing: no speed
