"""List markers: what counts as one, and the decoder moving a boundary from after a marker to before it."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from invariants import assert_invariants

from segmenter.config import DecodeConfig
from segmenter.decode.decoder import Decoder, blank_line_boundaries, decode
from segmenter.decode.lists import LOOKAHEAD, REACH, marker_at, next_item_follows


@pytest.mark.parametrize(
    ("text", "value", "length"),
    [
        ("1. The", 1, 3),
        ("12) The", 12, 4),
        ("3.) The", 3, 4),
        ("(4) The", 4, 4),
        ("b. The", 2, 3),
        ("(C) The", 3, 4),
        ("• 9. The", 9, 5),
        ("⁃10.\tThe", 10, 5),
    ],
)
def test_marker_forms(text, value, length):
    marker = marker_at(text, 0)
    assert marker is not None
    assert (marker.value, marker.length) == (value, length)
    assert text[marker.length :] == "The"


@pytest.mark.parametrize(
    "text",
    ["2010. The", "1.5 The", "ab. The", "1.The", "1. ", "(1. The", "e.g. The", "1 The"],
)
def test_not_markers(text):
    assert marker_at(text, 0) is None


def test_marker_needs_whitespace_before_it():
    assert marker_at("item 2. The", 5) is not None
    assert marker_at("item2. The", 4) is None


def test_next_item_must_continue_the_same_style():
    text = "1. One 2) Two (2) Three a. Four"
    assert not next_item_follows(text, 0, marker_at(text, 0))
    text = "1. One and 2. Two"
    assert next_item_follows(text, 0, marker_at(text, 0))
    far = "1. One" + " x" * (LOOKAHEAD // 2) + " 2. Two"
    assert not next_item_follows(far, 0, marker_at(far, 0))


def _word_starts(text: str) -> np.ndarray:
    return np.array([m.start() for m in re.finditer(r"\S+", text)][1:], dtype=np.int64)


def _decode(text: str, boundary_after: list[str], threshold: float = 0.5) -> list[str]:
    """Spans when the model proposes a boundary right after each string in `boundary_after`."""
    offsets = _word_starts(text)
    ends = {text.index(s) + len(s) + 1 for s in boundary_after}
    probs = np.array([0.9 if o in ends else 0.1 for o in offsets])
    spans = decode(text, offsets, probs, DecodeConfig(threshold=threshold))
    assert_invariants(text, spans)
    return [s.text for s in spans]


def test_boundary_after_a_marker_moves_to_its_start():
    text = "1.) The first item 2.) The second item"
    assert _decode(text, ["1.)", "2.)"]) == ["1.) The first item", "2.) The second item"]
    text = "a. The first item. b. The second item. c. The third"
    assert _decode(text, ["b.", "c."]) == ["a. The first item.", "b. The second item.", "c. The third"]


def test_marker_outside_an_enumeration_keeps_its_boundary():
    text = "He scored 10. Then he left."
    assert _decode(text, ["10."]) == ["He scored 10.", "Then he left."]
    text = "Points: 3. Then 5. Then more."  # 3 and 5 are not consecutive labels
    assert _decode(text, ["3.", "5."]) == ["Points: 3.", "Then 5.", "Then more."]


def test_plain_markers_count_only_where_the_enumeration_opens_a_line_or_follows_a_colon():
    text = "Read chapter 1. It explains the idea. Then read chapter 2. It covers the rest."
    expected = ["Read chapter 1.", "It explains the idea.", "Then read chapter 2.", "It covers the rest."]
    assert _decode(text, ["1.", "idea.", "2."]) == expected
    text = "Agenda\n1. Welcome\n2. Budget"
    assert _decode(text, ["1.", "2."]) == ["Agenda", "1. Welcome", "2. Budget"]
    text = "Bring: 1. The tent 2. The stove"
    assert _decode(text, ["1.", "2."]) == ["Bring:", "1. The tent", "2. The stove"]
    text = "Bring 1) The tent 2) The stove"  # a bracket marks a list anywhere
    assert _decode(text, ["1)", "2)"]) == ["Bring", "1) The tent", "2) The stove"]


def test_a_marker_without_a_boundary_after_it_changes_nothing():
    text = "Bring 1. The tent 2. The stove"
    assert _decode(text, []) == [text]
    assert _decode(text, ["tent"]) == ["Bring 1. The tent", "2. The stove"]


def test_in_an_anchored_enumeration_every_later_item_opens_a_segment():
    # the model proposes nothing, yet each item after the first starts a segment
    text = "1.) The first item 2.) The second item"
    assert _decode(text, []) == ["1.) The first item", "2.) The second item"]
    text = "a. The first item b. The second item c. The third list item"
    assert _decode(text, []) == ["a. The first item", "b. The second item", "c. The third list item"]
    text = "Bring: 1. the tent 2. the stove"  # after a colon; the first item stays with the colon
    assert _decode(text, []) == ["Bring: 1. the tent", "2. the stove"]
    text = "Agenda\n1. Welcome\n2. Budget"
    assert _decode(text, []) == ["Agenda", "1. Welcome", "2. Budget"]  # a markdown list: its lead-in apart


def test_an_enumeration_inside_a_sentence_is_not_cut():
    text = "You need to 1) mix it and 2) bake it."
    assert _decode(text, []) == [text]
    text = "Read chapter 1. It explains the idea. Then read chapter 2. It covers the rest."
    assert _decode(text, ["idea."]) == [
        "Read chapter 1. It explains the idea.",
        "Then read chapter 2. It covers the rest.",
    ]


def test_the_last_item_is_known_from_the_one_before():
    text = "Steps: 1. Open it. 2. Close it."
    assert _decode(text, ["Open it.", "2."]) == ["Steps: 1. Open it.", "2. Close it."]


def _stream(text: str, offsets: np.ndarray, probs: np.ndarray, cuts: list[int], config: DecodeConfig):
    """Decode `text` fed in pieces cut at `cuts`, each piece's candidates given with it."""
    decoder, spans, start = Decoder(config), [], 0
    blank_lines = blank_line_boundaries(text)
    for cut in [*sorted(set(cuts)), len(text)]:
        if cut <= start:
            continue
        decoder.add_text(text[start:cut], [o for o in blank_lines if start <= o < cut])
        inside = (offsets >= start) & (offsets < cut)
        decoder.add_candidates(offsets[inside], probs[inside])
        spans += decoder.advance(cut)
        start = cut
    return spans + list(decoder.finish())


_ITEM = st.sampled_from(
    [
        "1.",
        "2.",
        "3.",
        "(1)",
        "(2)",
        "a)",
        "b)",
        "• 4.",
        "• 5.",
        "x",
        "it.",
        "The",
        "10.",
        "go:",
        "\n",
        "\n2.",
        "Jane.Doe@example.com.",
        "http://a.b/c.d",
        "www.e.f.",
        "\n-",
        "\n--",
        "\n* x",
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    words=st.lists(_ITEM, min_size=1, max_size=60),
    fill=st.integers(0, REACH + 40),
    data=st.data(),
)
def test_streamed_decoding_equals_whole_text_decoding(words, fill, data):
    text = " ".join(words[: len(words) // 2]) + " " + "y " * fill + " ".join(words[len(words) // 2 :])
    offsets = _word_starts(text)
    probs = np.array(data.draw(st.lists(st.floats(0, 1), min_size=len(offsets), max_size=len(offsets))))
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=8))
    config = DecodeConfig(threshold=0.5)
    whole = decode(text, offsets, probs, config)
    assert _stream(text, offsets, probs, cuts, config) == whole
    assert_invariants(text, whole)


def test_an_empty_item_keeps_the_chain_and_the_next_items_boundary():
    text = "Steps:\n1.\n2. Open it.\n3. Close it."
    assert _decode(text, ["1.", "2.", "3."]) == ["Steps:\n1.", "2. Open it.", "3. Close it."]
    assert _decode(text, ["Steps:", "1.", "2.", "3."]) == ["Steps:", "1.", "2. Open it.", "3. Close it."]


def test_a_bullet_character_inside_a_word_does_not_hide_the_next_marker():
    text = "Bring: 1. the tent* 2. the stove"
    assert _decode(text, ["1.", "2."]) == ["Bring:", "1. the tent*", "2. the stove"]


def test_max_chars_does_not_bring_back_a_moved_boundary():
    text = "Steps:\n1. open the box and take out all the parts\n2. close the box again after you are done"
    offsets = _word_starts(text)
    ends = {text.index("1.") + 3, text.index("2.") + 3}
    probs = np.array([0.9 if o in ends else 0.1 for o in offsets])
    spans = [s.text for s in decode(text, offsets, probs, DecodeConfig(threshold=0.5, max_chars=30))]
    assert spans[0] == "Steps:" and spans[1].startswith("1. ") and "2." not in spans
    assert all(len(s) <= 30 for s in spans)


def test_streamed_decoding_looks_for_markers_in_each_stretch_of_text_once(monkeypatch):
    """No boundary for a long stretch: each advance scans only the text it adds (linear, not quadratic)."""
    import segmenter.decode.lists as lists_module

    scanned = []
    real = lists_module.marker_starts

    def spy(text, start, stop):
        scanned.append((start, stop))
        return real(text, start, stop)

    monkeypatch.setattr(lists_module, "marker_starts", spy)
    text = "word " * 2000
    offsets, probs = _word_starts(text), np.zeros(len(_word_starts(text)))
    spans = _stream(text, offsets, probs, list(range(0, len(text), 500)), DecodeConfig(threshold=0.5))
    assert [s.text for s in spans] == [text.strip()]
    covered = sum(stop - start for start, stop in scanned if stop > start)
    assert covered <= len(text)
