"""Reliability, big and odd inputs: each one segments without error, and the work grows linearly.

Inputs: a 1 MB single line without spaces, a 200,000-character run of digits and dots, a file of only
newlines, text that tokenizes mostly to [UNK], CJK mixed with English, a document many times longer than
the model's maximum position embeddings, lone surrogates, trailing punctuation after the last sentence.
Nothing here is timed. Linear time is checked structurally instead: the encoder rows and positions are
counted by wrapping `Encoder.forward` and must equal the window plan (at most tokens/stride + 1 windows
of at most `size` positions), and decoding is handed a string / array that counts every character or
element it reads. The big inputs run on the tiny random BERT; the real packaged model gets a document
20 times its maximum positions and the 200,000-character digit run (both marked slow) and short
versions of the other odd inputs.
"""

from __future__ import annotations

import math
import random
import re
import string
from types import SimpleNamespace

import numpy as np
import pytest
from click.testing import CliRunner
from invariants import assert_invariants

from segmenter.api import Segmenter
from segmenter.cli.main import main
from segmenter.config import DecodeConfig
from segmenter.decode.decoder import decode
from segmenter.readers.stream import PIECE_CHARS, cut_point
from segmenter.readers.windows import plan

SENTENCES = [
    "The storm knocked out power across the valley on Tuesday.",
    "Crews worked through the night to restore it.",
    "By morning most homes had electricity again, officials said.",
]
CJK_ENGLISH = (
    "我们今天去公园。We went to the park today.他说：“好的！”Then we left at 5 p.m.东京は晴れでした。"
    "The weather was fine.서울에서 만났다. 我们吃了饭，然后回家。It was late"
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def tiny(tiny_bert_dir):
    return Segmenter(model=str(tiny_bert_dir), strategy="similarity")


@pytest.fixture(scope="module")
def real():
    return Segmenter()  # packaged all-MiniLM-L6-v2 with the shipped probe


@pytest.fixture
def count_windows(monkeypatch):
    """count_windows(segmenter) -> a record of the rows and positions its encoder runs from now on."""

    def install(segmenter: Segmenter) -> SimpleNamespace:
        record = SimpleNamespace(rows=0, positions=0, widest=0)

        def counting(forward):
            def count(input_ids, attention_mask, *args, **kwargs):
                record.rows += input_ids.shape[0]
                record.positions += input_ids.size
                record.widest = max(record.widest, input_ids.shape[1])
                return forward(input_ids, attention_mask, *args, **kwargs)

            return count

        # every encoder the segmenter reads with (the default reads punctuated text with another)
        for encoder in {id(r.scorer.encoder): r.scorer.encoder for r in segmenter.reader.leaves()}.values():
            monkeypatch.setattr(encoder, "forward", counting(encoder.forward))
        return record

    return install


def segment_in_linear_work(segmenter: Segmenter, text: str, record) -> list:
    """Segment `text`, check the invariants, and check that the encoder ran exactly the planned windows,
    whose number and size are linear in the number of tokens."""
    n_tokens = sum(len(segmenter.encoder.tokenize(piece)) for piece in stream_pieces(text))
    spans = segmenter.segment(text)
    assert_invariants(text, spans)
    window = segmenter.window
    planned = [w for w in plan(n_tokens, window) if len(w) >= 2]
    assert record.rows == len(planned)
    assert record.rows <= math.ceil(n_tokens / window.stride) + 1
    assert record.widest <= min(window.size, segmenter.encoder.max_positions)
    assert record.positions <= record.rows * window.size
    return spans


def stream_pieces(text: str) -> list[str]:
    """The pieces the segmenter tokenizes `text` in (cut at whitespace, or inside a very long word)."""
    pieces, start = [], 0
    while (cut := cut_point(text, start, PIECE_CHARS)) is not None:
        pieces.append(text[start:cut])
        start = cut
    return [*pieces, text[start:]]


def random_text(alphabet: str, n: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(alphabet) for _ in range(n))


# -- 1 MB on one line, no spaces -----------------------------------------------------------------------


def test_one_megabyte_line_of_letters(tiny, count_windows):
    text = random_text(string.ascii_letters, 1_000_000)
    record = count_windows(tiny)
    spans = segment_in_linear_work(tiny, text, record)
    assert [(s.start, s.end) for s in spans] == [(0, len(text))]  # one [UNK] token: nothing to split


def test_one_megabyte_line_of_long_words_and_punctuation(tiny, count_windows):
    rng = random.Random(1)
    parts, size = [], 0
    while size < 1_000_000:
        parts.append(random_text(string.ascii_letters, rng.randint(101, 300), seed=size))
        parts.append(rng.choice(",.;:/-_|!?"))
        size += len(parts[-2]) + 1
    text = "".join(parts)
    assert " " not in text and "\n" not in text
    record = count_windows(tiny)
    segment_in_linear_work(tiny, text, record)
    assert record.rows > 50  # it really went through many windows


@pytest.mark.slow
def test_one_megabyte_line_of_short_tokens(tiny, count_windows):
    """Minified-data-like: ~800k tokens, the worst case for window count (still linear)."""
    text = random_text("abcdefghij.,;!?0123456789", 1_000_000, seed=2)
    record = count_windows(tiny)
    segment_in_linear_work(tiny, text, record)


# -- digits and dots -----------------------------------------------------------------------------------


def test_digit_and_dot_run_of_200k_characters(tiny, count_windows):
    text = random_text("0123456789.", 200_000, seed=3)
    record = count_windows(tiny)
    segment_in_linear_work(tiny, text, record)
    assert record.rows > 1000


@pytest.mark.slow
def test_digit_and_dot_run_of_200k_characters_on_the_real_model(real, count_windows):
    text = random_text("0123456789.", 200_000, seed=4)
    record = count_windows(real)
    segment_in_linear_work(real, text, record)
    assert record.rows > 500


def test_windows_grow_linearly_with_input_length(tiny, count_windows):
    """k times the text: k times the tokens, and windows bounded by tokens/stride + 1 (so about k times
    the windows), for prose and for digit runs alike."""
    for unit in (" ".join(SENTENCES) + " ", random_text("0123456789.", 400, seed=5) + " "):
        base_tokens = len(tiny.encoder.tokenize(unit * 8))
        for k in (1, 2, 4, 8, 16):
            text = unit * (8 * k)
            assert len(tiny.encoder.tokenize(text)) == k * base_tokens
            record = count_windows(tiny)
            segment_in_linear_work(tiny, text, record)
            assert record.rows <= k * base_tokens / tiny.window.stride + 1


# -- newlines only -------------------------------------------------------------------------------------


def test_file_of_only_newlines(tmp_path, tiny, tiny_bert_dir):
    contents = {"lf.txt": "\n" * 100_000, "crlf.txt": "\r\n" * 50_000, "cr.txt": "\r" * 100_000}
    contents["mixed.txt"] = "\n\r\n\r \t\n\x0b\x0c\u2028" * 10_000
    for name, text in contents.items():
        (tmp_path / name).write_bytes(text.encode("utf-8"))
        assert tiny.segment(text) == []
    target = tmp_path / "out.jsonl"
    args = ["segment", "--model", str(tiny_bert_dir), "--strategy", "similarity", "--format", "jsonl"]
    result = CliRunner().invoke(main, [*args, "-o", str(target), *(str(tmp_path / n) for n in contents)])
    assert result.exit_code == 0, result.output
    assert target.read_bytes() == b""  # nothing to segment, and nothing invented


# -- mostly [UNK] --------------------------------------------------------------------------------------


def unk_heavy_text() -> str:
    """Scripts and symbols missing from the WordPiece vocabulary, in words of 1-6 characters."""
    alphabet = "ᏣᎳᎩᏌᏊᎪᏪᎵᏍᎬᏅᎢ" + "ሰላምአበገደ" + "ᚠᚢᚦᚨᚱᚲ" + "🎉🙂🚀🦀🧪" + "ꦲꦤꦕꦫ"
    rng = random.Random(6)
    words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(1500)]
    return " ".join(w + (rng.choice([".", "", "", "!"]) if i % 7 == 6 else "") for i, w in enumerate(words))


def test_text_that_is_mostly_unk(tiny, count_windows):
    text = unk_heavy_text()
    tokens = tiny.encoder.tokenize(text)
    assert np.mean(tokens.ids == tiny.encoder.tokenizer.unk_token_id) > 0.7
    record = count_windows(tiny)
    segment_in_linear_work(tiny, text, record)


# -- CJK and English -----------------------------------------------------------------------------------


def test_cjk_mixed_with_english(tiny, count_windows):
    text = CJK_ENGLISH * 40
    record = count_windows(tiny)
    segment_in_linear_work(tiny, text, record)


def test_real_model_on_short_odd_inputs(real):
    """The real model on short versions of the odd inputs (the long ones run on it in the slow tests)."""
    texts = [
        CJK_ENGLISH,
        unk_heavy_text()[:2000],
        random_text("0123456789.", 3000, seed=7),
        random_text(string.ascii_letters + ",.;", 5000, seed=8),
        "\n" * 500 + "\r\n" * 500,
        "",
        "ab \udc80\udcff cd. \ud800 Then more.",  # lone surrogates (e.g. from surrogateescape)
    ]
    for text, spans in zip(texts, real.pipe(texts), strict=True):
        assert_invariants(text, spans)


# -- many times the model's maximum position embeddings ------------------------------------------------


def test_document_many_times_longer_than_max_positions(tiny, count_windows):
    text = " ".join(SENTENCES[i % 3] for i in range(700))
    n_tokens = len(tiny.encoder.tokenize(text))
    assert n_tokens > 50 * tiny.encoder.max_positions
    record = count_windows(tiny)
    spans = segment_in_linear_work(tiny, text, record)
    assert record.widest <= tiny.encoder.max_positions
    assert len(spans) >= 1


@pytest.mark.slow
def test_real_model_document_many_times_longer_than_max_positions(real, count_windows):
    text = " ".join(SENTENCES[i % 3] for i in range(1000))
    n_tokens = len(real.encoder.tokenize(text))
    assert n_tokens > 20 * real.encoder.max_positions
    record = count_windows(real)
    spans = segment_in_linear_work(real, text, record)
    assert record.widest <= real.encoder.max_positions
    assert 500 <= len(spans) <= 1500  # about one span per sentence, not one per window


# -- decoding in linear work (regressions) -------------------------------------------------------------


class CountingStr(str):
    """A str that counts the characters read through indexing and slicing."""

    read = 0

    def __getitem__(self, key):
        piece = super().__getitem__(key)
        CountingStr.read += len(piece)
        return piece


class CountingArray(np.ndarray):
    """An int array that counts element reads (numpy's own whole-array operations are not counted)."""

    reads = 0

    def __getitem__(self, key):
        CountingArray.reads += 1
        return super().__getitem__(key)


def decode_reads(text: str, offsets: np.ndarray, probs: np.ndarray, config: DecodeConfig):
    CountingStr.read, CountingArray.reads = 0, 0
    spans = decode(CountingStr(text), offsets.view(CountingArray), probs, config)
    assert_invariants(text, spans)
    return spans, CountingStr.read, CountingArray.reads


@pytest.mark.parametrize("unit", [".", "!?", "…", '"', ". ", "-\n"])
def test_punctuation_run_with_a_boundary_at_every_character_decodes_in_linear_work(unit):
    """Regression: a long run without letters or digits, every gap a boundary (say --threshold 0), was
    decoded in quadratic time (each candidate rescanned the run back to the last kept boundary)."""
    text = "It began. " + unit * (200_000 // len(unit)) + " It ended."
    offsets = np.arange(9, len(text) - 9, dtype=np.int64)  # every gap from "began." to "It ended."
    spans, read, _ = decode_reads(text, offsets, np.ones(len(offsets)), DecodeConfig(threshold=0.5))
    assert read <= 4 * len(text)
    assert spans[0].text == "It began." and spans[-1].text.endswith("It ended.")


def test_max_chars_cap_on_a_long_text_decodes_in_linear_work():
    """Regression: capping segment length scanned every candidate for every cut (quadratic)."""
    text = ("lorem ipsum dolor sit amet " * 4000).strip()
    offsets = np.array([i + 1 for i, c in enumerate(text) if c == " "], dtype=np.int64)
    probs = np.random.default_rng(0).random(len(offsets)) * 0.4  # no boundary: the cap does all the work
    spans, read, reads = decode_reads(text, offsets, probs, DecodeConfig(threshold=0.5, max_chars=40))
    assert all(len(span.text) <= 40 for span in spans)
    assert read <= 4 * len(text) and reads <= len(text)


# -- lone surrogates and trailing punctuation (regressions) --------------------------------------------


def test_lone_surrogates_segment_like_replacement_characters(tiny):
    """Regression: a str holding lone surrogates (bytes decoded with surrogateescape) made the tokenizer
    raise TypeError; it now tokenizes as if each were U+FFFD, and spans index the original string."""
    text = "Café bytes \udce9\udc80 here. Then \ud800 more text.\n\nEnd \udfff"
    replaced = re.sub("[\ud800-\udfff]", "\ufffd", text)
    assert tiny.encoder.tokenize(text).ids.tolist() == tiny.encoder.tokenize(replaced).ids.tolist()
    spans = tiny.segment(text)
    assert_invariants(text, spans)
    assert spans[-1].text == "End \udfff"


@pytest.mark.parametrize(
    ("text", "offsets", "expected"),
    [
        ('He left. "', [9], ['He left. "']),
        ("It rained. We stayed in. ]]", [11, 25, 26], ["It rained.", "We stayed in. ]]"]),
        ("Thanks. :)", [8, 9], ["Thanks. :)"]),
        ("It was late. ...", [13, 14, 15], ["It was late. ..."]),
        ("The end.\n\n* * *", [10, 12, 14], ["The end.", "* * *"]),  # a blank line still ends a segment
        ('" He left', [2], ['" He left']),  # the same rule at the start, as before
    ],
)
def test_trailing_punctuation_after_the_last_sentence_is_not_a_segment(text, offsets, expected):
    """Regression: a boundary with nothing but punctuation after it at the end of the text made a
    segment without a letter or digit (a lone quote or bracket), which decode promises never to do."""
    spans = decode(text, np.array(offsets), np.full(len(offsets), 0.9), DecodeConfig(threshold=0.5))
    assert [span.text for span in spans] == expected
    assert_invariants(text, spans)
