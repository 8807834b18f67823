"""`ChunkConfig`: every setting of a `Chunker`, checked when it is built, passed whole."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from segmenter.errors import ConfigError

DEFAULT_MAX_TOKENS = 256  # all-MiniLM-L6-v2 embeds at most 256 wordpieces


@dataclass(frozen=True)
class ChunkConfig:
    """How a text is cut into chunks.

    max_tokens: the most tokens a chunk holds (a chunk never exceeds it)
    min_tokens: chunks shorter than this are avoided where the budget allows (0: no minimum)
    overlap:    each chunk after the first starts with the whole sentences that end the chunk before it,
                at most this many tokens of them (0: none); chunks are planned `overlap` tokens short
                of `max_tokens` to leave room for them, and with them never exceed it
    tokenizer:  what a token is: None or "wordpieces" (the backbone's wordpieces), "chars" (characters),
                a tiktoken encoding name such as "cl100k_base" (needs tiktoken), a callable str -> int
                (a count) or str -> list (tokens), or an object with `encode` (a Hugging Face or
                tiktoken tokenizer; special tokens are not counted)
    topics:     whether cuts prefer topic shifts between sentences (reads sentence vectors: slower)
    """

    max_tokens: int = DEFAULT_MAX_TOKENS
    min_tokens: int = 0
    overlap: int = 0
    tokenizer: str | Callable[[str], Any] | Any | None = None
    topics: bool = True

    def __post_init__(self):
        if isinstance(self.max_tokens, bool) or not isinstance(self.max_tokens, int) or self.max_tokens < 1:
            raise ConfigError(f"max_tokens must be a positive integer, got {self.max_tokens!r}")
        for name in ("min_tokens", "overlap"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"{name} must be an integer of 0 or more, got {value!r}")
            if value >= self.max_tokens and value:
                raise ConfigError(f"{name} must be below max_tokens ({self.max_tokens}), got {value}")
        if not isinstance(self.topics, bool):
            raise ConfigError(f"topics must be True or False, got {self.topics!r}")

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))
