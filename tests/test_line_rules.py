"""Bulleted lines and rule lines open segments whatever the model says (`segmenter.decode.line_rules`)."""

from __future__ import annotations

import re

import numpy as np
from invariants import assert_invariants

from segmenter.config import DecodeConfig
from segmenter.decode.decoder import decode
from segmenter.decode.line_rules import opens_segment, stands_alone


def _segments(text: str, boundary_before: tuple[str, ...] = ()) -> list[str]:
    """Spans when the model proposes a boundary only before each string in `boundary_before`."""
    offsets = np.array([m.start() for m in re.finditer(r"\S+", text)][1:], dtype=np.int64)
    starts = {text.index(s) for s in boundary_before}
    probs = np.array([0.9 if o in starts else 0.1 for o in offsets])
    spans = decode(text, offsets, probs, DecodeConfig(threshold=0.5))
    assert_invariants(text, spans)
    return [s.text for s in spans]


def test_each_bulleted_line_of_a_list_opens_a_segment():
    text = "Shopping list:\n- milk\n- eggs\n- bread\nI will buy them after work."
    expected = ["Shopping list:", "- milk", "- eggs", "- bread", "I will buy them after work."]
    assert _segments(text, ("I will",)) == expected
    assert _segments("Notes\n* one\n* two", ()) == ["Notes", "* one", "* two"]


def test_a_lone_dash_at_a_line_start_is_not_a_bullet():
    # a hard wrap can put a dash at a line's start; without a second item it is not a list
    text = "He came back\n- as we expected - and left."
    assert _segments(text) == [text]
    text = "Items:\n- milk\n* eggs"  # different bullets: no list
    assert _segments(text) == [text]


def test_a_rule_line_is_a_segment_of_its_own():
    text = "Best,\nTom\n--\nTom Becker, Ph.D.\nSenior Analyst"
    assert _segments(text, ("Tom\n",)) == ["Best,", "Tom", "--", "Tom Becker, Ph.D.", "Senior Analyst"]


def test_each_line_of_a_signature_is_a_segment_up_to_a_blank_line():
    text = (
        "Tom\n-- \nTom Becker\nSenior Analyst, Acme Corp.\njo@acme.example | +1 (555) 010-2000\n\n"
        "Sent from\nmy phone"
    )
    assert _segments(text) == [
        "Tom", "--", "Tom Becker", "Senior Analyst, Acme Corp.", "jo@acme.example | +1 (555) 010-2000",
        "Sent from\nmy phone",
    ]  # fmt: skip


def test_labelled_lines_open_segments_when_another_line_has_a_label_of_their_kind():
    text = "A: so we shipped it\nB: yeah great\n[09:15] <jo> hi\n[09:16] <mira> hello there"
    assert _segments(text) == [
        "A: so we shipped it",
        "B: yeah great",
        "[09:15] <jo> hi",
        "[09:16] <mira> hello there",
    ]
    text = "The value we want\nNote: this wraps"  # one label in prose: left to the model
    assert _segments(text) == [text]
    text = "Chapter one ends.\n=====\nChapter two"
    assert _segments(text) == ["Chapter one ends.", "=====", "Chapter two"]


def test_symbols_inside_a_line_are_not_a_rule_line():
    text = "See above -- it works\nand so on"
    assert _segments(text) == [text]
    text = "It ended...\n...and began"  # a lone ellipsis never stands alone
    assert _segments(text) == [text]


def test_opens_segment_reads_only_what_it_is_given():
    # the previous line is known only when it starts inside `before` or `before` starts the text
    assert opens_segment("- eggs\n", "- bread", True)
    assert not opens_segment("- eggs\n", "- bread", False)
    assert opens_segment("x\n- eggs\n", "- bread", False)
    assert not opens_segment("text ", "- bread\n- milk", False)  # not at a line's start
    assert stands_alone("-- ") and not stands_alone("...")


def test_each_line_of_a_short_list_after_a_colon_opens_a_segment():
    text = "Shopping list:\neggs\nmilk\nbread\nWe also need coffee."
    expected = ["Shopping list:", "eggs", "milk", "bread", "We also need coffee."]
    assert _segments(text) == expected  # the model proposed no boundary at all
    items = [f"item number {n}" for n in range(1, 21)]  # twenty items: the last ones still see the heading
    assert _segments("To do:\n" + "\n".join(items) + "\nThat is all.") == ["To do:", *items, "That is all."]


def test_what_is_not_a_list_after_a_colon_is_left_to_the_model():
    # one item is no list
    text = "Shopping list:\neggs\nWe also need coffee."
    assert _segments(text) == [text]
    # lines of a hard-wrapped paragraph: few words, but long (file names)
    text = (
        "(See attached file: HeatingOilStocks.pdf)(See attached file:\n"
        "PADDIIstocksCL.pdf)(See attached file: PADDIstocksHO.pdf)(See attached\n"
        "file: PADDIstocksHU.pdf)(See attached file: API.pdf) -\n"
        "UnleadedStocks.pdf - CrudeStocks.pdf"
    )
    assert _segments(text) == [text]
    # short lines that end sentences are sentences, not items; the model decides about them
    assert _segments("Note:\nIt rained.\nWe stayed.") == ["Note:\nIt rained.\nWe stayed."]
    # no heading line ending with a colon
    assert _segments("Shopping list\neggs\nmilk") == ["Shopping list\neggs\nmilk"]


def test_an_attribution_line_is_one_segment_and_the_line_after_it_opens_one():
    text = "On Mon, 3 Jun 2024 at 09:12, Sarah Lee <sarah@example.org> wrote:\nCan you send it? Thanks"
    # the model cuts after the address's ">" and proposes nothing at the line break
    assert _segments(text, ("wrote:", "Thanks")) == [text[: text.index("\n")], "Can you send it?", "Thanks"]


def test_a_boundary_after_the_markers_of_a_quoted_line_moves_to_the_first_marker():
    text = "Bob wrote:\n> > Just to clarify the question.\n> > Yes it is."
    assert _segments(text, ("Just", "Yes")) == [
        "Bob wrote:",
        "> > Just to clarify the question.",
        "> > Yes it is.",
    ]
