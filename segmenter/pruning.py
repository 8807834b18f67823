"""Narrower blocks: keep some attention heads and feed-forward units of a BERT block, drop the rest.

A pruned probe carries, per pruned block N, the heads it keeps ("encoder.layer.N.heads") and the
feed-forward units it keeps ("encoder.layer.N.units"), as ascending index arrays. `prune` slices the
block's dense layers to them in place (query, key and value rows and the attention output's columns of
the kept heads; the first feed-forward layer's rows and the second's columns of the kept units), so a
block keeping half its heads and units costs about half the products. `importance` measures what each
head and unit adds to the block's output on sample text (the norm of its share of the output, averaged
over real tokens: Michel et al. 2019 and Voita et al. 2019 rank heads by such measures) and `choose`
keeps the largest. Tuning then adapts the narrowed blocks (`segmenter.tune`); merging a probe's deltas
into pruned layers is `segmenter.adapter.merge`, after `prune`.
Leaves out: pruning the residual width (the probe reads block outputs of the full width) and
architectures without BERT's module layout (`encoder.layer.N.attention.self.query`, ...).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import torch

from segmenter.errors import ProbeError
from segmenter.probe_arrays import KEEP_KEY, check_keep, keep_key

__all__ = ["check_keep", "choose", "importance", "keep_key", "prune"]


def _block_parts(model: torch.nn.Module, block: int):
    """(self-attention, attention output dense, intermediate dense, output dense) of block `block`."""
    layer = model.encoder.layer[block]
    try:
        return (
            layer.attention.self,
            layer.attention.output.dense,
            layer.intermediate.dense,
            layer.output.dense,
        )
    except AttributeError:
        raise ProbeError(
            "the probe prunes blocks, which needs a BERT block layout; this model has another"
        ) from None


@torch.no_grad()
def prune(model: torch.nn.Module, keep: dict[str, np.ndarray]) -> None:
    """Slice the blocks named in `keep` (`check_keep`'s form) to their kept heads and units, in place.
    A block the model does not load is skipped (like `merge`); an index past a block's heads or units
    is a ProbeError."""
    n_blocks = len(model.encoder.layer)
    for name, indices in keep.items():
        block, kind = KEEP_KEY.fullmatch(name).groups()
        if int(block) >= n_blocks:
            continue
        attention, attention_out, intermediate, output = _block_parts(model, int(block))
        if kind == "heads":
            size = int(attention.attention_head_size)
            heads = attention.query.out_features // size
            if indices[-1] >= heads:
                raise ProbeError(f"the probe keeps head {indices[-1]} of block {block}, which has {heads}")
            rows = (indices[:, None] * size + np.arange(size)).reshape(-1)  # (kept * d,)
            for linear in (attention.query, attention.key, attention.value):
                _keep_rows(linear, rows)
            _keep_columns(attention_out, rows)
            for attribute, value in (("num_attention_heads", len(indices)), ("all_head_size", len(rows))):
                if hasattr(attention, attribute):  # transformers' modules reshape by them
                    setattr(attention, attribute, value)
        else:
            units = intermediate.out_features
            if indices[-1] >= units:
                raise ProbeError(f"the probe keeps unit {indices[-1]} of block {block}, which has {units}")
            _keep_rows(intermediate, indices)
            _keep_columns(output, indices)


def _keep_rows(linear: torch.nn.Linear, rows: np.ndarray) -> None:
    index = torch.from_numpy(rows)
    linear.weight = torch.nn.Parameter(linear.weight[index].clone(), requires_grad=False)  # (kept, in)
    if linear.bias is not None:
        linear.bias = torch.nn.Parameter(linear.bias[index].clone(), requires_grad=False)
    linear.out_features = len(rows)


def _keep_columns(linear: torch.nn.Linear, columns: np.ndarray) -> None:
    index = torch.from_numpy(columns)
    linear.weight = torch.nn.Parameter(linear.weight[:, index].clone(), requires_grad=False)  # (out, kept)
    linear.in_features = len(columns)


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
