"""Low-rank weight deltas for the first blocks of a BERT-family encoder (LoRA): train, export, merge.

A tuned probe carries the encoder changes it was trained with as pairs of factors per dense layer:
W' = W + B A, with A (r, in) and B (out, r). `attach` wraps the dense layers of blocks 1..K in
trainable `LowRankLinear` modules (B starts at zero, so training starts from the pretrained encoder);
`export` reads the factors back as float32 arrays; `merge` adds them to a freshly loaded model's
weights, so inference pays nothing for them. Arrays are named after the dense layer they change
("encoder.layer.0.attention.self.query"), with ".a" or ".b" appended. The training loop lives in
`segmenter.tune`; storing the arrays, in `segmenter.probe`.
"""

from __future__ import annotations

import math
import re

import numpy as np
import torch

from segmenter.errors import ProbeError
from segmenter.probe_arrays import layers_of

_BLOCK = re.compile(r"encoder\.layer\.(\d+)\.")
# The dense layers of a BERT block that get a low-rank delta: Q, K, V, attention output, feed-forward.
DENSE = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)


class LowRankLinear(torch.nn.Module):
    """`base(x) + x A^T B^T`: a frozen linear layer plus a trainable rank-r delta."""

    def __init__(self, base: torch.nn.Linear, rank: int, generator: torch.Generator):
        super().__init__()
        self.base = base
        self.a = torch.nn.Parameter(
            torch.randn(rank, base.in_features, generator=generator) / math.sqrt(base.in_features)
        )  # (r, in)
        self.b = torch.nn.Parameter(torch.zeros(base.out_features, rank))  # (out, r)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + (x @ self.a.t()) @ self.b.t()


def attach(model: torch.nn.Module, n_blocks: int, rank: int, seed: int = 0) -> list[torch.nn.Parameter]:
    """Freeze `model` and wrap the `DENSE` layers of its first `n_blocks` blocks in `LowRankLinear`;
    returns the new trainable parameters."""
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    generator = torch.Generator().manual_seed(seed)
    trainable = []
    for index in range(n_blocks):
        for path in DENSE:
            parent, name = _parent(model, f"encoder.layer.{index}.{path}")
            wrapped = LowRankLinear(getattr(parent, name), rank, generator)
            setattr(parent, name, wrapped)
            trainable += [wrapped.a, wrapped.b]
    return trainable


def export(model: torch.nn.Module) -> dict[str, np.ndarray]:
    """The factors of every `LowRankLinear` in `model` as float32 arrays, keyed "<layer>.a" / "<layer>.b"."""
    deltas = {}
    for name, module in model.named_modules():
        if isinstance(module, LowRankLinear):
            deltas[f"{name}.a"] = module.a.detach().float().cpu().numpy().copy()
            deltas[f"{name}.b"] = module.b.detach().float().cpu().numpy().copy()
    return deltas


@torch.no_grad()
def merge(model: torch.nn.Module, deltas: dict[str, np.ndarray]) -> None:
    """Add B A to the weight of each dense layer named in `deltas`, in the weights' dtype (the encoder
    merges into float32 weights, before any cast). A delta for a block the model does not load
    (`encoder.layer.N` past its last block) changes nothing; any other name the model lacks, a shape
    that does not fit or a product that overflows is a ProbeError."""
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
