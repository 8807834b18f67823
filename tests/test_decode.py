"""Decoding: probabilities to spans, the span invariants, blank lines, suppression, length cap."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from invariants import assert_invariants

from segmenter.config import DecodeConfig
from segmenter.decode.decoder import blank_line_boundaries, decode


def test_threshold_picks_boundaries():
    text = "One two. Three four."
    spans = decode(text, np.array([4, 9, 15]), np.array([0.1, 0.9, 0.2]), DecodeConfig(threshold=0.5))
    assert [s.text for s in spans] == ["One two.", "Three four."]
    assert spans[1].score == 0.9
    assert spans[0].score == 1.0


def test_blank_line_always_ends_a_segment():
    text = "first part\n \nsecond part"
    spans = decode(text, np.array([6, 13, 20]), np.zeros(3), DecodeConfig(threshold=0.5))
    assert [s.text for s in spans] == ["first part", "second part"]


def test_single_newline_is_not_a_boundary():
    assert blank_line_boundaries("a\nb") == []
    assert blank_line_boundaries("a\r\nb") == []
    assert blank_line_boundaries("a\r\rb") == [3]
    assert blank_line_boundaries("a\n\n") == []  # at the very end nothing follows


def test_no_segment_without_letters_or_digits():
    text = 'He left. " Then'
    spans = decode(text, np.array([9, 11]), np.array([0.8, 0.7]), DecodeConfig(threshold=0.5))
    assert [s.text for s in spans] == ["He left.", '" Then']


def _texts(text, offsets, probs, threshold=0.5):
    return [s.text for s in decode(text, np.array(offsets), np.array(probs), DecodeConfig(threshold))]


def test_a_quote_goes_with_its_sentence():
    # the more probable gap sits inside the quote's cluster; the gap after whitespace wins
    assert _texts('It was "over." Then', [13, 15], [0.9, 0.6]) == ['It was "over."', "Then"]
    assert _texts('It ended. "Then', [10, 11], [0.6, 0.9]) == ["It ended.", '"Then']
    # without whitespace on either side, the more probable gap wins
    assert _texts('a."b', [2, 3], [0.6, 0.9]) == ['a."', "b"]


def test_no_boundary_inside_an_email_address_or_url():
    text = "Her email is Jane.Doe@example.com. I sent her an email."
    cut, next_sentence = text.index("Doe"), text.index("I sent")
    assert _texts(text, [cut, next_sentence], [0.9, 0.9]) == [
        "Her email is Jane.Doe@example.com.",
        "I sent her an email.",
    ]
    text = "See https://example.com/a.Html or www.example.org/x.y then stop."
    cuts = [text.index("Html"), text.index("org"), text.index("y then")]
    assert _texts(text, cuts, [0.9, 0.9, 0.9]) == [text]
    # without an address, a boundary between two characters stays
    assert _texts("It ended.Then more", [9], [0.9]) == ["It ended.", "Then more"]


def test_an_address_after_a_colon_or_comma_stays_in_its_sentence():
    text = "For more details: http://www.example.co.uk/news Then more."
    cuts = [text.index("http"), text.index("Then")]
    assert _texts(text, cuts, [0.9, 0.9]) == ["For more details: http://www.example.co.uk/news", "Then more."]
    text = "Use this link, www.example.org and write to: jo@example.org now."
    assert _texts(text, [text.index("www"), text.index("jo@")], [0.9, 0.9]) == [text]
    # on a line of its own, after a full stop, or a word that is no address: the boundary stays
    assert _texts("Links:\nhttp://example.org", [7], [0.9]) == ["Links:", "http://example.org"]
    assert _texts("The end. http://example.org", [9], [0.9]) == ["The end.", "http://example.org"]
    assert _texts("It goes: Http is a protocol", [9], [0.9]) == ["It goes:", "Http is a protocol"]


def test_max_chars_does_not_cut_inside_an_address():
    text = "Write to jane.doe@example.com today please"
    spans = decode(text, np.array([14, 30]), np.array([0.9, 0.2]), DecodeConfig(threshold=0.5, max_chars=30))
    assert "jane.doe@example.com" in [w for s in spans for w in s.text.split()]


def test_a_run_of_symbols_stands_alone():
    assert _texts("Thanks. ===== Visit us.", [8, 14], [0.7, 0.9]) == ["Thanks.", "=====", "Visit us."]
    assert _texts("===== Visit us.", [6], [0.9]) == ["=====", "Visit us."]
    assert _texts("Bye. --", [5], [0.9]) == ["Bye.", "--"]
    assert _texts("Great! :-) Then", [7, 11], [0.9, 0.8]) == ["Great!", ":-)", "Then"]


def test_quotes_brackets_and_ellipses_never_stand_alone():
    assert _texts("Wait . . . Then", [5, 11], [0.6, 0.9]) == ["Wait . . .", "Then"]
    assert _texts('Done. "( Then', [6, 9], [0.9, 0.8]) == ["Done.", '"( Then']
    assert _texts("Bye. ?!", [5], [0.9]) == ["Bye. ?!"]
    assert _texts("Bye. =", [5], [0.9]) == ["Bye. ="]  # one character is not a run


def test_max_chars_splits_at_most_probable_gap():
    text = "aa bb cc dd ee"
    spans = decode(
        text, np.array([3, 6, 9, 12]), np.array([0.1, 0.4, 0.3, 0.2]), DecodeConfig(0.5, max_chars=8)
    )
    assert all(len(s.text) <= 8 for s in spans)
    assert [s.text for s in spans][0] == "aa bb"


def test_empty_and_whitespace_only():
    assert decode("", np.zeros(0, int), np.zeros(0), DecodeConfig()) == []
    assert decode(" \n\t ", np.zeros(0, int), np.zeros(0), DecodeConfig()) == []


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.characters(codec="utf-8"), max_size=80),
    data=st.data(),
    threshold=st.floats(0, 1),
)
def test_invariants_hold_for_any_offsets_and_probabilities(text, data, threshold):
    offsets = np.array(data.draw(st.lists(st.integers(-2, len(text) + 2), max_size=20)), dtype=np.int64)
    probs = np.array(data.draw(st.lists(st.floats(0, 1), min_size=len(offsets), max_size=len(offsets))))
    max_chars = data.draw(st.none() | st.integers(1, 30))
    spans = decode(text, offsets, probs, DecodeConfig(threshold=threshold, max_chars=max_chars))
    assert_invariants(text, spans)


def test_a_boundary_after_an_opening_quote_or_bracket_moves_before_it():
    # the model's boundary fell between the quote and the word it opens
    assert _texts('He asked. "Why not?"', [10, 11], [0.2, 0.9]) == ["He asked.", '"Why not?"']
    assert _texts("It rained. (Again.)", [11, 12], [0.0, 0.9]) == ["It rained.", "(Again.)"]
    # a quote with whitespace on both sides opens nothing: the boundary stays after it
    assert _texts('He asked. " Why', [10, 12], [0.2, 0.9]) == ['He asked. "', "Why"]


def test_a_boundary_before_a_closing_quote_or_bracket_moves_past_it():
    text = 'She said "stop." Then she left.'
    closing, then = text.index('" Then'), text.index("Then")
    assert _texts(text, [closing, then], [0.9, 0.1]) == ['She said "stop."', "Then she left."]
    text = "It rained (again.)\nWe stayed in."
    expected = ["It rained (again.)", "We stayed in."]
    assert _texts(text, [text.index(")"), text.index("We")], [0.9, 0.0]) == expected
    # a quote that touches the next word is not a closing one: the boundary stays before it
    assert _texts('It ended. "Then', [10, 11], [0.9, 0.1]) == ["It ended.", '"Then']
