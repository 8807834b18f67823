"""Every line break `str.splitlines` knows counts for blank lines, and the whitespace that BERT's
normaliser would delete (NEL, form feed, vertical tab, U+001C-U+001F) separates words like a space, so
a boundary lands where the break is; the caller's text and every offset stay exact."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from invariants import assert_invariants

from segmenter.api import Segmenter
from segmenter.cli.main import one_line
from segmenter.decode.decoder import blank_line_boundaries
from segmenter.text.breaks import LINE_BREAKS, TOKENIZER_DELETED_SPACE, count_line_breaks

FIRST = "we went to the shop and bought some bread"
SECOND = "then we walked home slowly in the rain"
BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


def test_line_breaks_are_exactly_those_of_splitlines():
    splitting = {c for c in map(chr, range(0x110000)) if len(f"a{c}b".splitlines()) == 2}
    assert set(LINE_BREAKS) == splitting
    assert set(BREAKS) - {"\r\n"} == splitting


@pytest.mark.parametrize("brk", BREAKS, ids=[repr(b) for b in BREAKS])
def test_two_line_breaks_of_any_kind_make_a_blank_line(brk):
    text = f"{FIRST}{brk}{brk}{SECOND}"
    assert blank_line_boundaries(text) == [len(FIRST) + 2 * len(brk)]
    assert blank_line_boundaries(f"{FIRST}{brk} {SECOND}") == []  # one break is no blank line
    assert count_line_breaks(brk * 2) == 2


def test_crlf_is_one_break_and_mixed_breaks_add_up():
    assert blank_line_boundaries("a\r\nb") == []
    assert blank_line_boundaries("a\r\n\x85b") == [4]
    assert blank_line_boundaries("a \u2028 \x0c b") == [6]


def test_one_line_folds_every_break():
    assert one_line("a\x85\x85b\u2028c \x1c d\r\ne") == "a b c d e"


@pytest.fixture(scope="module")
def real():
    return Segmenter()


@pytest.mark.parametrize("brk", BREAKS, ids=[repr(b) for b in BREAKS])
def test_blank_line_of_any_break_ends_a_segment_at_the_break(real, brk):
    """Regression: two NEL (or form feeds, vertical tabs, U+001C-U+001E) in a row were no blank line,
    and the tokenizer deleted them, gluing "bread" and "then": the boundary landed one word late."""
    text = f"{FIRST}{brk}{brk}{SECOND}"
    spans = real.segment(text)
    assert [s.text for s in spans] == [FIRST, SECOND]
    assert spans[1].start == len(FIRST) + 2 * len(brk)
    assert_invariants(text, spans)


def test_the_issue_example(real):
    text = "we went to the shop and bought some bread\x85\x85then we walked home slowly in the rain"
    assert real.split(text) == [FIRST, SECOND]


def test_deleted_whitespace_separates_words_with_exact_offsets(real):
    text = "one\x0btwo\x0cthree\x1ffour\x85five six"
    tokens = real.tokenize(text)
    words = [
        text[a:b] for (a, b), start in zip(tokens.offsets.tolist(), tokens.word_start, strict=True) if start
    ]
    assert words == ["one", "two", "three", "four", "five", "six"]
    for char in TOKENIZER_DELETED_SPACE:
        assert real.encoder.tokenize(f"ab{char}cd").word_start.tolist().count(True) == 2, repr(char)


@settings(max_examples=30, deadline=None)
@given(
    words=st.lists(st.sampled_from(["It", "rained.", "we", "left", "ok", "Yes!"]), min_size=1, max_size=12),
    seps=st.lists(
        st.sampled_from([" ", *BREAKS, " \x85 ", "\x0c\x0c", "\u2028\n"]), min_size=12, max_size=12
    ),
)
def test_invariants_and_streaming_with_exotic_breaks(tiny_segmenter_exotic, words, seps):
    text = "".join(w + s for w, s in zip(words, seps, strict=False))
    whole = tiny_segmenter_exotic.segment(text)
    assert_invariants(text, whole)
    rng = random.Random(len(text))
    cuts = sorted(rng.randint(0, len(text)) for _ in range(3))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    assert list(tiny_segmenter_exotic.segment_stream(chunks)) == whole
    # every blank line is a boundary: no span holds two line breaks in a row
    for span in whole:
        assert not blank_line_boundaries(span.text), (span.text, text)


@pytest.fixture(scope="module")
def tiny_segmenter_exotic(tiny_bert_dir, tiny_probe_dir):
    return Segmenter(model=str(tiny_bert_dir), probe=str(tiny_probe_dir))
