"""Open the encoder a reader asks for: the one place an encoder is opened.

`open_encoder` takes the model, the device, the blocks needed, the precision the reader asks for
(`segmenter.encoder.backend.probe_precision`) and a tuned probe's arrays. At int8 on a CPU it first
looks for a cached entry of that model and those arrays (`segmenter.encoder.onnx.compiled`), and
returns a `CompiledEncoder` that runs without importing torch; otherwise it builds the torch
`Encoder`, whose backend `segmenter.encoder.backend.choose_backend` decides, and where that is the int8
graph, writes the entry for later runs. Both satisfy `segmenter.encoder.protocol.EncoderInterface`.
"""

from __future__ import annotations

import logging

import numpy as np

from segmenter.encoder.onnx.compiled import CompiledEncoder, entry_key, write_entry
from segmenter.encoder.onnx.runtime import cache_dir
from segmenter.encoder.protocol import EncoderInterface

LOG = logging.getLogger(__name__)  # notes a graph being built (the command line shows them on a terminal)


def open_encoder(
    model: str | None,
    device: str,
    max_layer: int,
    precision: str,
    deltas: dict[str, np.ndarray] | None,
    pruning: dict[str, np.ndarray] | None,
) -> EncoderInterface:
    """The encoder `Encoder(model, device, max_layer, precision, deltas, pruning)` would be; for int8 on
    the CPU a `CompiledEncoder` from the cache where an entry matches (writing one after building the
    torch encoder where none does)."""
    key = None
    if precision == "int8" and device == "cpu":
        key = entry_key(model, max_layer, deltas or {}, pruning or {})
        found = None if key is None else CompiledEncoder.load(key)
        if found is not None:
            return found
    from segmenter.encoder.torch.encoder import Encoder  # here: a cached int8 encoder needs no torch

    if key is not None:
        LOG.info("preparing the int8 encoder of this model (once; kept in %s)", cache_dir())
    encoder = Encoder(
        model, device=device, max_layer=max_layer, precision=precision, deltas=deltas, pruning=pruning
    )
    if key is not None:
        write_entry(key, encoder)
    return encoder
