"""Streaming: a text segmented in one piece and the same text fed in chunks give identical spans.

Covers the piece cutting, the incremental decoder, the streaming window/averaging pipeline (tiny
random model and the real packaged one), bounded buffers, and the CLI streaming a file larger than one
read.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from invariants import assert_invariants

import segmenter.cli.main as cli
import segmenter.readers.stream as stream
from segmenter.config import DecodeConfig
from segmenter.decode.decoder import Decoder, blank_line_boundaries, decode
from segmenter.readers.stream import cut_point

WORDS = st.sampled_from(
    ["the", "Cat", "sat.", "It", "rained!", "a", "b,", "Yes?", "ok", "\u00e9t\u00e9", "9.5"]
    + ['"Hi', 'so."', "(see", "it)"]  # quotes and brackets that open or close a word
    + ["list:", "eggs"]  # the heading and an item of a list after a colon
)
SEPARATORS = st.sampled_from([" ", " ", " ", "\n", "\n\n", "  ", "\t", "\r\n\r\n"])


@st.composite
def texts(draw, max_words: int = 60) -> str:
    words = draw(st.lists(WORDS, max_size=max_words))
    seps = draw(st.lists(SEPARATORS, min_size=len(words), max_size=len(words)))
    return draw(SEPARATORS) * draw(st.booleans()) + "".join(w + s for w, s in zip(words, seps, strict=True))


def random_chunks(text: str, rng: random.Random, n: int) -> list[str]:
    cuts = sorted(rng.randint(0, len(text)) for _ in range(n))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]


# -- piece cutting -----------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(list("ab \n\t.\x0c\x85\u200b")), max_size=60),
    limit=st.integers(1, 12),
)
def test_pieces_end_before_a_whitespace_run_or_inside_a_long_word(text, limit):
    """Every whitespace character separates words (form feed and NEL too: the encoder hands them to the
    tokenizer as spaces); a zero-width space, which the tokenizer deletes, joins the words around it."""
    start = 0
    while (cut := cut_point(text, start, limit)) is not None:
        assert start < cut <= len(text)
        piece, rest = text[start:cut], text[cut:]
        assert not piece[-1].isspace(), "a piece ends inside a run of whitespace"
        if not rest[:1].isspace():  # a hard cut: only inside a run of non-whitespace the limit cannot hold
            assert len(piece) >= limit and piece.strip(), (piece, rest)
        start = cut


def test_pieces_tokenize_as_the_whole_text_around_form_feeds_and_zero_width_spaces(real_encoder):
    text = "one page\x0cNext two\u200b3 end here"
    cut = cut_point(text, 0, 12)
    assert text[:cut] == "one page"  # a form feed separates words like a space
    assert cut_point(text, 9, 9) == 13  # "Next", not "Next two": the zero-width space joins "two" and "3"
    whole = real_encoder.tokenize(text)
    first, second = real_encoder.tokenize(text[:cut]), real_encoder.tokenize(text[cut:])
    assert whole.word_start.sum() == first.word_start.sum() + second.word_start.sum()


def test_cut_point_waits_for_enough_text():
    assert cut_point("short text", 0, 100) is None
    assert cut_point("   \n\n   ", 0, 4) is None  # whitespace only: a blank-line run is never cut


# -- incremental decoder -----------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(text=texts(), data=st.data(), threshold=st.floats(0, 1))
def test_decoder_fed_in_pieces_matches_decode(text, data, threshold):
    word_starts = sorted({m for m in range(1, len(text)) if text[m - 1].isspace() and not text[m].isspace()})
    word_starts = sorted({*word_starts, *(m + 1 for m in word_starts if text[m] in '"(')})  # after an opener
    # not every word start is a candidate: the tokenizer deletes some characters (BOM, zero-width space)
    keep = data.draw(st.lists(st.booleans(), min_size=len(word_starts), max_size=len(word_starts)))
    starts = [m for m, kept in zip(word_starts, keep, strict=True) if kept or len(word_starts) < 3]
    probs = np.array(data.draw(st.lists(st.floats(0, 1), min_size=len(starts), max_size=len(starts))))
    offsets = np.array(starts, dtype=np.int64)
    config = DecodeConfig(threshold=threshold, max_chars=data.draw(st.none() | st.integers(1, 40)))
    expected = decode(text, offsets, probs, config)

    rng = random.Random(data.draw(st.integers(0, 1000)))
    forced = blank_line_boundaries(text)
    decoder, spans, fed_text, fed_cands = Decoder(config), [], 0, 0
    while fed_text < len(text) or fed_cands < len(offsets):
        if fed_text < len(text) and (fed_cands == len(offsets) or rng.random() < 0.5):
            end = min(len(text), fed_text + rng.randint(1, 15))
            decoder.add_text(text[fed_text:end], [f for f in forced if fed_text <= f < end])
            fed_text = end
        else:  # candidates may only be handed over for text the decoder already has
            known = int(np.searchsorted(offsets, fed_text, side="left"))
            if known <= fed_cands:
                continue
            take = rng.randint(fed_cands + 1, known)
            decoder.add_candidates(offsets[fed_cands:take], probs[fed_cands:take])
            fed_cands = take
            upto = int(offsets[take]) if take < len(offsets) else fed_text
            spans.extend(decoder.advance(min(upto, fed_text)))
    spans.extend(decoder.finish())
    assert spans == expected


def test_decoder_survives_a_stretch_without_candidates_after_a_blank_line():
    """A blank line whose next word has no candidate (it starts with a character the tokenizer deletes)
    commits a boundary after every stored candidate; the pieces after it must still decode."""
    text = "One two. Three four.\n\nFive six.\n\n\u200bSeven eight."
    offsets = np.array([text.index("Three"), text.index("Five")])
    probs = np.array([0.9, 0.1])
    config = DecodeConfig(threshold=0.5)
    decoder, spans, fed = Decoder(config), [], 0
    for cut in (text.index("Five") + 2, text.index("Seven") + 2, len(text)):
        decoder.add_text(text[fed:cut], [f for f in blank_line_boundaries(text) if fed <= f < cut])
        inside = (offsets >= fed) & (offsets < cut)
        decoder.add_candidates(offsets[inside], probs[inside])
        spans.extend(decoder.advance(cut))
        fed = cut
    spans.extend(decoder.finish())
    assert spans == decode(text, offsets, probs, config)
    assert [s.text for s in spans] == ["One two.", "Three four.", "Five six.", "\u200bSeven eight."]


# -- the streaming pipeline --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_segmenter(tiny_bert_dir, tiny_probe_dir, one_torch_thread):
    from segmenter import Segmenter

    return Segmenter(model=str(tiny_bert_dir), probe=str(tiny_probe_dir), batch_size=2)


@settings(max_examples=40, deadline=None)
@given(text=texts(max_words=80), seed=st.integers(0, 1000), n_chunks=st.integers(0, 12))
def test_streamed_equals_one_piece_tiny_model(tiny_segmenter, monkeypatch_module, text, seed, n_chunks):
    whole = tiny_segmenter.segment(text)
    streamed = list(tiny_segmenter.segment_stream(random_chunks(text, random.Random(seed), n_chunks)))
    assert streamed == whole
    assert whole == next(tiny_segmenter.pipe([text]))
    assert_invariants(text, streamed)


DELETED = st.sampled_from(["\x0c", "\x0c" * 30, "\u200b", "\x85", "\x0b\x1c", "\ufeff"])


@st.composite
def texts_with_deleted_characters(draw) -> str:
    """Words and separators with characters the tokenizer deletes in between (form feeds, zero-width
    spaces, NEL, BOM), so pieces get hard-cut inside runs of them."""
    words = draw(st.lists(WORDS, min_size=1, max_size=30))
    parts = []
    for word in words:
        parts += [
            word,
            draw(DELETED) * draw(st.booleans()),
            draw(SEPARATORS),
            draw(DELETED) * draw(st.booleans()),
        ]
    return "".join(parts)


@settings(max_examples=40, deadline=None)
@given(text=texts_with_deleted_characters(), seed=st.integers(0, 1000), n_chunks=st.integers(0, 8))
def test_streamed_equals_one_piece_with_deleted_characters(
    tiny_segmenter, monkeypatch_module, text, seed, n_chunks
):
    whole = tiny_segmenter.segment(text)
    assert list(tiny_segmenter.segment_stream(random_chunks(text, random.Random(seed), n_chunks))) == whole
    assert whole == next(tiny_segmenter.pipe([text]))


def test_piece_starting_in_form_feeds_is_not_cut_inside_the_next_word(
    tiny_bert_dir, tiny_probe_dir, monkeypatch_module
):
    """Regression: a piece that began inside a run of form feeds was cut PIECE_CHARS characters after
    its start, between "rained" and "!", and the "!" lost its word start (in the whole text BERT splits
    it off as a word of its own). With threshold 0 every candidate is a boundary, so a lost one shows
    (the "b" follows the "!" without a space, so the boundary after whitespace does not win over it)."""
    from segmenter import Segmenter

    every_gap = Segmenter(model=str(tiny_bert_dir), probe=str(tiny_probe_dir), threshold=0.0)
    text = "the the the the rained!" + "\x0c" * 30 + "\r\n\r\nrained!b, "
    whole = next(every_gap.pipe([text]))
    assert "rained" in [span.text for span in whole]
    assert every_gap.segment(text) == whole


def test_hard_cut_before_a_word_of_its_own_keeps_its_word_start(
    tiny_bert_dir, tiny_probe_dir, monkeypatch_module
):
    """A hard cut inside a word longer than a piece, right before a CJK character, which BERT reads as
    a word of its own (as it does punctuation)."""
    from segmenter import Segmenter

    every_gap = Segmenter(model=str(tiny_bert_dir), probe=str(tiny_probe_dir), threshold=0.0)
    text = "a" * (stream.PIECE_CHARS - 1) + "b\u4e00\u4e8c d"
    assert stream.cut_point(text, 0, stream.PIECE_CHARS) == stream.PIECE_CHARS  # right before the CJK
    whole = next(every_gap.pipe([text]))
    assert "\u4e00" in [span.text for span in whole]
    assert every_gap.segment(text) == whole


def test_tokenizer_joins(tiny_segmenter):
    encoder = tiny_segmenter.encoder
    assert encoder.joins("a", "b") and encoder.joins("1", "a")
    assert not encoder.joins("d", "!") and not encoder.joins("!", "a") and not encoder.joins("a", "\u4e00")


def test_hard_cut_inside_a_run_of_form_feeds(tiny_bert_dir, tiny_probe_dir, monkeypatch_module):
    """Regression: after a hard cut inside 30 form feeds, the word after the following space lost its
    word start in the streamed path (no candidate boundary there), unlike the whole text. With threshold
    0 every candidate is a boundary, so a lost candidate shows in the spans."""
    from segmenter import Segmenter

    every_gap = Segmenter(model=str(tiny_bert_dir), probe=str(tiny_probe_dir), threshold=0.0)
    text = "He said no." + "\x0c" * 30 + " She said yes."
    whole = next(every_gap.pipe([text]))
    assert any(span.text.startswith("She") for span in whole)
    assert every_gap.segment(text) == whole
    assert_invariants(text, whole)


def test_buffers_stay_bounded_on_a_long_stream(tiny_segmenter, monkeypatch_module):
    paragraph = "The cat sat on the mat and it rained all day long.\n\n"
    text_stream = tiny_segmenter.stream()
    spans, largest_text, largest_tokens = [], 0, 0
    for _ in range(600):
        spans.extend(text_stream.feed(paragraph))
        inner = text_stream._inner  # the reader tree's stream, once the text's start chose its condition
        held = text_stream._head_len if inner is None else len(inner.sink._text) + inner._pending_len
        largest_text = max(largest_text, held)
        largest_tokens = max(largest_tokens, 0 if inner is None else len(inner._tokens))
    spans.extend(text_stream.close())
    total = 600 * len(paragraph)
    assert len(spans) >= 600  # every blank line ends a segment
    assert_invariants(paragraph * 600, spans)
    # held text (about twice lists.REACH, plus the line_rules.READ_MAX read back) does not grow with the input
    assert largest_text < 3400 < total / 8
    assert largest_tokens < 200


def test_character_by_character_with_long_whitespace_runs(tiny_segmenter, monkeypatch_module):
    text = "It rained." + " " * 60 + "\n\n" + "\n" * 70 + "We stayed in. " + "x" * 90 + " end" + " " * 30
    whole = tiny_segmenter.segment(text)
    assert list(tiny_segmenter.segment_stream(iter(text))) == whole
    assert text.index("We") in [span.start for span in whole]  # the blank line ends a segment
    assert_invariants(text, whole)


def test_real_model_streamed_equals_one_piece(monkeypatch):
    from segmenter import Segmenter
    from segmenter.gold.specs import load_dataset

    monkeypatch.setattr(stream, "PIECE_CHARS", 700)
    docs = load_dataset("ewt-dev").documents[:12]
    text = "\n\n".join(doc.text for doc in docs) + "\nand then it ended without a full stop"
    segmenter = Segmenter(batch_size=4)
    whole = segmenter.segment(text)
    assert len(segmenter.encoder.tokenize(text)) > 2 * segmenter.window.size  # several windows
    for seed in range(2):
        chunks = random_chunks(text, random.Random(seed), 25)
        assert list(segmenter.segment_stream(chunks)) == whole
    assert_invariants(text, whole)


def test_segment_stream_refuses_non_text_chunks(tiny_segmenter):
    with pytest.raises(TypeError, match="str"):
        list(tiny_segmenter.segment_stream([b"bytes"]))


# -- the CLI -----------------------------------------------------------------------------------------


def test_cli_streams_a_large_file_with_the_same_spans(
    tiny_bert_dir, tiny_probe_dir, tiny_segmenter, tmp_path
):
    text = "".join(f"Line {i} is here. Then another one follows\n" for i in range(300)) + "End."
    path = tmp_path / "big.txt"
    path.write_text(text, encoding="utf-8")
    patch = pytest.MonkeyPatch()
    patch.setattr(cli, "SMALL_FILE_CHARS", 1000)  # the file is read in several chunks and streamed
    try:
        args = ["segment", str(path), "--format", "jsonl", "--model", str(tiny_bert_dir)]
        result = CliRunner().invoke(cli.main, [*args, "--probe", str(tiny_probe_dir), "--batch-size", "2"])
    finally:
        patch.undo()
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.output.splitlines()]
    expected = tiny_segmenter.segment(text)
    assert [(r["start"], r["end"]) for r in records] == [(s.start, s.end) for s in expected]
    assert all(text[r["start"] : r["end"]] == r["text"] for r in records)


@pytest.mark.slow
def test_real_model_streams_a_long_text_in_default_pieces():
    """Several default-sized pieces (64k characters), fed in uneven reads, give the one-piece spans."""
    from segmenter import Segmenter
    from segmenter.gold.specs import load_dataset

    docs = [*load_dataset("ewt-dev").documents, *load_dataset("ewt-test").documents]
    text = "\n\n".join(doc.text for doc in docs)[:200_000]
    assert len(text) > 3 * stream.PIECE_CHARS
    segmenter = Segmenter(preset="fast")
    whole = segmenter.segment(text)
    chunks = random_chunks(text, random.Random(7), 40)
    assert list(segmenter.segment_stream(chunks)) == whole
    assert_invariants(text, whole)


def test_hard_cut_next_to_a_lone_surrogate(tiny_segmenter, monkeypatch_module):
    """The glued check tokenizes the two characters around a hard cut: a lone surrogate must not
    crash it (the tokenizer sees U+FFFD, as everywhere else)."""
    text = "a" * (stream.PIECE_CHARS - 1) + "\ud800" + "bc. Then more."
    assert tiny_segmenter.encoder.joins("a", "\ud800")  # read as U+FFFD, which yields no token: joins
    assert tiny_segmenter.segment(text) == next(tiny_segmenter.pipe([text]))
