"""Training's half of the low-rank weight deltas (LoRA) of a BERT-family encoder: attach, export.

`attach` freezes a model and wraps the dense layers (`DENSE`) of its blocks 1..K in trainable
`LowRankLinear` modules, W' = W + B A with A (r, in) and B (out, r); B starts at zero, so training
starts from the pretrained encoder. `export` reads the factors back as float32 arrays named after the
dense layer they change ("encoder.layer.0.attention.self.query"), with ".a" or ".b" appended, the
arrays a tuned probe stores.
Leaves out: merging the factors into a loaded model's weights, which inference does
(`segmenter.encoder.torch.adapter.merge`), and the training loop (`segmenter.training.tune`).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from segmenter.encoder.torch.adapter import _parent

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
