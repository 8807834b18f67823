"""Markdown block structure in decoding (segmenter.decode.markdown, segmenter.decode.layout): code blocks
and table rows are never cut, blocks open segments, markers stay with their items, and a streamed text
gets the same blocks as a whole one."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from invariants import assert_invariants
from samples import FENCE, MARKDOWN

from segmenter.config import DecodeConfig
from segmenter.decode.decoder import Decoder, decode
from segmenter.decode.layout import FENCE_MAX, LayoutScanner
from segmenter.decode.markdown import read_blocks

DOCUMENT = MARKDOWN


def _segments(text: str, layout: str = "auto", prob: float = 1.0) -> list[str]:
    """Spans when the model proposes a boundary with `prob` at every word and punctuation mark."""
    offsets = np.array(
        [m.start() for m in re.finditer(r"\w+|[^\w\s]", text) if m.start() > 0], dtype=np.int64
    )
    spans = decode(text, offsets, np.full(len(offsets), prob), DecodeConfig(threshold=0.5, layout=layout))
    assert_invariants(text, spans)
    return [span.text for span in spans]


def test_code_blocks_and_table_rows_are_never_cut_and_markers_stay_with_items():
    segments = _segments(DOCUMENT)
    assert (
        f"{FENCE}python\nx = compute(a, b)  # returns the sum. Do not call twice.\n\ny = 2\n{FENCE}"
        in segments
    )
    assert "| `-o` | Output file. Written atomically. |" in segments
    assert "|---|---|" in segments
    assert "# Install" in segments
    assert not {"-", "- [", "[ ]", "1.", "2."} & set(segments)
    assert any(s.startswith("- [ ] Add") for s in segments)


def test_blocks_open_segments_where_the_model_proposes_none():
    segments = _segments(DOCUMENT, prob=0.0)
    assert segments[:3] == [
        "# Install",
        "1. Clone the repo.",
        "2. Run `pip install -e .` in the root. It takes a minute.",
    ]
    assert "- [ ] Add tests" in segments and "- [x] Write docs" in segments
    assert "| flag | meaning |" in segments


def test_plain_layout_reads_no_markdown():
    assert f"{FENCE}python" not in "".join(_segments(DOCUMENT, layout="plain", prob=0.0)[:1])
    segments = _segments(DOCUMENT, layout="plain")
    assert not any(s.startswith(FENCE) and s.endswith(FENCE) and "\n" in s for s in segments)


def test_indented_code_is_read_only_in_the_markdown_layout():
    text = "Run it:\n\n    make build. make test\n\nDone."
    assert "make build. make test" in _segments(text, layout="markdown")
    assert "make build. make test" not in _segments(text, layout="auto")


def test_a_fence_never_closed_is_not_a_code_block():
    text = f"Look at this {FENCE} thing.\n{FENCE}\nIt never closes. Really."
    assert "Really." in _segments(text)


def test_a_fence_open_too_long_stops_being_waited_for():
    scanner = LayoutScanner("auto")
    scanner.add(f"{FENCE}\n" + "x = 1\n\n" * (FENCE_MAX // 6))
    assert scanner.known > 0  # groups ended at blank lines once the fence was given up


def test_a_single_item_under_a_line_of_text_is_a_hard_wrap():
    assert read_blocks("He came back\n- as we expected - and left.\n", "auto").starts == [0]
    assert read_blocks("Shopping:\n\n- milk\n", "auto").starts == [0, 11]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, len(DOCUMENT) - 1), max_size=8, unique=True).map(sorted))
def test_a_streamed_text_gets_the_same_spans_as_a_whole_one(cuts):
    text = DOCUMENT
    offsets = np.array(
        [m.start() for m in re.finditer(r"\w+|[^\w\s]", text) if m.start() > 0], dtype=np.int64
    )
    probs = (np.arange(len(offsets)) % 3 == 0).astype(float)
    whole = decode(text, offsets, probs, DecodeConfig(threshold=0.5))
    decoder, spans, start = Decoder(DecodeConfig(threshold=0.5)), [], 0
    for end in [*cuts, len(text)]:
        decoder.add_text(text[start:end])
        inside = (offsets >= start) & (offsets < end)
        decoder.add_candidates(offsets[inside], probs[inside])
        spans.extend(decoder.advance(end))
        start = end
    spans.extend(decoder.finish())
    assert spans == whole


@pytest.mark.parametrize("layout", ["sideways", ""])
def test_an_unknown_layout_is_a_config_error(layout):
    from segmenter.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown layout"):
        DecodeConfig(layout=layout)
