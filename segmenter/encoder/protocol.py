"""What every encoder runtime offers the readers: one interface, whichever backend runs it.

`segmenter.encoder.torch.encoder.Encoder` (torch, any precision; int8 through the graph it builds) and
`segmenter.encoder.onnx.compiled.CompiledEncoder` (the cached int8 graph, without torch) both satisfy
`EncoderInterface`; the readers, the features and the probe check are written against it alone.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from segmenter.text.tokens import Capture, Tokens


class EncoderInterface(Protocol):
    """A BERT-family encoder as the readers use it.

    name: the backbone's name (what a probe's meta records). precision: "int8", "bfloat16" or
    "float32". Sizes: n_heads, head_dim, hidden_size, loaded_layers (the blocks kept), max_positions
    (tokens a window may hold). cls_id, sep_id, pad_id: the special token ids windows are built with.
    """

    name: str
    precision: str
    n_heads: int
    head_dim: int
    hidden_size: int
    loaded_layers: int
    max_positions: int
    cls_id: int
    sep_id: int
    pad_id: int

    def tokenize(self, text: str) -> Tokens:
        """`text`'s tokens without special tokens, offsets into `text`."""
        ...

    def joins(self, left: str, right: str) -> bool:
        """Whether the tokenizer reads the characters `left` and `right`, side by side, as one word."""
        ...

    def forward(
        self,
        input_ids: np.ndarray,
        attention_mask: np.ndarray,
        layers: tuple[int, ...],
        attention_layers: tuple[int, ...] = (),
        contexts: bool = True,
        hidden: bool = False,
        summary_layers: tuple[int, ...] = (),
    ) -> Capture:
        """One batch, (B, T) `input_ids` and `attention_mask` with [CLS]/[SEP] in place, through the
        blocks needed; what `layers`, `attention_layers`, `summary_layers`, `contexts` and `hidden`
        ask for, as float32 arrays."""
        ...
