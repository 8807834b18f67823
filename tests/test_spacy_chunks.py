"""The spaCy component's `chunks` setting: doc.spans["chunks"] covering the chunks of `Chunker` (char
offsets expanded to whole tokens), off by default, checked, and saved with the pipeline."""

from __future__ import annotations

import json

import pytest
import spacy

from segmenter.chunking.chunker import Chunk, Chunker
from segmenter.errors import ConfigError
from segmenter.integrations.spacy import AttentionSegmenter

MAX_TOKENS = 24
TEXTS = [
    "",
    "   ",
    "One.",
    "The river rose all night. By dawn the bridge was closed, and the buses ran the long way round.\n\n"
    "In the hills, the snow kept falling. Farmers brought the sheep down early. The roads were cleared "
    "by noon, though more snow was forecast for the evening. Dr. Smith arrived at 5 p.m. on Friday.",
    "See http://x.example/a.Then go home.We left early. " * 4,
]


@pytest.fixture(scope="module")
def tiny_nlp(tiny_bert_dir, one_torch_thread):
    nlp = spacy.blank("en")
    config = {
        "model": str(tiny_bert_dir),
        "strategy": "sep-attention",
        "threshold": 0.5,
        "chunks": MAX_TOKENS,
    }
    nlp.add_pipe("attention_segmenter", config=config)
    return nlp


def assert_spans_cover(doc, spans, chunks: list[Chunk]) -> None:
    """One span per chunk, each the fewest whole tokens that hold its chunk's characters."""
    assert len(spans) == len(chunks)
    for span, chunk in zip(spans, chunks, strict=True):
        assert span.start_char <= chunk.start and span.end_char >= chunk.end
        first, last = doc[span.start], doc[span.end - 1]
        assert first.idx + len(first.text) > chunk.start and last.idx < chunk.end  # no token to spare


def test_chunk_spans_cover_the_chunkers_chunks(tiny_nlp):
    component = tiny_nlp.get_pipe("attention_segmenter")
    chunker = Chunker(component.segmenter, max_tokens=MAX_TOKENS)
    docs = list(tiny_nlp.pipe(TEXTS, batch_size=2))
    assert sum(len(doc.spans["chunks"]) for doc in docs) > len(TEXTS)  # some text is in several chunks
    for text, doc in zip(TEXTS, docs, strict=True):
        chunks = chunker.chunk(text)
        assert all(chunk.tokens <= MAX_TOKENS for chunk in chunks)
        assert_spans_cover(doc, doc.spans["chunks"], chunks)
        single = tiny_nlp(text)  # one doc at a time: the same spans
        assert [(s.start, s.end) for s in single.spans["chunks"]] == [
            (s.start, s.end) for s in doc.spans["chunks"]
        ]


def test_a_chunk_edge_inside_a_token_expands_to_the_whole_token(tiny_nlp, monkeypatch):
    text = "See http://x.example/a.Then go home."
    inside = text.index(".Then") + 1  # a chunk edge in the middle of the URL token
    chunks = [Chunk(0, inside, text[:inside], 3), Chunk(inside, len(text), text[inside:], 3)]

    class FixedChunker:
        def chunk(self, _text):
            return chunks

    component = tiny_nlp.get_pipe("attention_segmenter")
    monkeypatch.setattr(component, "_chunker_now", lambda: FixedChunker())
    doc = tiny_nlp(text)
    assert [span.text for span in doc.spans["chunks"]] == [
        "See http://x.example/a.Then",
        "http://x.example/a.Then go home.",
    ]
    assert_spans_cover(doc, doc.spans["chunks"], chunks)


def test_off_by_default_and_saved_with_the_pipeline(tiny_bert_dir, tmp_path, one_torch_thread):
    nlp = spacy.blank("en")
    nlp.add_pipe("attention_segmenter", config={"model": str(tiny_bert_dir), "strategy": "sep-attention"})
    component = nlp.get_pipe("attention_segmenter")
    assert component.chunks is None and "chunks" not in nlp("A cat sat. A dog barked.").spans
    component.chunks = 16
    nlp.to_disk(tmp_path / "pipeline")
    saved = json.loads((tmp_path / "pipeline" / "attention_segmenter" / "cfg").read_text(encoding="utf-8"))
    assert saved["chunks"] == 16
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.get_pipe("attention_segmenter").chunks == 16
    assert len(loaded("A cat sat. A dog barked.").spans["chunks"]) >= 1
    restored = AttentionSegmenter().from_disk(tmp_path / "pipeline" / "attention_segmenter")
    assert restored.chunks == 16
    restored.from_bytes(AttentionSegmenter(chunks=32).to_bytes())
    assert restored.chunks == 32


def test_a_new_chunks_value_is_used_by_the_next_doc(tiny_nlp):
    component = tiny_nlp.get_pipe("attention_segmenter")
    text = TEXTS[3]
    wide = len(tiny_nlp(text).spans["chunks"])
    component.chunks = 8
    try:
        doc = tiny_nlp(text)
        assert len(doc.spans["chunks"]) > wide
        assert_spans_cover(doc, doc.spans["chunks"], Chunker(component.segmenter, max_tokens=8).chunk(text))
    finally:
        component.chunks = MAX_TOKENS


@pytest.mark.parametrize("chunks", [0, -4, True, "64", 2.5])
def test_bad_chunks_settings_are_one_config_error(chunks):
    with pytest.raises(ConfigError, match="chunks must be null"):
        AttentionSegmenter(chunks=chunks)
    if isinstance(chunks, int) and not isinstance(chunks, bool):
        with pytest.raises(ConfigError, match="chunks must be null"):
            spacy.blank("en").add_pipe("attention_segmenter", config={"chunks": chunks})
