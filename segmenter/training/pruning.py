"""Choosing which attention heads and feed-forward units of a BERT block to keep: training's half of
narrower blocks.

`importance` measures what each head and unit adds to the block's output on sample text (the norm of its
share of the output, averaged over real tokens: Michel et al. 2019 and Voita et al. 2019 rank heads by
such measures) and `choose` keeps the largest, as ascending index arrays keyed as
`segmenter.encoder.arrays.keep_key` keys them, the form a pruned probe stores.
Leaves out: slicing a model's blocks to the kept heads and units, which inference does too
(`segmenter.encoder.torch.pruning.prune`), and tuning the narrowed blocks (`segmenter.training.tune`).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch

from segmenter.encoder.arrays import keep_key
from segmenter.encoder.torch.pruning import _block_parts


@torch.no_grad()
def importance(
    model: torch.nn.Module, batches: Iterable[tuple[torch.Tensor, torch.Tensor]], blocks: int
) -> dict[str, np.ndarray]:
    """Per block 0..blocks-1, each head's and each feed-forward unit's mean contribution to the block's
    output over the real tokens of `batches` ((B, T) input ids and attention mask each): the norm of
    the head's context vector through its columns of the attention output, and |activation| times the
    norm of the unit's column of the second feed-forward layer. Keys as `keep_key`."""
    sums: dict[str, torch.Tensor] = {}
    tokens = torch.zeros(())
    current_mask: list[torch.Tensor] = []
    hooks = []

    def add(key: str, per_token: torch.Tensor) -> None:  # per_token (B, T, K)
        mask = current_mask[0][..., None].to(per_token.dtype)  # (B, T, 1)
        sums[key] = sums.get(key, 0) + (per_token * mask).sum((0, 1))

    for block in range(blocks):
        attention, attention_out, _, output = _block_parts(model, block)
        size = int(attention.attention_head_size)
        out_by_head = attention_out.weight.float().view(attention_out.out_features, -1, size)  # (D, H, d)
        unit_norms = output.weight.float().norm(dim=0)  # (I,)

        hooks.append(attention.register_forward_hook(_head_hook(add, keep_key(block, "heads"), out_by_head)))
        units_hook = _unit_hook(add, keep_key(block, "units"), unit_norms)
        hooks.append(model.encoder.layer[block].intermediate.register_forward_hook(units_hook))
    try:
        for ids, mask in batches:
            current_mask[:] = [mask]
            tokens = tokens + mask.sum()
            model(input_ids=ids, attention_mask=mask)
    finally:
        for hook in hooks:
            hook.remove()
    return {key: (total / tokens.clamp(min=1)).numpy() for key, total in sums.items()}


def _head_hook(add, key: str, out_by_head: torch.Tensor):
    """Forward hook on a self-attention module: adds each head's contribution norm (B, T, H)."""

    def hook(_module, _inputs, result):
        contexts = result[0].float()  # (B, T, H*d)
        per_head = contexts.view(*contexts.shape[:2], -1, out_by_head.shape[-1])  # (B, T, H, d)
        add(key, torch.einsum("bthd,ehd->bthe", per_head, out_by_head).norm(dim=-1))

    return hook


def _unit_hook(add, key: str, unit_norms: torch.Tensor):
    """Forward hook on a block's first feed-forward layer (its output after GELU, (B, T, I))."""

    def hook(_module, _inputs, result):
        add(key, result.float().abs() * unit_norms)

    return hook


def choose(scores: dict[str, np.ndarray], heads: int | None, units: int | None) -> dict[str, np.ndarray]:
    """Ascending indices of the `heads` highest-scoring heads and `units` units per block (None: keep
    that kind whole, no array); a count above what a block has keeps it whole too."""
    keep = {}
    for key, values in scores.items():
        count = heads if key.endswith(".heads") else units
        if count is None or count >= len(values):
            continue
        order = np.argsort(-values, kind="stable")[:count]
        keep[key] = np.sort(order).astype(np.int64)
    return keep
