"""Where each supported encoder architecture keeps its self-attention, and how its attention is read.

BERT-style blocks (BERT, RoBERTa, ELECTRA, MiniLM) keep it at `block.attention.self`, with `query`,
`key` and `value` projections, and the module's output is the per-head context before the output
projection. MPNet keeps it at `block.attention.attn`, with `q`, `k`, `v` and the output projection `o`
inside the same module, and adds a relative position bias (B, H, T, T), computed once per forward by
the encoder, to every layer's scores. So for MPNet the context vectors are the input of `o`, and our
attention kernel, which keeps the probabilities, must add that bias as the model does.

Reading a layer's attention means running it through our kernel (`attend`), which keeps the
probabilities, in place of the model's own (fused SDPA never materialises them). How the kernel gets
in, by model:
- the packaged default and other plain BERT folders run on `segmenter.encoder.torch.bert`, whose
  self-attention has a `reader` slot for exactly this;
- BERT-layout models loaded through transformers dispatch their attention through transformers'
  `AttentionInterface`: `use_reading_attention` registers an attention function that runs our kernel
  in the modules being read and the model's own kernel (SDPA or its eager products, with the same
  masks) everywhere else;
- MPNet's attention does not dispatch through `AttentionInterface` (transformers 5.24 computes it
  inline), so its module's `forward` is replaced while it is read (`mpnet_reading_attention`).
Leaves out: loading, batching, and what is done with the captured tensors.
"""

from __future__ import annotations

import sys
import weakref
from collections.abc import Callable

import torch

MPNET = "mpnet"
# query, key, value (B, H, T, d) -> context vectors (B, T, H*d); keeps the probabilities it computes
Reader = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
# transformers' attention modules being read now, and the reader each runs
_READERS: weakref.WeakKeyDictionary[torch.nn.Module, Reader] = weakref.WeakKeyDictionary()
_READING_PREFIX = "segmenter_reading_"


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


def bert_reader(store: dict, layer: int, bias: torch.Tensor, heads: int, dim: int) -> Reader:
    """The reader of a BERT-layout `layer`: our kernel (`attend`) over the real keys given by `bias`
    (B*H, 1, T), storing the probabilities as (B, H, T, T) under ("p", layer)."""

    def read(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
        batch, _, length, _ = query.shape
        q, k, v = (x.reshape(batch * heads, length, dim) for x in (query, key, value))  # (B*H, T, d)
        probs, context = attend(q, k, v, bias)  # (B*H, T, T), (B*H, T, d)
        store[("p", layer)] = probs.view(batch, heads, length, length)
        return merge_heads(context, batch)

    return read


def use_reading_attention(model) -> bool:
    """Switch a transformers model whose self-attention dispatches through `AttentionInterface` to the
    reading attention function (the model's own kernel until a module is being read, see
    `attach_reader`); False, and nothing changed, for a model that does not dispatch (MPNet)."""
    kernel = getattr(model.config, "_attn_implementation", None)
    blocks = model.encoder.layer
    if kernel not in ("sdpa", "eager") or not blocks or layout(blocks[0]) != "bert":
        return False
    modeling = sys.modules[type(self_attention(blocks[0])).__module__]
    if not hasattr(modeling, "ALL_ATTENTION_FUNCTIONS") or not hasattr(modeling, "eager_attention_forward"):
        return False
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask, sdpa_mask

    name = _READING_PREFIX + kernel
    AttentionInterface.register(name, _reading_attention_function(kernel))
    AttentionMaskInterface.register(name, sdpa_mask if kernel == "sdpa" else eager_mask)  # the same masks
    model.set_attn_implementation(name)
    return True


def _reading_attention_function(kernel: str):
    """An attention function in `AttentionInterface`'s signature: query, key, value (B, H, T, d) ->
    ((B, T, H, d) output, weights or None)."""

    from transformers import AttentionInterface

    sdpa = AttentionInterface._global_mapping["sdpa"]

    def attention(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
        reader = _READERS.get(module)
        if reader is not None:
            return reader(query, key, value), None  # (B, T, H*d): the module reshapes it as (B, T, -1)
        # the model's own kernel: SDPA, or the eager products its modeling module defines
        own = sdpa if kernel == "sdpa" else sys.modules[type(module).__module__].eager_attention_forward
        return own(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout, **kwargs)

    return attention


def attach_reader(attn: torch.nn.Module, reader: Reader) -> Callable[[], None]:
    """Make the self-attention module `attn` run `reader` until the returned function is called."""
    if hasattr(attn, "reader"):  # segmenter.encoder.torch.bert's own self-attention
        attn.reader = reader

        def detach() -> None:
            attn.reader = None

        return detach
    _READERS[attn] = reader
    return lambda: _READERS.pop(attn, None)


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
