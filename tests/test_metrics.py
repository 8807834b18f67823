"""Boundary metrics with hand-computed expected values (segmenter.bench.metrics)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from segmenter.bench.metrics import (
    Counts,
    align,
    boundaries_of,
    exact_match,
    normalize,
    score,
    sentences_at,
    unmarked_counts,
)
from segmenter.gold.corpus import is_marked

TEXT = "Hi there. Bye now."  # gold boundary: "Bye" starts at 10


def test_exact_offset_is_a_hit():
    assert score(TEXT, gold=[10], predicted=[10]) == Counts(tp=1, fp=0, fn=0)


@pytest.mark.parametrize("off", [8, 11, 12])
def test_boundary_off_by_one_character_is_a_miss(off):
    counts = score(TEXT, gold=[10], predicted=[off])
    assert counts == Counts(tp=0, fp=1, fn=1)
    assert (counts.precision, counts.recall, counts.f1) == (0.0, 0.0, 0.0)


def test_cut_before_the_space_is_the_same_boundary():
    # offset 9 is the space after "there."; whitespace between sentences does not matter
    assert score(TEXT, gold=[10], predicted=[9]) == Counts(tp=1, fp=0, fn=0)


def test_empty_prediction_has_zero_precision_recall_f1():
    counts = score(TEXT, gold=[10], predicted=[])
    assert counts == Counts(tp=0, fp=0, fn=1)
    assert (counts.precision, counts.recall, counts.f1) == (0.0, 0.0, 0.0)


def test_no_gold_and_no_prediction_counts_nothing():
    assert score("Just one sentence.", gold=[], predicted=[]) == Counts()


def test_whitespace_at_segment_edges():
    text = "A.  B.\nC."  # sentences start at 4 ("B") and 7 ("C")
    assert normalize(text, [2, 3, 6]) == (4, 7)  # cut after "A." / inside the spaces / before "\n"
    assert score(text, gold=[4, 7], predicted=[2, 6]) == Counts(tp=2)


def test_edges_of_the_text_are_not_boundaries():
    text = "  A. B.  "
    # 0, 1, 2 all move to 2, the first character; 8 and 9 move to the end
    assert normalize(text, [0, 1, 2, 8, 9]) == ()
    assert score(text, gold=[5], predicted=[0, 9]) == Counts(tp=0, fp=0, fn=1)


def test_duplicate_predictions_count_once():
    assert score(TEXT, gold=[10], predicted=[9, 10, 10]) == Counts(tp=1, fp=0, fn=0)


def test_offset_outside_the_text_is_an_error():
    with pytest.raises(ValueError, match="outside"):
        normalize(TEXT, [len(TEXT) + 1])


def test_micro_average_over_documents():
    doc1 = score("A. B. C. D.", gold=[3, 6, 9], predicted=[3, 6, 9])  # perfect
    doc2 = score("E. F.", gold=[3], predicted=[1])  # one miss, one false alarm
    total = doc1 + doc2
    assert total == Counts(tp=3, fp=1, fn=1)
    # micro: P = R = 3/4, F1 = 0.75 (a macro average of the per-document F1s would be 0.5)
    assert total.precision == pytest.approx(0.75)
    assert total.recall == pytest.approx(0.75)
    assert total.f1 == pytest.approx(0.75)


def test_precision_and_recall_differ():
    counts = score("A. B. C. D. E.", gold=[3], predicted=[3, 6, 9, 12])
    assert counts == Counts(tp=1, fp=3, fn=0)
    assert counts.precision == pytest.approx(0.25)
    assert counts.recall == pytest.approx(1.0)
    assert counts.f1 == pytest.approx(0.4)  # 2 * 0.25 * 1 / 1.25


@pytest.mark.parametrize(
    ("before", "marked"),
    [("It rained.", True), ('"Why?"', True), ("Wait\u2026", True), ("(Done!)", True), ("Thanks John", False),
     ("See below:", False), ("e.g", False), ("3.5", False), ("", False)],
)  # fmt: skip
def test_a_boundary_is_marked_only_by_sentence_final_punctuation(before, marked):
    text = before + "  Next one"
    assert is_marked(text, len(before) + 2) is marked


def test_unmarked_counts_score_only_unmarked_gold_and_ignore_false_alarms():
    text = "Thanks John See you. Bye now then"
    gold = [12, 21]  # "See" (unmarked), "Bye" (marked)
    assert unmarked_counts(text, gold, predicted=[21, 25]) == Counts(tp=0, fp=0, fn=1)
    assert unmarked_counts(text, gold, predicted=[11]) == Counts(tp=1, fp=0, fn=0)  # cut before the space
    assert unmarked_counts(text, [21], predicted=[]) == Counts()  # a marked miss is no unmarked miss


def test_align_ignores_whitespace_differences():
    text = "Hello  World.\nMy name"
    assert align(text, ["Hello World.", "My name"]) == [(0, 13), (14, 21)]
    assert align(text, ["Hello World.\n", "  My   name "]) == [(0, 13), (14, 21)]


def test_align_repeated_sentences_in_order():
    assert align("Yes. Yes. Yes.", ["Yes.", "Yes.", "Yes."]) == [(0, 4), (5, 9), (10, 14)]


def test_align_keeps_the_boundary_when_a_splitter_changed_characters():
    text = "Hello World. My name"
    # "!" is not in the text: the sentence is assumed to cover its 11 non-space characters
    assert boundaries_of(text, ["Hello World!", "My name"]) == [13]
    with pytest.raises(ValueError, match="not found"):
        align(text, ["Hello World!", "My name"], strict=True)


def test_align_skips_empty_sentences():
    assert boundaries_of("A. B.", ["A.", "", "  ", "B."]) == [3]


def test_sentences_at_strips_and_collapses():
    assert sentences_at("One.  Two\nthree. ", [4]) == ["One.", "Two three."]
    assert sentences_at("One.", []) == ["One."]


def test_exact_match():
    text = "Items:\n1. One\n2. Two"
    assert exact_match(text, [7, 14], ["Items:", "1. One", "2. Two"])
    assert exact_match(text, [6, 13], ["Items:", "1. One", "2. Two"])  # cuts before the newlines
    assert not exact_match(text, [7], ["Items:", "1. One", "2. Two"])
    assert not exact_match(text, [7, 10, 14], ["Items:", "1. One", "2. Two"])
    assert exact_match("Only one.", [], ["Only one."])


SENTENCE = st.text(alphabet="ab. ", min_size=1, max_size=8)
GAP = st.sampled_from([" ", "  ", "\n", " \n\t"])


@given(st.lists(st.tuples(SENTENCE, GAP), min_size=1, max_size=6))
def test_align_recovers_starts_whatever_the_whitespace(parts):
    parts = [(s.strip(), gap) for s, gap in parts if s.strip()]
    text, starts = "", []
    for sentence, gap in parts:
        starts.append(len(text))
        text += sentence + gap
    sentences = [sentence.replace(" ", "\n") + " " for sentence, _ in parts]  # a splitter that alters spaces
    assert [start for start, _ in align(text, sentences)] == starts
    assert score(text, gold=starts[1:], predicted=boundaries_of(text, sentences)).fn == 0
