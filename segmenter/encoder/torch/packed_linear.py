"""bfloat16 linear layers on a CPU whose weights oneDNN reorders once, when the model loads.

torch runs a bfloat16 `nn.Linear` on a CPU through oneDNN, which first reorders the weight into the
blocked layout its matrix kernels read, on every call. `pack_linears(model)` does that reorder once
(`torch.ops.mkldnn._reorder_linear_weight`, the op torch's own compiler uses for frozen CPU models) and
replaces each linear layer of the model's blocks with a `PackedLinear` that multiplies by the reordered
weight (`torch.ops.mkldnn._linear_pointwise`). The kernels are the same: at one thread the outputs
are the same bit for bit, and at several threads oneDNN may split a product's sum differently for some
row counts, so that an output now and then differs in its last bit, as batching windows differently
already makes it do (tests/test_packed_linear.py). The default reads EWT test 7% faster on one thread
of a CPU with AMX (docs/model-selection.md, "Linear weights reordered once").

Left out: float32 (the reorder gains little there and the int8 graph is the fast path on CPUs without
bfloat16), GPUs, training (the packed op has no backward, so only inference encoders are packed), and models
that `segmenter.encoder.torch.bert` does not build (a transformers module may read its layers' weights).
"""

from __future__ import annotations

import torch
from torch import nn

# The row count oneDNN is told to expect when it picks the weight's layout: a batch of 16 windows of
# 128 tokens, the segmenter's default. Any other row count gives the same results (tests), only the
# layout it runs fastest with may differ.
EXPECTED_ROWS = 16 * 128


def packing_available() -> bool:
    """Whether this torch build can reorder and multiply bfloat16 weights through oneDNN."""
    ops = torch.ops.mkldnn
    return (
        torch.backends.mkldnn.is_available()
        and hasattr(ops, "_reorder_linear_weight")
        and hasattr(ops, "_linear_pointwise")
        and bool(ops._is_mkldnn_bf16_supported())
    )


class PackedLinear(nn.Module):
    """y = x W^T + b for x (..., in) bfloat16, with W (out, in) held in oneDNN's reordered layout."""

    def __init__(self, linear: nn.Linear):
        super().__init__()
        self.in_features = linear.in_features
        self.out_features = linear.out_features
        self.packed_weight = torch.ops.mkldnn._reorder_linear_weight(linear.weight.detach(), EXPECTED_ROWS)
        self.bias = None if linear.bias is None else linear.bias.detach()  # (out,)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (..., in) -> (..., out)
        return torch.ops.mkldnn._linear_pointwise(x, self.packed_weight, self.bias, "none", [], "")

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bfloat16, reordered"


def pack_linears(module: nn.Module) -> int:
    """Replace every bfloat16 `nn.Linear` under `module` (which must be in eval mode, on the CPU) with
    a `PackedLinear`, in place; returns how many were replaced."""
    replaced = 0
    for name, child in list(module.named_children()):
        if isinstance(child, nn.Linear) and child.weight.dtype == torch.bfloat16:
            setattr(module, name, PackedLinear(child))
            replaced += 1
        else:
            replaced += pack_linears(child)
    return replaced
