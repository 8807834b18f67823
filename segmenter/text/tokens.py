"""A text's tokens with character offsets, and what one encoder pass captured: the types shared by
every encoder, with the tokenizer calls that make them.

`tokenize` and `joins` read a `tokenizers.Tokenizer` (the fast tokenizer every supported model has); text
reaches it with lone surrogates as U+FFFD and the whitespace it would delete as spaces, one character for one,
so offsets index the caller's text. `Tokens` and `Capture` are plain arrays. This module imports neither torch
nor transformers, so an encoder that runs without torch (`segmenter.encoder.onnx.compiled`) shares it with the
torch one (`segmenter.encoder.torch.encoder`). It knows nothing of models, windows or features.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from segmenter.errors import UnsupportedModelError
from segmenter.text.charclasses import TOKENIZER_DELETED_SPACE

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_DELETED_SPACE = re.compile(f"[{TOKENIZER_DELETED_SPACE}]")


@dataclass(frozen=True)
class Tokens:
    """A text's tokens (no special tokens), each tied to the characters it came from.

    ids:        (N,) int64 vocabulary ids
    offsets:    (N, 2) int64 character spans [start, end) into the original string
    word_start: (N,) bool, True where a token begins a new pre-tokenizer word (a candidate boundary)
    surface:    (N, F) float32 flags read from the original characters (see `segmenter.text.surface`), or None
    """

    ids: np.ndarray
    offsets: np.ndarray
    word_start: np.ndarray
    surface: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.ids.shape[0])


@dataclass(frozen=True)
class Capture:
    """What one forward pass captured, for the layers that were asked for (in ascending order).

    layers:     1-based layer numbers, one per leading entry of the arrays below
    contexts:   (L, B, T, H, d_head) float32 per-head context vectors, or None
    attentions: (L, B, H, T, T) float32 attention probabilities (rows sum to 1 over real keys), or None
    hidden:     (L, B, T, D) float32 outputs of the blocks (the residual stream), or None
    summaries:  (L, B, 3, H, T) float32 per token t, or None: [:, :, 0] mean attention t receives over
                the row's real queries, [:, :, 1] attention t sends to the row's final [SEP], [:, :, 2]
                attention t sends to [CLS] (position 0); the first three of `features.SIGNALS`
    """

    layers: tuple[int, ...]
    contexts: np.ndarray | None
    attentions: np.ndarray | None
    hidden: np.ndarray | None = None
    summaries: np.ndarray | None = None


def tokenizer_input(text: str) -> str:
    """`text` as the tokenizer gets it, of the same length: lone surrogates (which it cannot encode) as
    U+FFFD, and whitespace it would delete (NEL, form feed, vertical tab, U+001C-U+001F) as spaces, so
    that they separate words like any other whitespace."""
    return _DELETED_SPACE.sub(" ", _LONE_SURROGATE.sub("\ufffd", text))


def tokenize(backend, text: str) -> Tokens:
    """`text`'s tokens from `backend` (a tokenizers.Tokenizer without truncation or padding), without
    special tokens; offsets index into `text` itself (the surface flags a probe reads are added by
    `segmenter.text.surface.with_surface`)."""
    enc = backend.encode(tokenizer_input(text), add_special_tokens=False)
    ids = np.asarray(enc.ids, dtype=np.int64)
    offsets = _without_leading_space(text, np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2))
    words = np.asarray([-1 if w is None else w for w in enc.word_ids], dtype=np.int64)
    word_start = np.ones(len(ids), dtype=bool)
    if len(ids) > 1:
        word_start[1:] = words[1:] != words[:-1]
    return Tokens(ids=ids, offsets=offsets, word_start=word_start)


def _without_leading_space(text: str, offsets: np.ndarray) -> np.ndarray:
    """`offsets` (N, 2) with each span's leading whitespace left out: a SentencePiece token ("▁world")
    spans the space before its word, a WordPiece token never does; a span of whitespace alone stays."""
    starts = offsets[:, 0]
    spaced = [i for i, a in enumerate(starts.tolist()) if a < len(text) and text[a].isspace()]
    if not spaced:
        return offsets
    offsets = offsets.copy()
    for i in spaced:
        a, b = int(offsets[i, 0]), int(offsets[i, 1])
        word = len(text[a:b]) - len(text[a:b].lstrip())
        if a + word < b:
            offsets[i, 0] = a + word
    return offsets


def joins(backend, left: str, right: str) -> bool:
    """Whether `backend` reads the characters `left` and `right`, side by side, as one word (not so for
    "d" and "!": BERT splits punctuation off). A character that yields no token joins."""
    enc = backend.encode(tokenizer_input(left + right), add_special_tokens=False)
    words = [
        next((w for w, (a, b) in zip(enc.word_ids, enc.offsets, strict=True) if a <= i < b), None)
        for i in (0, len(left))
    ]
    return None in words or words[0] == words[1]


def wanted_layers(
    name: str,
    loaded_layers: int,
    layers: tuple[int, ...],
    attention_layers: tuple[int, ...] = (),
    summary_layers: tuple[int, ...] = (),
) -> tuple[int, ...]:
    """The 1-based layers a forward pass must run up to and read, ascending; an UnsupportedModelError
    where one lies outside the `loaded_layers` blocks of model `name`."""
    wanted = tuple(sorted(set(layers) | set(attention_layers) | set(summary_layers)))
    if not wanted or wanted[-1] > loaded_layers or wanted[0] < 1:
        raise UnsupportedModelError(f"layers {wanted} are outside 1..{loaded_layers} loaded for {name!r}")
    return wanted
