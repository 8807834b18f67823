"""LangChain text splitter `AttentionTextSplitter`: chunks of whole sentences under a token budget.

    >>> from segmenter.integrations.langchain import AttentionTextSplitter
    >>> splitter = AttentionTextSplitter(max_tokens=128, overlap=32, add_start_index=True)
    >>> documents = splitter.create_documents([text], metadatas=[{"source": "notes.txt"}])
    >>> documents[0].metadata                        # {"source": "notes.txt", "start_index": 0}
    >>> splitter.split_documents(loaded_documents)   # the same, for LangChain `Document`s

The chunks are those of `segmenter.chunking.Chunker` (`split_text` returns `Chunker.split_text`).
LangChain's own settings agree with ours: `chunk_size` is `max_tokens`, `chunk_overlap` is `overlap` and
`length_function` counts tokens as the budget does. With `add_start_index`, a document's
`metadata["start_index"]` is its chunk's exact offset (`Chunk.start`), never a search for its text, so
it is right where chunks overlap and where a passage repeats. The `Segmenter` (and its model) loads on
first use unless one is given.
"""

from __future__ import annotations

import copy
from typing import Any

from segmenter.chunking.chunker import Chunk, Chunker
from segmenter.chunking.config import DEFAULT_MAX_TOKENS, ChunkConfig
from segmenter.extras import require

require("langchain_text_splitters", "langchain", "the LangChain text splitter")  # one line naming the extra

from langchain_core.documents import Document
from langchain_text_splitters import TextSplitter


class AttentionTextSplitter(TextSplitter):
    """A LangChain `TextSplitter` whose chunks are runs of whole sentences of at most `max_tokens` tokens.

    max_tokens, min_tokens, overlap, tokenizer, topics: the settings of `segmenter.chunking.ChunkConfig`
    segmenter:       the `Segmenter` that finds the sentences (None: the packaged default, built on first use)
    add_start_index: whether each document's metadata gets "start_index", its chunk's offset in the text
    """

    def __init__(
        self,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        min_tokens: int = 0,
        overlap: int = 0,
        tokenizer: Any = None,
        topics: bool = True,
        segmenter=None,
        *,
        add_start_index: bool = False,
    ):
        self.config = ChunkConfig(
            max_tokens=max_tokens, min_tokens=min_tokens, overlap=overlap, tokenizer=tokenizer, topics=topics
        )
        self._segmenter = segmenter
        self._chunker: Chunker | None = None
        super().__init__(
            chunk_size=max_tokens,
            chunk_overlap=overlap,
            length_function=self.count_tokens,
            add_start_index=add_start_index,
        )

    @property
    def chunker(self) -> Chunker:
        """The `Chunker` behind the splitter, built (with its segmenter) on first use."""
        if self._chunker is None:
            if self._segmenter is None:
                from segmenter.api import Segmenter

                self._segmenter = Segmenter()
            self._chunker = Chunker(self._segmenter, self.config)
        return self._chunker

    def count_tokens(self, text: str) -> int:
        """The tokens of `text`, as `max_tokens` counts them (LangChain's `length_function`)."""
        return self.chunker.count(text)

    def chunk(self, text: str) -> list[Chunk]:
        """The chunks of `text`, with their offsets and token counts."""
        return self.chunker.chunk(text)

    def split_text(self, text: str) -> list[str]:
        """The chunks of `text` as strings."""
        return self.chunker.split_text(text)

    def create_documents(
        self, texts: list[str], metadatas: list[dict[Any, Any]] | None = None
    ) -> list[Document]:
        """One `Document` per chunk of each text, with a copy of that text's metadata (and, with
        `add_start_index`, the chunk's exact offset as "start_index"). `split_documents` goes through here."""
        if metadatas is not None and len(metadatas) != len(texts):
            raise ValueError(f"got {len(metadatas)} metadatas for {len(texts)} texts")
        documents = []
        for index, text in enumerate(texts):
            metadata = metadatas[index] if metadatas is not None else {}
            documents.extend(self._document(chunk, metadata) for chunk in self.chunk(text))
        return documents

    def _document(self, chunk: Chunk, metadata: dict[Any, Any]) -> Document:
        metadata = copy.deepcopy(metadata)
        if self._add_start_index:
            metadata["start_index"] = chunk.start
        return Document(page_content=chunk.text, metadata=metadata)


__all__ = ["AttentionTextSplitter"]
