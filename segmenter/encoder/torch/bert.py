"""A BERT encoder in plain torch that loads a Hugging Face BERT checkpoint folder without transformers.

Why by hand: loading a BERT through transformers 5 imports its whole modelling stack (torch._dynamo,
torch.distributed.tensor, scipy.optimize through the loss functions, every tokenizer class), which
takes longer than the encoder itself on a short text; `segmenter segment` on a one-line file paid
for it on every run. This module reads `config.json`, `model.safetensors` and `tokenizer.json`
directly (safetensors and tokenizers are the libraries transformers itself uses for them) and builds
the same module tree, with the same parameter names (`embeddings.word_embeddings`,
`encoder.layer.N.attention.self.query`, ...) and the same operations in the same order as
transformers' `BertModel` in eval and train mode, attention "sdpa" or "eager" with the masks
transformers builds; tests check the outputs equal transformers' bit for bit.

`load_bert(folder, attention)` returns (model, special token ids, fast tokenizer) for a folder this
module can read exactly (a plain absolute-position BERT with erf GELU, weights in safetensors, a
tokenizer.json), else None, and the caller loads through transformers instead. Leaves out: pooler,
heads, decoders and caches, other architectures.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

_REQUIRED_FILES = ("config.json", "model.safetensors", "tokenizer.json")
SPECIAL_TOKENS = ("cls_token", "sep_token", "pad_token", "unk_token")  # as tokenizers name them


@dataclass(frozen=True)
class BertConfig:
    """The fields of a BERT `config.json` that the forward pass reads (names as transformers spells them)."""

    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    max_position_embeddings: int
    type_vocab_size: int
    layer_norm_eps: float
    hidden_dropout_prob: float
    attention_probs_dropout_prob: float
    pad_token_id: int
    model_type: str = "bert"


class _Config:
    """Mutable view of a `BertConfig` with the attributes callers read on a transformers config."""

    def __init__(self, config: BertConfig):
        self.__dict__.update(config.__dict__)


def _readable(raw: dict) -> BertConfig | None:
    """The config when this module computes that model exactly as transformers would, else None."""
    plain = (
        raw.get("model_type") == "bert"
        and raw.get("hidden_act", "gelu") == "gelu"
        and raw.get("position_embedding_type", "absolute") == "absolute"
        and not raw.get("is_decoder", False)
        and not raw.get("add_cross_attention", False)
        and not raw.get("chunk_size_feed_forward", 0)
    )
    if not plain:
        return None
    try:
        return BertConfig(
            vocab_size=int(raw["vocab_size"]),
            hidden_size=int(raw["hidden_size"]),
            num_hidden_layers=int(raw["num_hidden_layers"]),
            num_attention_heads=int(raw["num_attention_heads"]),
            intermediate_size=int(raw["intermediate_size"]),
            max_position_embeddings=int(raw.get("max_position_embeddings", 512)),
            type_vocab_size=int(raw.get("type_vocab_size", 2)),
            layer_norm_eps=float(raw.get("layer_norm_eps", 1e-12)),
            hidden_dropout_prob=float(raw.get("hidden_dropout_prob", 0.1)),
            attention_probs_dropout_prob=float(raw.get("attention_probs_dropout_prob", 0.1)),
            pad_token_id=int(raw.get("pad_token_id") or 0),
        )
    except (KeyError, TypeError, ValueError):
        return None


class _Linear(nn.Linear):
    """nn.Linear whose weights are left uninitialised: every one is assigned from the checkpoint, and
    random initialisation cost more than the rest of loading (the meta device costs as much again)."""

    def reset_parameters(self) -> None:
        pass


class _Embedding(nn.Embedding):
    """nn.Embedding left uninitialised, like `_Linear`."""

    def reset_parameters(self) -> None:
        pass


class BertEmbeddings(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.word_embeddings = _Embedding(
            config.vocab_size, config.hidden_size, padding_idx=config.pad_token_id
        )
        self.position_embeddings = _Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = _Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:  # (B, T) -> (B, T, D)
        batch, length = input_ids.shape
        positions = torch.arange(length, device=input_ids.device)[None, :]  # (1, T)
        token_types = torch.zeros((batch, length), dtype=torch.long, device=input_ids.device)
        embeddings = self.word_embeddings(input_ids) + self.token_type_embeddings(token_types)
        embeddings = embeddings + self.position_embeddings(positions)
        return self.dropout(self.LayerNorm(embeddings))


class BertSelfAttention(nn.Module):
    """softmax(Q K^T / sqrt(d) + mask) V per head, by SDPA or by plain products (`attention`), or by
    `reader` when one is set: a callable (query, key, value (B, H, T, d)) -> contexts (B, T, H*d),
    which `segmenter.encoder.torch.encoder` sets while it reads this layer's attention probabilities."""

    def __init__(self, config: BertConfig, attention: str):
        super().__init__()
        self.num_attention_heads = config.num_attention_heads
        self.attention_head_size = config.hidden_size // config.num_attention_heads
        self.scaling = self.attention_head_size**-0.5
        self.attention = attention
        all_heads = self.num_attention_heads * self.attention_head_size
        self.query = _Linear(config.hidden_size, all_heads)
        self.key = _Linear(config.hidden_size, all_heads)
        self.value = _Linear(config.hidden_size, all_heads)
        self.dropout = nn.Dropout(config.attention_probs_dropout_prob)
        self.reader = None

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None = None):
        """hidden_states (B, T, D); attention_mask (B, 1, T, T) as `attention_masks` builds it, or None
        when no key is padding. Returns ((B, T, H*d) context vectors, None)."""
        batch, length, _ = hidden_states.shape
        shape = (batch, length, -1, self.attention_head_size)
        query = self.query(hidden_states).view(*shape).transpose(1, 2)  # (B, H, T, d)
        key = self.key(hidden_states).view(*shape).transpose(1, 2)
        value = self.value(hidden_states).view(*shape).transpose(1, 2)
        if self.reader is not None:
            return self.reader(query, key, value), None
        dropout = self.dropout.p if self.training else 0.0
        if self.attention == "sdpa":
            context = nn.functional.scaled_dot_product_attention(
                query, key, value, attn_mask=attention_mask, dropout_p=dropout, scale=self.scaling
            )
        else:
            weights = torch.matmul(query, key.transpose(2, 3)) * self.scaling  # (B, H, T, T)
            if attention_mask is not None:
                weights = weights + attention_mask
            weights = nn.functional.softmax(weights, dim=-1)
            weights = nn.functional.dropout(weights, p=dropout, training=self.training)
            context = torch.matmul(weights, value)
        context = context.transpose(1, 2).contiguous()  # (B, T, H, d)
        return context.reshape(batch, length, -1).contiguous(), None


class BertSelfOutput(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = _Linear(config.hidden_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(self, hidden_states: torch.Tensor, input_tensor: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(self.dropout(self.dense(hidden_states)) + input_tensor)


class BertAttention(nn.Module):
    def __init__(self, config: BertConfig, attention: str):
        super().__init__()
        self.self = BertSelfAttention(config, attention)
        self.output = BertSelfOutput(config)

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None) -> torch.Tensor:
        context = self.self(hidden_states, attention_mask)[0]
        return self.output(context, hidden_states)


class BertIntermediate(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = _Linear(config.hidden_size, config.intermediate_size)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        return nn.functional.gelu(self.dense(hidden_states))


class BertOutput(BertSelfOutput):
    def __init__(self, config: BertConfig):
        nn.Module.__init__(self)
        self.dense = _Linear(config.intermediate_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)


class BertLayer(nn.Module):
    def __init__(self, config: BertConfig, attention: str):
        super().__init__()
        self.attention = BertAttention(config, attention)
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None) -> torch.Tensor:
        attended = self.attention(hidden_states, attention_mask)
        return self.output(self.intermediate(attended), attended)


class BertEncoderStack(nn.Module):
    def __init__(self, config: BertConfig, attention: str):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(config, attention) for _ in range(config.num_hidden_layers))


@dataclass(frozen=True)
class BertModelOutput:
    last_hidden_state: torch.Tensor  # (B, T, D)


class BertModel(nn.Module):
    """Embeddings and the blocks in `encoder.layer`; `forward` returns the last block's output."""

    def __init__(self, config: BertConfig, attention: str = "sdpa"):
        super().__init__()
        self.config = _Config(config)
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoderStack(config, attention)
        self.set_attn_implementation(attention)

    @property
    def dtype(self) -> torch.dtype:
        return self.embeddings.word_embeddings.weight.dtype

    def set_attn_implementation(self, attention: str) -> None:
        """Run every block's attention as "sdpa" or "eager" (transformers' method of the same name)."""
        if attention not in ("sdpa", "eager"):
            raise ValueError(f"attention implementation {attention!r}: use sdpa or eager")
        self.attention = attention
        self.config._attn_implementation = attention
        for block in self.encoder.layer:
            block.attention.self.attention = attention

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> BertModelOutput:
        """input_ids, attention_mask: (B, T) -> the last block's output (B, T, D)."""
        hidden = self.embeddings(input_ids)
        mask = attention_masks(attention_mask, hidden.dtype, self.attention)
        for block in self.encoder.layer:
            hidden = block(hidden, mask)
        return BertModelOutput(last_hidden_state=hidden)


def attention_masks(mask: torch.Tensor, dtype: torch.dtype, attention: str) -> torch.Tensor | None:
    """The mask transformers hands its attention for `mask` (B, T): None when nothing is padding;
    else (B, 1, T, T), True for real keys (sdpa) or 0 / the dtype's minimum added to scores (eager)."""
    if bool(mask.all()):
        return None
    batch, length = mask.shape
    keys = mask.bool()[:, None, None, :].expand(batch, 1, length, length).contiguous()  # (B, 1, T, T)
    if attention == "sdpa":
        return keys
    additive = torch.zeros((batch, 1, length, length), dtype=dtype, device=mask.device)
    return additive.masked_fill_(~keys, torch.finfo(dtype).min)


def load_bert(folder: Path, attention: str):
    """(model, special token ids, tokenizers.Tokenizer) for a checkpoint folder this module computes
    exactly (see the module docstring), float32 weights as stored; None for any other folder."""
    if not all((folder / name).is_file() for name in _REQUIRED_FILES):
        return None
    try:
        config = _readable(json.loads((folder / "config.json").read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None
    special = _special_tokens(folder)
    if config is None or special is None:
        return None
    from safetensors.torch import load_file
    from tokenizers import Tokenizer

    state = load_file(str(folder / "model.safetensors"))
    state = {name.removeprefix("bert."): tensor for name, tensor in state.items()}
    model = BertModel(config, attention)
    expected = set(model.state_dict())
    if not expected <= set(state):
        return None  # a layout we do not know: transformers will say what is wrong with it
    model.load_state_dict({name: state[name] for name in expected}, assign=True)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    ids = {name: tokenizer.token_to_id(token) for name, token in special.items()}
    if ids["cls_token"] is None or ids["sep_token"] is None:
        return None
    return model.eval(), ids, tokenizer


def _special_tokens(folder: Path) -> dict[str, str] | None:
    """Special token strings from tokenizer_config.json / special_tokens_map.json (BERT's by default)."""
    tokens = {"cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]"}
    for name in ("special_tokens_map.json", "tokenizer_config.json"):
        path = folder / name
        if not path.is_file():
            continue
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        for key in SPECIAL_TOKENS:
            value = raw.get(key)
            if isinstance(value, dict):
                value = value.get("content")
            if isinstance(value, str):
                tokens[key] = value
    return tokens
