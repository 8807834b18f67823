"""LlamaIndex node parser `AttentionNodeParser`: nodes of whole sentences under a token budget.

    >>> from llama_index.core import Document
    >>> from segmenter.integrations.llamaindex import AttentionNodeParser
    >>> parser = AttentionNodeParser(max_tokens=128, overlap=32)
    >>> nodes = parser.get_nodes_from_documents([Document(text=text, metadata={"source": "notes.txt"})])
    >>> text[nodes[1].start_char_idx : nodes[1].end_char_idx] == nodes[1].text
    True

The chunks are those of `segmenter.chunking.Chunker`. Each node is a `TextNode` holding one chunk, with
the source relationship to the node it was cut from, that node's metadata, and `start_char_idx` /
`end_char_idx` set to the chunk's exact offsets in that node's text. LlamaIndex's own post-processing
looks each node's text up with `str.find`, which lands on the wrong place where chunks overlap or a
passage repeats; the parser puts the exact offsets back after it. The `Segmenter` (and its model) loads
on first use unless one is given (`AttentionNodeParser(segmenter=...)`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from segmenter.chunking.chunker import Chunk, Chunker
from segmenter.chunking.config import DEFAULT_MAX_TOKENS, ChunkConfig
from segmenter.extras import require

require("llama_index.core", "llamaindex", "the LlamaIndex node parser")  # one line naming the extra

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.node_parser import NodeParser
from llama_index.core.node_parser.node_utils import build_nodes_from_splits
from llama_index.core.schema import BaseNode, Document, MetadataMode, TextNode
from llama_index.core.utils import get_tqdm_iterable


class AttentionNodeParser(NodeParser):
    """A LlamaIndex `NodeParser` whose nodes are runs of whole sentences of at most `max_tokens` tokens.

    max_tokens, min_tokens, overlap, tokenizer, topics: the settings of `segmenter.chunking.ChunkConfig`
    (tokenizer: None for the backbone's wordpieces, "chars", or a tiktoken encoding name)
    segmenter: the `Segmenter` that finds the sentences (None: the packaged default, built on first use)
    """

    max_tokens: int = Field(default=DEFAULT_MAX_TOKENS, description="The most tokens a chunk holds.")
    min_tokens: int = Field(default=0, description="Chunks shorter than this are avoided where possible.")
    overlap: int = Field(default=0, description="Tokens of whole sentences repeated from the chunk before.")
    tokenizer: str | None = Field(
        default=None, description="What a token is: None (wordpieces), 'chars' or a tiktoken encoding name."
    )
    topics: bool = Field(default=True, description="Whether cuts prefer topic shifts between sentences.")

    _segmenter: Any = PrivateAttr(default=None)
    _chunker: Chunker | None = PrivateAttr(default=None)

    def __init__(self, segmenter=None, **data: Any):
        super().__init__(**data)
        self.chunk_config()  # a bad setting is one ConfigError now, not at the first document
        self._segmenter = segmenter

    @classmethod
    def class_name(cls) -> str:
        return "AttentionNodeParser"

    def chunk_config(self) -> ChunkConfig:
        """The current settings, as the `Chunker` takes them."""
        return ChunkConfig(
            max_tokens=self.max_tokens,
            min_tokens=self.min_tokens,
            overlap=self.overlap,
            tokenizer=self.tokenizer,
            topics=self.topics,
        )

    @property
    def chunker(self) -> Chunker:
        """The `Chunker` of the current settings, built (with the segmenter) on first use."""
        config = self.chunk_config()
        if self._chunker is None or self._chunker.config != config:
            if self._segmenter is None:
                from segmenter.api import Segmenter

                self._segmenter = Segmenter()
            self._chunker = Chunker(self._segmenter, config)
        return self._chunker

    def chunk(self, text: str) -> list[Chunk]:
        """The chunks of `text`, with their offsets and token counts."""
        return self.chunker.chunk(text)

    def split_text(self, text: str) -> list[str]:
        """The chunks of `text` as strings."""
        return self.chunker.split_text(text)

    def _parse_nodes(
        self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any
    ) -> list[BaseNode]:
        parsed: list[BaseNode] = []
        for node in get_tqdm_iterable(nodes, show_progress, "Parsing nodes"):
            parsed.extend(self._nodes_of(node))
        return parsed

    def _nodes_of(self, node: BaseNode) -> list[TextNode]:
        """One `TextNode` per chunk of `node`'s text: exact offsets, source relationship, metadata."""
        chunks = self.chunk(node.get_content(metadata_mode=MetadataMode.NONE))
        children = build_nodes_from_splits([chunk.text for chunk in chunks], node, id_func=self.id_func)
        for child, chunk in zip(children, chunks, strict=True):
            child.start_char_idx, child.end_char_idx = chunk.start, chunk.end
            if self.include_metadata:
                child.metadata = {**node.metadata, **child.metadata}
        return children

    def _postprocess_parsed_nodes(
        self, nodes: list[BaseNode], parent_doc_map: dict[str, Document]
    ) -> list[BaseNode]:
        """LlamaIndex's post-processing (relationships, metadata), then the exact offsets put back where
        its search for each node's text moved them."""
        offsets = [
            (node.start_char_idx, node.end_char_idx) if isinstance(node, TextNode) else None for node in nodes
        ]
        nodes = super()._postprocess_parsed_nodes(nodes, parent_doc_map)
        for node, exact in zip(nodes, offsets, strict=True):
            if exact is not None:
                node.start_char_idx, node.end_char_idx = exact
        return nodes


__all__ = ["AttentionNodeParser"]
