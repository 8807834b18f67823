"""Where each supported encoder architecture keeps its self-attention, and how to read MPNet's.

BERT-style blocks (BERT, RoBERTa, ELECTRA, MiniLM) keep it at `block.attention.self`, with `query`,
`key` and `value` projections, and the module's output is the per-head context before the output
projection. MPNet keeps it at `block.attention.attn`, with `q`, `k`, `v` and the output projection `o`
inside the same module, and adds a relative position bias (B, H, T, T), computed once per forward by
the encoder, to every layer's scores. So for MPNet the context vectors are the input of `o`, and our
attention kernel, which keeps the probabilities, must add that bias as the model does.

The BERT kernel lives in `segmenter.encoder`; this module holds what differs. Leaves out: loading,
batching, and what is done with the captured tensors.
"""

from __future__ import annotations

import torch

MPNET = "mpnet"


def layout(block) -> str | None:
    """ "bert" or "mpnet" for a transformer block whose self-attention we can read, else None."""
    attention = getattr(block, "attention", None)
    bert = getattr(attention, "self", None)
    if bert is not None and all(hasattr(bert, n) for n in ("query", "key", "value")):
        return "bert"
    mpnet = getattr(attention, "attn", None)
    if mpnet is not None and all(hasattr(mpnet, n) for n in ("q", "k", "v", "o")):
        return MPNET
    return None


def self_attention(block) -> torch.nn.Module:
    """The block's self-attention module: `attention.self` (BERT layout) or `attention.attn` (MPNet)."""
    return block.attention.attn if layout(block) == MPNET else block.attention.self


def keep_contexts(attn: torch.nn.Module, store: dict, key: tuple[str, int]):
    """Hook `attn` so that each forward stores its per-head context vectors (B, T, H*d), before the
    output projection, under `key`; returns the hook handle."""
    if hasattr(attn, "o"):  # MPNet: the context is what enters the output projection

        def before_output(_module, inputs):
            store[key] = inputs[0]

        return attn.o.register_forward_pre_hook(before_output)

    def after(_module, _inputs, output):  # BERT layout: the module's first output is the context
        store[key] = output[0]

    return attn.register_forward_hook(after)


def split_heads(x: torch.Tensor, heads: int, dim: int) -> torch.Tensor:
    """(B, T, H*d) -> (B*H, T, d)."""
    batch, length, _ = x.shape
    return x.view(batch, length, heads, dim).transpose(1, 2).reshape(batch * heads, length, dim)


def merge_heads(x: torch.Tensor, batch: int) -> torch.Tensor:
    """(B*H, T, d) -> (B, T, H*d), the inverse of `split_heads`."""
    _, length, dim = x.shape
    return x.view(batch, -1, length, dim).transpose(1, 2).reshape(batch, length, -1)


def attend(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor, position_bias=None
) -> tuple[torch.Tensor, torch.Tensor]:
    """(probabilities (B*H, T, T) float32, contexts (B*H, T, d)) of q, k, v (B*H, T, d).

    Scores q k^T / sqrt(d) in the inputs' precision (a bfloat16 product is 4x a float32 one on CPU) plus
    `bias` (B*H, 1, T) (0 for real keys, -inf for padding) and, if given, a position bias (B*H, T, T);
    softmax in float32.
    """
    scores = torch.baddbmm(bias.to(q.dtype), q, k.transpose(1, 2), alpha=q.shape[-1] ** -0.5)
    scores = scores.float()  # (B*H, T, T)
    if position_bias is not None:
        scores = scores + position_bias.float()
    probs = torch.softmax(scores, dim=-1)
    return probs, torch.bmm(probs.to(v.dtype), v)


def mpnet_reading_attention(attn, store: dict, layer: int, bias: torch.Tensor, heads: int, dim: int):
    """A forward for MPNet's self-attention `attn` that also keeps its probabilities.

    The model's own computation up to rounding (`attend`), with the relative position bias (B, H, T, T)
    the encoder passes in, then the output projection. The probabilities are stored as (B, H, T, T)
    under ("p", layer).
    """

    def forward(hidden_states: torch.Tensor, attention_mask=None, position_bias=None, *_args, **_kwargs):
        batch, length, _ = hidden_states.shape
        q, k, v = (split_heads(linear(hidden_states), heads, dim) for linear in (attn.q, attn.k, attn.v))
        if position_bias is not None:  # (B, H, T, T) -> (B*H, T, T)
            position_bias = position_bias.reshape(batch * heads, length, length)
        probs, context = attend(q, k, v, bias, position_bias)
        store[("p", layer)] = probs.view(batch, heads, length, length)
        return (attn.o(merge_heads(context, batch)),)

    return forward
