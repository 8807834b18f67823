"""Narrower blocks: keep some attention heads and feed-forward units of a BERT block, drop the rest.

A pruned probe carries, per pruned block N, the heads it keeps ("encoder.layer.N.heads") and the
feed-forward units it keeps ("encoder.layer.N.units"), as ascending index arrays. `prune` slices the
block's dense layers to them in place (query, key and value rows and the attention output's columns of
the kept heads; the first feed-forward layer's rows and the second's columns of the kept units), so a
block keeping half its heads and units costs about half the products. Choosing what to keep (measuring
what each head and unit adds to the block's output on sample text, keeping the largest) is training's:
`segmenter.training.pruning`. Tuning then adapts the narrowed blocks (`segmenter.training.tune`);
merging a probe's deltas into pruned layers is `segmenter.encoder.torch.adapter.merge`, after `prune`.
Leaves out: pruning the residual width (the probe reads block outputs of the full width) and
architectures without BERT's module layout (`encoder.layer.N.attention.self.query`, ...).
"""

from __future__ import annotations

import numpy as np
import torch

from segmenter.encoder.arrays import KEEP_KEY, check_keep, keep_key
from segmenter.errors import ProbeError

__all__ = ["check_keep", "keep_key", "prune"]


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
