"""Low-rank weight deltas for the first blocks of a BERT-family encoder (LoRA): merging them.

A tuned probe carries the encoder changes it was trained with as pairs of factors per dense layer:
W' = W + B A, with A (r, in) and B (out, r). `merge` adds them to a freshly loaded model's weights, so
inference pays nothing for them. Arrays are named after the dense layer they change
("encoder.layer.0.attention.self.query"), with ".a" or ".b" appended. Training's half (wrapping the
dense layers in trainable low-rank modules, reading their factors back) lives in
`segmenter.training.adapters`; the training loop in `segmenter.training.tune`; storing the arrays, in
`segmenter.probe.probe`.
"""

from __future__ import annotations

import re

import numpy as np
import torch

from segmenter.encoder.arrays import layers_of
from segmenter.errors import ProbeError

_BLOCK = re.compile(r"encoder\.layer\.(\d+)\.")


@torch.no_grad()
def merge(model: torch.nn.Module, deltas: dict[str, np.ndarray]) -> None:
    """Add B A to the weight of each dense layer named in `deltas`, in the weights' dtype (the encoder
    merges into float32 weights, before any cast). A delta for a block the model does not load
    (`encoder.layer.N` past its last block) changes nothing; any other name the model lacks, a shape
    that does not fit or a product that overflows is a ProbeError. The factors are those
    `segmenter.training.adapters.export` read from a tuned model."""
    try:
        names = layers_of(deltas)
    except ValueError as exc:
        raise ProbeError(f"the probe's encoder deltas are inconsistent ({exc}); retrain it") from exc
    n_blocks = len(model.encoder.layer)
    for name in names:
        block = _BLOCK.match(name)
        if block is not None and int(block.group(1)) >= n_blocks:
            continue  # a block this encoder does not load: its delta cannot matter
        try:
            parent, attribute = _parent(model, name)
        except AttributeError:
            raise ProbeError(
                f"the probe's encoder delta names {name}, which this model lacks; "
                "it was tuned for another backbone"
            ) from None
        linear = getattr(parent, attribute)
        with np.errstate(over="ignore", invalid="ignore"):  # checked below
            product = deltas[f"{name}.b"] @ deltas[f"{name}.a"]  # (out, in)
        if not isinstance(linear, torch.nn.Linear) or tuple(linear.weight.shape) != product.shape:
            raise ProbeError(
                f"the probe's encoder delta for {name} does not fit this model; "
                "it was tuned for another backbone"
            )
        if not np.isfinite(product).all():  # numpy: torch's first isfinite call costs about a second
            raise ProbeError(f"the probe's encoder delta for {name} overflows; retrain it")
        linear.weight += torch.from_numpy(product).to(linear.weight.dtype)


def _parent(model: torch.nn.Module, dotted: str) -> tuple[torch.nn.Module, str]:
    """(module holding the attribute, attribute name) of a dotted path ("encoder.layer.0.output.dense");
    AttributeError if the path does not exist."""
    *path, name = dotted.split(".")
    module = model
    for part in path:
        if part.isdigit():
            if not isinstance(module, torch.nn.ModuleList) or int(part) >= len(module):
                raise AttributeError(dotted)
            module = module[int(part)]
        else:
            module = getattr(module, part)
    if not hasattr(module, name):
        raise AttributeError(dotted)
    return module, name
