"""`segmenter.chunking`: the plan, the pieces, and `Chunker` end to end (a tiny random model for the
sentences, so the properties are tested on boundaries that fall anywhere)."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segmenter.api import Segmenter
from segmenter.chunking import chunker as chunker_module
from segmenter.chunking.chunker import Chunker
from segmenter.chunking.config import ChunkConfig
from segmenter.chunking.pieces import is_heading, opens_paragraph, split_long
from segmenter.chunking.plan import plan_chunks
from segmenter.errors import ConfigError

WORDS = st.sampled_from(
    ["It", "rained.", "we", "left", "ok", "Yes!", "caf\u00e9", "9.5", "https://x.example/a?b=c"]
)
SEPARATORS = st.sampled_from([" ", " ", " ", "\n", "\n\n", "\t", "\u2028"])


@st.composite
def texts(draw) -> str:
    words = draw(st.lists(WORDS, min_size=0, max_size=60))
    seps = draw(st.lists(SEPARATORS, min_size=len(words), max_size=len(words)))
    return draw(st.sampled_from(["", " ", "\n"])) + "".join(w + s for w, s in zip(words, seps, strict=True))


class FakeVectors:
    """Deterministic unit vectors per sentence text (a hash of its words): topic shifts anywhere."""

    def __call__(self, sentences):
        out = np.zeros((len(sentences), 8), dtype=np.float32)
        for row, sentence in enumerate(sentences):
            rng = np.random.default_rng(sum(map(ord, sentence)))
            v = rng.normal(size=8)
            out[row] = v / np.linalg.norm(v)
        return out


@pytest.fixture(scope="module")
def tiny(tiny_bert_dir, tiny_probe_dir):
    return Segmenter(model=str(tiny_bert_dir), probe=str(tiny_probe_dir))


def check_chunks(text, chunks, config: ChunkConfig, count):
    """The promises of `Chunker.chunk`: slices in order, within the budget, every character covered."""
    covered = np.zeros(len(text), dtype=bool)
    for before, chunk in itertools.pairwise(chunks):
        assert before.start < chunk.start and before.end < chunk.end
        if not config.overlap:
            assert before.end <= chunk.start
    for chunk in chunks:
        assert chunk.text == text[chunk.start : chunk.end] and chunk.text == chunk.text.strip()
        assert chunk.tokens == count(chunk.text) <= config.max_tokens
        covered[chunk.start : chunk.end] = True
    assert all(covered[i] for i, c in enumerate(text) if not c.isspace())


# -- the plan -------------------------------------------------------------------------------------------


@given(
    tokens=st.lists(st.integers(0, 20), min_size=0, max_size=40),
    budget=st.integers(20, 60),
    topics=st.booleans(),
    min_tokens=st.integers(0, 19),
    seed=st.integers(0, 5),
)
def test_plan_keeps_every_chunk_within_the_budget(tokens, budget, topics, min_tokens, seed):
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(len(tokens), 4)) if topics and tokens else None
    paragraph = rng.random(len(tokens)) < 0.3
    starts = plan_chunks(np.array(tokens, dtype=np.int64), budget, vectors, paragraph, min_tokens)
    assert starts == sorted(set(starts)) and all(0 < s < len(tokens) for s in starts)
    edges = [0, *starts, len(tokens)]
    assert all(sum(tokens[a:b]) <= budget for a, b in itertools.pairwise(edges))


@given(tokens=st.lists(st.integers(1, 20), min_size=1, max_size=40), budget=st.integers(20, 60))
def test_plan_without_topics_makes_the_fewest_chunks(tokens, budget):
    greedy, used = 1, 0  # closing a chunk only when the next piece does not fit is the fewest
    for count in tokens:
        if used + count > budget:
            greedy, used = greedy + 1, 0
        used += count
    assert len(plan_chunks(np.array(tokens), budget)) + 1 == greedy


def test_plan_cuts_where_the_topic_shifts():
    vectors = np.array([[1.0, 0.0]] * 5 + [[0.0, 1.0]] * 5)  # two topics of five pieces
    assert plan_chunks(np.full(10, 10), 70, vectors) == [5]  # the budget allows any cut from 3 to 7
    assert plan_chunks(np.full(10, 10), 70) in ([3], [4], [5], [6], [7])


def test_plan_avoids_short_chunks_where_it_can():
    tokens = np.array([30, 30, 5, 30, 30])
    assert all(
        sum(tokens[a:b]) >= 20 for a, b in itertools.pairwise([0, *plan_chunks(tokens, 65, min_tokens=20), 5])
    )


def test_plan_does_not_end_a_chunk_with_a_heading_where_it_can_avoid_it():
    heading = np.array([False, True, False, False, False])
    assert plan_chunks(np.full(5, 10), 30) == [2]  # piece 1 would end the first chunk
    assert plan_chunks(np.full(5, 10), 30, heading=heading) == [3]  # the heading inside the first


# -- pieces ----------------------------------------------------------------------------------------------


def words(text: str) -> int:
    return len(text.split())


def no_gaps(sentence):
    return np.zeros(0, dtype=np.int64), np.zeros(0)


def test_a_long_sentence_is_cut_at_line_breaks_and_likely_gaps_into_the_fewest_parts():
    sentence = "a b c d\ne f g h i j"
    parts = split_long(sentence, words, 6, no_gaps)
    assert [sentence[a:b] for a, b, _ in parts] == ["a b c d", "e f g h i j"]
    likely = (np.array([sentence.index("c")]), np.array([0.9]))
    parts = split_long("a b c d e f", words, 4, lambda s: likely)
    assert [p[:2] for p in parts] == [(0, 3), (4, 11)]  # "a b" | "c d e f": fewest parts, at the likely gap


def test_a_run_without_whitespace_over_the_budget_is_cut_inside():
    sentence = "x" * 25 + " y"
    parts = split_long(sentence, len, 10, no_gaps)
    assert "".join(sentence[a:b] for a, b, _ in parts).replace(" ", "") == sentence.replace(" ", "")
    assert all(b - a == t <= 10 for a, b, t in parts) and len(parts) == 3


def test_headings_are_atx_lines():
    text = "# Title\n\nSome #tag here.\n## Sub\n#hashtag"
    assert is_heading(text, 0, 7) and is_heading(text, text.index("## Sub"), text.index("## Sub") + 6)
    assert not is_heading(text, text.index("#tag"), text.index("#tag") + 4)
    assert not is_heading(text, text.index("#hashtag"), len(text))


def test_paragraph_openings():
    text = "One.\n\nTwo. Three.\n# Four\nfive"
    assert opens_paragraph(text, 0) and opens_paragraph(text, text.index("Two"))
    assert not opens_paragraph(text, text.index("Three")) and opens_paragraph(text, text.index("# Four"))
    assert not opens_paragraph(text, text.index("five"))


# -- the chunker -------------------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=texts(),
    budget=st.integers(3, 40),
    overlap=st.integers(0, 2),
    tokenizer=st.sampled_from([None, "chars"]),
    topics=st.booleans(),
)
def test_chunks_are_slices_in_order_within_the_budget_covering_the_text(
    tiny, text, budget, overlap, tokenizer, topics
):
    config = ChunkConfig(max_tokens=budget, overlap=overlap if overlap < budget else 0, tokenizer=tokenizer,
                         topics=topics)  # fmt: skip
    chunker = Chunker(tiny, config, vectors=FakeVectors())
    check_chunks(text, chunker.chunk(text), config, chunker.count)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=texts(), cuts=st.lists(st.integers(0, 400), max_size=6), topics=st.booleans())
def test_a_stream_gives_the_chunks_of_the_whole_text_however_it_is_cut(tiny, text, cuts, topics, monkeypatch):
    monkeypatch.setattr(chunker_module, "WINDOW", 4)  # many windows even in a short text
    chunker = Chunker(tiny, max_tokens=12, topics=topics, vectors=FakeVectors())
    edges = sorted({0, len(text), *(c for c in cuts if c < len(text))})
    streamed = list(chunker.chunk_stream(text[a:b] for a, b in itertools.pairwise(edges)))
    assert streamed == chunker.chunk(text)
    check_chunks(text, streamed, chunker.config, chunker.count)


def test_overlap_repeats_whole_sentences_of_the_chunk_before():
    text = " ".join(f"Sentence {i} is here." for i in range(30))
    chunker = Chunker(Segmenter(), max_tokens=30, overlap=12, topics=False)
    chunks = chunker.chunk(text)
    check_chunks(text, chunks, chunker.config, chunker.count)
    assert any(before.end > chunk.start for before, chunk in itertools.pairwise(chunks))
    for before, chunk in itertools.pairwise(chunks):
        repeated = text[chunk.start : min(before.end, chunk.end)]
        assert chunker.count(repeated) <= 12 and re.fullmatch(r"(Sentence \d+ is here\. ?)*", repeated)


def test_segmenter_chunk_keeps_its_chunker_and_checks_settings(tiny):
    text = "It rained all day. We stayed in and read. " * 10
    chunks = tiny.chunk(text, max_tokens=20, topics=False)
    assert tiny._chunker.config.max_tokens == 20 and all(c.tokens <= 20 for c in chunks)
    with pytest.raises(ConfigError, match="max_tokens"):
        tiny.chunk(text, max_tokens=0)
    with pytest.raises(ConfigError, match="overlap must be below"):
        ChunkConfig(max_tokens=10, overlap=10)
    with pytest.raises(TypeError, match="unknown settings"):
        Chunker(tiny, budget=3)
    with pytest.raises(ConfigError, match="unknown tokenizer"):
        Chunker(tiny, tokenizer="no_such_encoding")
    with pytest.raises(TypeError, match="use chunk"):
        Chunker(tiny, topics=False).chunk_stream("one text")


def test_a_callable_or_encode_tokenizer_counts_the_budget(tiny):
    text = "Alpha beta gamma. Delta epsilon. Zeta eta theta iota. Kappa."

    class Words:
        def encode(self, text, add_special_tokens=True):
            return text.split() + (["[CLS]"] if add_special_tokens else [])

    for tokenizer in (lambda t: len(t.split()), str.split, Words()):
        chunks = Chunker(tiny, max_tokens=5, tokenizer=tokenizer, topics=False).chunk(text)
        assert all(len(c.text.split()) == c.tokens <= 5 for c in chunks)
        assert " ".join(c.text for c in chunks).split() == text.split()


def test_cl100k_counts_offline(tiny):
    pytest.importorskip("tiktoken")
    chunker = Chunker(tiny, max_tokens=8, tokenizer="cl100k_base", topics=False)
    chunks = chunker.chunk("Tokenisation differs between models. Budgets must hold anyway. " * 3)
    assert chunks and all(c.tokens <= 8 for c in chunks)
