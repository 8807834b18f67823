"""The chunker inside LangChain (`AttentionTextSplitter`) and LlamaIndex (`AttentionNodeParser`), run
against the real libraries: the same chunks as `Chunker`, exact offsets where chunks overlap and text
repeats (where a search for a chunk's text lands elsewhere), metadata and relationships carried over,
every chunk within its budget, and one line naming the extra when the library is missing."""

from __future__ import annotations

import importlib
import itertools
import sys

import pytest
from langchain_core.documents import Document as LangChainDocument
from langchain_text_splitters import TextSplitter
from llama_index.core import Document as LlamaDocument
from llama_index.core.schema import NodeRelationship, TextNode

from segmenter.chunking.chunker import Chunk, Chunker
from segmenter.errors import ConfigError, MissingExtraError
from segmenter.integrations.langchain import AttentionTextSplitter
from segmenter.integrations.llamaindex import AttentionNodeParser

PROSE = (
    "The river rose all night. By dawn the bridge was closed, and the buses ran the long way round.\n\n"
    "In the hills, the snow kept falling. Farmers brought the sheep down early. The roads were cleared "
    "by noon, though more snow was forecast for the evening.\n\n"
    "Dr. Smith arrived at 5 p.m. on Friday. She checked the gauges, wrote her report and left."
)
P = "It rained. The river rose. We stayed in. The bridge closed. Buses went round. Shops shut early."
Q = "Snow fell. Sheep came down. Roads were cleared. More snow came. Schools stayed open."
REPEATED = "\n\n".join([P, Q, P, Q, P])  # paragraphs that come back: a search finds their first copy
OVERLAPPING = {"max_tokens": 30, "overlap": 10, "topics": False}  # wordpieces


@pytest.fixture(scope="module")
def segmenter():
    from segmenter.api import Segmenter

    return Segmenter()


@pytest.fixture(scope="module")
def overlapping_chunks(segmenter) -> list[Chunk]:
    """The chunks of REPEATED under OVERLAPPING: some overlap, and some are not where str.find looks."""
    chunks = Chunker(segmenter, **OVERLAPPING).chunk(REPEATED)
    assert any(before.end > after.start for before, after in itertools.pairwise(chunks)), "no overlap"
    assert any(REPEATED.find(chunk.text) != chunk.start for chunk in chunks), "str.find would be right"
    return chunks


@pytest.fixture
def block(monkeypatch):
    """block("llama_index", ...): those libraries, and every submodule of them loaded so far, unimportable."""

    def unimportable(*names: str) -> None:
        for name in names:
            for loaded in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
                monkeypatch.setitem(sys.modules, loaded, None)
            monkeypatch.setitem(sys.modules, name, None)

    return unimportable


# --- LangChain ----------------------------------------------------------------------------------------


def test_langchain_split_text_is_the_chunkers_and_its_settings_agree(segmenter):
    splitter = AttentionTextSplitter(max_tokens=40, overlap=8, topics=False, segmenter=segmenter)
    chunker = Chunker(segmenter, max_tokens=40, overlap=8, topics=False)
    expected = chunker.split_text(PROSE)
    assert len(expected) > 1
    assert splitter.split_text(PROSE) == expected
    assert (splitter._chunk_size, splitter._chunk_overlap) == (40, 8)
    assert splitter._length_function(PROSE) == chunker.count(PROSE) == len(segmenter.encoder.tokenize(PROSE))


def test_langchain_builds_its_segmenter_on_first_use_only():
    splitter = AttentionTextSplitter(max_tokens=64, topics=False)
    assert splitter._chunker is None
    with pytest.raises(ConfigError, match="overlap must be below"):
        AttentionTextSplitter(max_tokens=16, overlap=16)


def test_langchain_start_index_is_the_chunk_start_with_overlap_and_repeats(segmenter, overlapping_chunks):
    splitter = AttentionTextSplitter(**OVERLAPPING, segmenter=segmenter, add_start_index=True)
    documents = splitter.create_documents([REPEATED], metadatas=[{"source": "repeated.txt"}])
    assert [d.metadata["start_index"] for d in documents] == [c.start for c in overlapping_chunks]
    searched = TextSplitter.create_documents(splitter, [REPEATED])  # LangChain's own: a search per chunk
    assert [d.metadata["start_index"] for d in searched] != [c.start for c in overlapping_chunks]
    assert [d.page_content for d in documents] == [c.text for c in overlapping_chunks]
    for document in documents:
        start = document.metadata["start_index"]
        assert REPEATED[start : start + len(document.page_content)] == document.page_content
        assert document.metadata["source"] == "repeated.txt"


def test_langchain_split_documents_keeps_metadata_and_exact_starts(segmenter):
    splitter = AttentionTextSplitter(**OVERLAPPING, segmenter=segmenter, add_start_index=True)
    originals = [
        LangChainDocument(page_content=REPEATED, metadata={"source": "a.txt", "tags": ["x"]}),
        LangChainDocument(page_content=PROSE, metadata={"source": "b.txt"}),
    ]
    documents = splitter.split_documents(originals)
    by_source = {"a.txt": REPEATED, "b.txt": PROSE}
    expected = [("a.txt", c.start) for c in splitter.chunk(REPEATED)] + [
        ("b.txt", c.start) for c in splitter.chunk(PROSE)
    ]
    assert [(d.metadata["source"], d.metadata["start_index"]) for d in documents] == expected
    for document in documents:
        start, text = document.metadata["start_index"], by_source[document.metadata["source"]]
        assert text[start : start + len(document.page_content)] == document.page_content
    documents[0].metadata["tags"].append("changed")  # each chunk has its own copy of the metadata
    assert originals[0].metadata == {"source": "a.txt", "tags": ["x"]}
    assert documents[1].metadata["tags"] == ["x"]


def test_langchain_without_start_index_adds_none(segmenter):
    splitter = AttentionTextSplitter(max_tokens=40, topics=False, segmenter=segmenter)
    documents = splitter.create_documents([PROSE], metadatas=[{"source": "b.txt"}])
    assert len(documents) > 1 and all(d.metadata == {"source": "b.txt"} for d in documents)
    with pytest.raises(ValueError, match="2 metadatas for 1 texts"):
        splitter.create_documents([PROSE], metadatas=[{}, {}])


@pytest.mark.parametrize(("tokenizer", "max_tokens"), [(None, 24), ("chars", 90), ("cl100k_base", 20)])
def test_langchain_chunks_fit_the_budget(segmenter, tokenizer, max_tokens):
    splitter = AttentionTextSplitter(
        max_tokens=max_tokens, tokenizer=tokenizer, topics=False, segmenter=segmenter
    )
    documents = splitter.split_documents([LangChainDocument(page_content=PROSE)])
    assert len(documents) > 2
    for document in documents:
        assert 0 < splitter.count_tokens(document.page_content) <= max_tokens
    if tokenizer == "chars":
        assert max(len(d.page_content) for d in documents) <= max_tokens


# --- LlamaIndex ---------------------------------------------------------------------------------------


def test_llamaindex_nodes_are_exact_slices_with_their_source(segmenter, overlapping_chunks):
    parser = AttentionNodeParser(segmenter=segmenter, **OVERLAPPING)
    document = LlamaDocument(text=REPEATED, metadata={"source": "repeated.txt"})
    nodes = parser.get_nodes_from_documents([document])
    assert all(isinstance(node, TextNode) for node in nodes)
    assert [(n.start_char_idx, n.end_char_idx) for n in nodes] == [
        (c.start, c.end) for c in overlapping_chunks
    ]
    for node in nodes:
        assert node.text == document.text[node.start_char_idx : node.end_char_idx]
        assert node.relationships[NodeRelationship.SOURCE].node_id == document.doc_id
        assert node.metadata == {"source": "repeated.txt"}
    for before, after in itertools.pairwise(nodes):
        assert after.prev_node.node_id == before.node_id and before.next_node.node_id == after.node_id


def test_llamaindex_offsets_are_kept_where_its_own_search_would_move_them(segmenter, monkeypatch):
    """LlamaIndex looks each node's text up from just after the previous node's start; a chunk whose text
    also occurs inside the chunk before it would be put there. The parser keeps the chunk's offsets."""
    text = "A. B. B."
    chunks = [Chunk(0, 5, "A. B.", 4), Chunk(6, 8, "B.", 2)]
    assert text.find("B.", chunks[0].start + 1) != chunks[1].start  # where LlamaIndex would put it
    monkeypatch.setattr(AttentionNodeParser, "chunk", lambda self, text: chunks)
    parser = AttentionNodeParser(segmenter=segmenter, topics=False)
    nodes = parser.get_nodes_from_documents([LlamaDocument(text=text)])
    assert [(n.start_char_idx, n.end_char_idx, n.text) for n in nodes] == [(0, 5, "A. B."), (6, 8, "B.")]


def test_llamaindex_split_text_settings_and_budget(segmenter):
    parser = AttentionNodeParser(segmenter=segmenter, max_tokens=20, tokenizer="cl100k_base", topics=False)
    chunker = Chunker(segmenter, max_tokens=20, tokenizer="cl100k_base", topics=False)
    assert parser.split_text(PROSE) == chunker.split_text(PROSE)
    nodes = parser.get_nodes_from_documents([LlamaDocument(text=PROSE), LlamaDocument(text=REPEATED)])
    assert len(nodes) > 4
    assert all(0 < chunker.count(node.text) <= 20 for node in nodes)
    parser.max_tokens = 60  # a setting changed after use: the next chunks follow it
    assert all(chunk.tokens <= 60 for chunk in parser.chunk(PROSE))
    assert len(parser.split_text(PROSE)) < len(chunker.split_text(PROSE))
    with pytest.raises(ConfigError, match="max_tokens"):
        AttentionNodeParser(max_tokens=0)


def test_llamaindex_parser_is_a_node_parser_that_builds_its_segmenter_lazily():
    from llama_index.core.node_parser import NodeParser

    parser = AttentionNodeParser(max_tokens=64, overlap=8, topics=False)
    assert isinstance(parser, NodeParser) and parser._chunker is None and parser._segmenter is None
    assert parser.class_name() == "AttentionNodeParser"
    assert {"max_tokens": 64, "overlap": 8, "topics": False}.items() <= parser.to_dict().items()


# --- without the extras -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "library", "extra", "feature"),
    [
        (
            "segmenter.integrations.langchain",
            "langchain_text_splitters",
            "langchain",
            "the LangChain text splitter",
        ),
        ("segmenter.integrations.llamaindex", "llama_index", "llamaindex", "the LlamaIndex node parser"),
    ],
)
def test_missing_library_is_one_line_naming_the_extra(block, monkeypatch, module, library, extra, feature):
    block(library)
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(MissingExtraError) as caught:
        importlib.import_module(module)
    assert (
        str(caught.value)
        == f"{feature} needs the [{extra}] extra: pip install 'attention-segmenter[{extra}]'"
    )
