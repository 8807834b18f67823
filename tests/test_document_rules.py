"""Decoding rules for real documents, with chosen probabilities (no model): quote-marker lines in
e-mail, reference lists, markdown emphasis, inline HTML tags, fillers in speech, chat headers from
exports and addressees without a colon. Each rule also holds when the text is streamed in pieces."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from invariants import assert_invariants

from segmenter.config import DecodeConfig
from segmenter.decode.decoder import Decoder, blank_line_boundaries, decode
from segmenter.decode.references import inside_entry, opens_entry
from segmenter.decode.units import inside_unit
from segmenter.text.line_headers import without_headers


def _word_starts(text: str) -> np.ndarray:
    """Every offset that starts a run of non-space characters after whitespace: the candidates."""
    return np.array([m.start() for m in re.finditer(r"(?<=\s)\S", text)], dtype=np.int64)


def _split(text: str, probable: dict[str, float], layout: str = "plain") -> list[str]:
    """Segments of `text` where the candidate at each substring of `probable` (its first occurrence;
    a candidate there is added if no word starts there) has that probability, every other 0.0."""
    chosen = {text.index(piece): prob for piece, prob in probable.items()}
    offsets = np.array(sorted({*_word_starts(text).tolist(), *chosen}), dtype=np.int64)
    probs = np.array([chosen.get(at, 0.0) for at in offsets.tolist()])
    spans = decode(text, offsets, probs, DecodeConfig(threshold=0.5, layout=layout))
    assert_invariants(text, spans)
    return [span.text for span in spans]


def _streamed(text: str, offsets: np.ndarray, probs: np.ndarray, cuts: list[int]) -> list[tuple[int, int]]:
    decoder, spans, previous = Decoder(DecodeConfig(threshold=0.5)), [], 0
    forced = blank_line_boundaries(text)
    for cut in [*sorted(set(cuts)), len(text)]:
        decoder.add_text(text[previous:cut], [at for at in forced if previous <= at < cut])
        mine = (offsets >= previous) & (offsets < cut)
        decoder.add_candidates(offsets[mine], probs[mine])
        spans += list(decoder.advance(cut))
        previous = cut
    spans += list(decoder.finish())
    return [(span.start, span.end) for span in spans]


QUOTED = (
    "Sam Lee <sam@example.org> wrote:\n>\n>\n> We need examples. Can you share?\n>\n> Thanks\n>\n>\nOkay."
)


@pytest.mark.parametrize("layout", ["plain", "auto"])
def test_lines_of_quote_markers_alone_never_open_a_segment(layout):
    # the model puts its probability after the markers; the lines of ">" alone stay with what precedes
    segments = _split(QUOTED, {"We need": 0.99, "Can": 0.99, "Thanks": 0.99, "Okay": 0.99}, layout)
    assert segments == [
        "Sam Lee <sam@example.org> wrote:\n>\n>",
        "> We need examples.",
        "Can you share?\n>",
        "> Thanks\n>\n>",
        "Okay.",
    ]
    # a boundary proposed at a line of markers alone moves to the next quoted line that says something
    moved = _split(QUOTED, {">\n>\n> We": 0.9, "Can": 0.99, "Okay": 0.99}, layout)
    assert moved[:2] == ["Sam Lee <sam@example.org> wrote:\n>\n>", "> We need examples."]


REFERENCES = (
    "References\n"
    "1. Geerts WH, Code KI, Jay RM: A prospective study of venous\n"
    "thromboembolism after major trauma. N Engl J Med 1994, 331:1601-6.\n"
    "2. Chen E, Szalai JP: Another study. Am J Surg 1989, 158:515-9.\n"
    "Davies, D. J. (1981). The Welsh in America: a bibliography. Cardiff:\n"
    "University of Wales Press.\n"
)


def test_a_reference_entry_is_one_segment_whatever_the_model_says():
    cuts = {
        piece: 0.99 for piece in ("Code", "JP:", "A prospective", "N Engl", "Am J", "The Welsh", "Cardiff")
    }
    assert _split(REFERENCES, cuts) == [
        "References",
        "1. Geerts WH, Code KI, Jay RM: A prospective study of venous\n"
        "thromboembolism after major trauma. N Engl J Med 1994, 331:1601-6.",
        "2. Chen E, Szalai JP: Another study. Am J Surg 1989, 158:515-9.",
        "Davies, D. J. (1981). The Welsh in America: a bibliography. Cardiff:\nUniversity of Wales Press.",
    ]


def test_names_and_initials_outside_a_reference_list_are_left_to_the_model():
    prose = "The report came from Smith JD, the mayor. Then Jones AB, a clerk, read it in 1994."
    assert not inside_entry(prose, prose.index("Then")) and not opens_entry(prose, prose.index("Then"))
    wrapped = "A study by\nGeerts WH, Code KI: trauma. N Engl J Med 1994.\nIt was long."
    assert not inside_entry(wrapped, wrapped.index("N Engl"))  # one entry-like line is no list


def test_markdown_emphasis_goes_with_its_words():
    text = "b. **Consent.** The software may collect data. It is **very** useful."
    # the model cuts inside the closing "**" and right after an opening one
    assert _split(text, {"* The": 0.9, "very": 0.9}) == [
        "b. **Consent.**",
        "The software may collect data. It is",
        "**very** useful.",
    ]


def test_no_boundary_inside_an_inline_html_tag_and_its_word():
    text = 'Use it for the <span class="term">Purpose</span>; keep it safe.'
    assert inside_unit(text, text.index("Purpose")) and inside_unit(text, text.index("</span>"))
    assert not inside_unit("Say <kit> hello", 10)  # a chat nickname with a space after it is no tag


def test_a_filler_goes_with_what_follows_and_stays_at_a_turn_end():
    text = "A: it is going to do that um conceptual design is next\nB: a big cat too um\nA: okay"
    segments = _split(text, {"conceptual": 0.9, "um\nA": 0.9})
    assert segments == [
        "A: it is going to do that",
        "um conceptual design is next",
        "B: a big cat too um",
        "A: okay",
    ]


def test_chat_export_and_weekday_stamps_are_line_headers():
    assert without_headers("12/03/24, 21:14 - Nan: Has anyone seen it") == "Has anyone seen it"
    assert without_headers("[Mon 08:47] ~lemon~: good morning") == "good morning"
    assert without_headers("[09:15 pm] dani.k: hi") == "hi"
    text = "12/03/24, 21:14 - Nan: Has anyone seen my glasses"
    assert inside_unit(text, text.index("Has"))  # no cut between a header and its message


def test_an_addressee_without_a_colon_stays_with_the_message():
    log = "[02:12] <sethk> try it\n[02:13] <brophat> sethk I have a disk\n[02:13] <brophat> well I tried"
    assert inside_unit(log, log.index("I have"))
    assert not inside_unit(log, log.index("I tried"))  # "well" names no one in the log


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_rules_give_the_same_spans_when_the_text_is_streamed(data):
    text = data.draw(st.sampled_from(STREAMED))
    offsets = _word_starts(text)
    probs = np.array(
        data.draw(
            st.lists(st.sampled_from([0.0, 0.3, 0.6, 0.99]), min_size=len(offsets), max_size=len(offsets))
        )
    )
    cuts = data.draw(st.lists(st.integers(1, len(text) - 1), max_size=4))
    whole = [(s.start, s.end) for s in decode(text, offsets, probs, DecodeConfig(threshold=0.5))]
    assert _streamed(text, offsets, probs, cuts) == whole


def test_a_colon_lead_in_and_a_line_end_reference_stay_with_their_sentence():
    lead_in = "2. **Day 2:** You may see bubbles."
    assert _split(lead_in, {"You": 0.9}) == [lead_in]
    changelog = "- Fixed typing in their code. (#7441)\n- Changed headers. (#7436)"
    assert _split(changelog, {"(#7441)": 0.9, "(#7436)": 0.9}, layout="auto") == [
        "- Fixed typing in their code. (#7441)",
        "- Changed headers. (#7436)",
    ]
    aside = "It broke.\n(sent from a phone)"  # an aside on a line of its own stands alone
    assert _split(aside, {"(sent": 0.9}) == ["It broke.", "(sent from a phone)"]


def test_a_list_item_in_a_block_quote_opens_at_its_first_marker():
    text = "> To disable them:\n>\n> * bash: `export A=`\n> * zsh: `export B=`"
    assert _split(text, {}, layout="auto") == [
        "> To disable them:\n>",
        "> * bash: `export A=`",
        "> * zsh: `export B=`",
    ]


def test_restructured_text_literal_blocks_and_directives_are_never_cut():
    text = (
        ".. contents::\n    :local:\n    :class: faq\n\nInstall it with::\n\n"
        "    pip install sqlalchemy\n    pip install other. Then more\n\nThen it works."
    )
    cuts = {":class:": 0.9, "pip install other": 0.9, "Then more": 0.9}
    assert _split(text, cuts, layout="auto") == [
        ".. contents::\n    :local:\n    :class: faq",
        "Install it with::",
        "pip install sqlalchemy\n    pip install other. Then more",
        "Then it works.",
    ]
    # without the "::" that introduces it, an indented paragraph is prose, as in an e-mail
    prose = "Install it with:\n\n    pip install sqlalchemy. Then more"
    assert _split(prose, {"Then more": 0.9}, layout="auto")[-1] == "Then more"


STREAMED = [
    QUOTED,
    REFERENCES,
    "A: do that um conceptual design\nB: ok um\nA: fine",
    ".. contents::\n    :local:\n\nInstall it with::\n\n    pip install x. Then\n\n    more. Code\n\nDone.",
    "> To disable them:\n>\n> * bash: `export A=`\n> * zsh: `B`\n\n2. **Day 2:** You may. (#7441)\nOk.",
]


def test_mail_headers_and_attribution_lines_are_never_cut():
    text = "Subject: Hello there\nOn Tue, Mar 11, 2025 at 10:02 AM Jo Lee <jo@example.org> wrote:\n> ok"
    assert inside_unit(text, text.index("Hello"))
    assert inside_unit(text, text.index("Jo Lee")) and inside_unit(text, text.index("wrote"))
    assert not inside_unit(text, text.index("> ok"))
    assert not inside_unit("Questions: Hello there", 11)  # not a mail header field


def test_chat_handles_hashtags_and_emoji_go_with_their_message():
    text = "omg just watched the finale 😭😭 cannot believe it\n@maya_k you HAVE to watch it #nospoilers"
    assert inside_unit(text, text.index("you HAVE"))  # a reply's handle addresses, it ends nothing
    assert inside_unit(text, text.index("#nospoilers"))  # closing hashtags stay with their message
    cuts = {"😭😭": 0.9, "you HAVE": 0.9, "#nospoilers": 0.9}
    assert _split(text, cuts) == [
        "omg just watched the finale 😭😭",
        "cannot believe it\n@maya_k you HAVE to watch it #nospoilers",
    ]
    assert not inside_unit("Ask @maya_k about it.", 13)  # a handle inside a sentence is no address


def test_the_first_entry_under_a_references_heading_is_an_entry():
    text = (
        "References\nSmith, J., Lee, K. (2019). Boundaries in noisy text. Journal of NLP 12(3), 45-67.\n"
        "Williams, G. A. (1985). When Was Wales? London: Black Raven Press."
    )
    assert opens_entry(text, text.index("Smith")) and inside_entry(text, text.index("Boundaries"))


def test_tex_quotes_are_no_code_span():
    text = "``Ja,'' sagte er. Dann ging er. ``Nein.''"
    assert not inside_unit(text, text.index("Dann"))  # UD German and Russian quote this way
    assert inside_unit("use `x = f(a, b)` here", 9)
