"""Load a BERT-family encoder offline and read its heads: per-head context vectors and attention.

`Encoder` owns the tokenizer and the model. It tokenizes text with character offsets, and runs batches
of windows through the first `max_layer` transformer blocks only (later blocks are dropped), capturing
for the layers asked for:

- contexts:   each head's context vector softmax(QK^T/sqrt(d))V, before the output projection
- attentions: the attention probabilities themselves: in the layers where they are read, the
              self-attention runs our own kernel, which keeps them (scores in the encoder's
              precision, softmax in float32); the other layers run the model's own attention, fused
              SDPA or plain products (`segmenter.encoder.backend.Backend.attention`)
- summaries:  three columns of those probabilities per head, reduced in torch without leaving the
              batch (attention each token receives, attention it sends to [CLS] and to the final
              [SEP]); what inference reads, at a fraction of the memory traffic of full matrices

Weights and activations are float32 or bfloat16 (`precision`; "auto" takes bfloat16 where the hardware
computes it natively); with "int8" the blocks run as an int8 ONNX Runtime graph
(`segmenter.encoder.onnx.export`) that returns block outputs only. Everything handed back is float32 numpy.
Tokenizing (with character offsets into the caller's text) is `segmenter.text.tokens`'s; where a named
backbone's files are, `segmenter.encoder.backbones`'. A cached int8 encoder runs without torch
(`segmenter.encoder.onnx.compiled`). This module knows nothing about sentences, windows or features.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import torch

from segmenter.encoder.backbones import DEFAULT_MODEL_NAME, locate, packaged_model_path
from segmenter.encoder.backend import choose_backend
from segmenter.encoder.onnx.runtime import refuse_inside_reads
from segmenter.encoder.torch import attention as attention_modules
from segmenter.encoder.torch.adapter import merge
from segmenter.encoder.torch.bert import SPECIAL_TOKENS, BertModel
from segmenter.encoder.torch.packed_linear import pack_linears
from segmenter.encoder.torch.pruning import prune
from segmenter.errors import ConfigError, ModelNotFoundError, UnsupportedModelError
from segmenter.text.tokens import Capture, Tokens, joins, tokenize, wanted_layers

__all__ = ["DEFAULT_MODEL_NAME", "Capture", "Encoder", "Tokens", "packaged_model_path"]


@dataclass
class _Loaded:
    """What `_load` found: the model, its fast tokenizer (tokenizers.Tokenizer), the special token ids,
    and the transformers tokenizer when it was loaded (None on the direct path)."""

    model: torch.nn.Module
    backend: object
    special_ids: dict[str, int | None]
    name: str
    source: str
    offline: bool
    tokenizer: object | None = None


def _load(model: str | None, attention: str) -> _Loaded:
    """Load the packaged default, a local path or a hub id; attention: the model's attention implementation
    (`segmenter.encoder.backend.Backend.attention`). A local plain BERT folder loads directly
    (`segmenter.encoder.torch.bert`, no transformers import); anything else through transformers' Auto
    classes."""
    name, source = locate(model)
    local = model is None or Path(source).exists()
    if local and Path(source).is_dir():
        from segmenter.encoder.torch.bert import load_bert

        try:
            direct = load_bert(Path(source), attention)
        except Exception as exc:  # a broken safetensors or tokenizer.json file
            raise UnsupportedModelError(
                f"{model!r} is not a loadable Hugging Face encoder ({_first_line(exc)}); "
                "pass a folder with config.json, weights and a tokenizer"
            ) from exc
        if direct is not None:
            encoder, special_ids, backend = direct
            return _Loaded(encoder, backend, special_ids, name, source, offline=True)
    return _load_with_transformers(model, source, name, local, attention)


def _load_with_transformers(
    model: str | None, source: str, name: str, local: bool, attention: str
) -> _Loaded:
    from huggingface_hub.utils import logging as hub_logging
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    why_local = "" if local else _why_no_download()  # non-empty: look in the local cache only
    verbosity, hub_verbosity = hf_logging.get_verbosity(), hub_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    hub_logging.set_verbosity_error()  # the hub's retry warnings would bury our one-line error
    hf_logging.disable_progress_bar()
    offline = local or bool(why_local)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=offline)
        # "sdpa" is asked for as the default (None): SDPA where the architecture has it, else eager (MPNet)
        implementation = None if attention == "sdpa" else attention
        encoder = AutoModel.from_pretrained(
            source, local_files_only=offline, attn_implementation=implementation
        )
    except Exception as exc:  # a broken local folder raises anything: TypeError, SafetensorError, ...
        if Path(source).exists():
            raise UnsupportedModelError(
                f"{model!r} is not a loadable Hugging Face encoder ({_first_line(exc)}); "
                "pass a folder with config.json, weights and a tokenizer"
            ) from exc
        if not isinstance(exc, (OSError, ValueError, KeyError)):
            raise
        where = f"locally and {why_local}" if why_local else "locally or on the Hugging Face hub"
        raise ModelNotFoundError(
            f"model {model!r} was not found {where}; pass a local path to a BERT-family model"
        ) from exc
    finally:
        hf_logging.set_verbosity(verbosity)
        hub_logging.set_verbosity(hub_verbosity)
        hf_logging.enable_progress_bar()
    if not getattr(tokenizer, "is_fast", False):
        raise UnsupportedModelError(
            f"{name!r} has no fast tokenizer; character offsets need a tokenizers-backed model"
        )
    special_ids = {key: getattr(tokenizer, f"{key}_id") for key in SPECIAL_TOKENS}
    return _Loaded(encoder, tokenizer.backend_tokenizer, special_ids, name, source, offline, tokenizer)


def _why_no_download() -> str:
    """Why a model missing from the local cache cannot be downloaded now ("" when it may be): downloads
    are disabled, or (without a proxy) the hub's host does not resolve. Checked first because without a
    network the hub client retries for most of a minute before giving up."""
    for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if os.environ.get(variable, "").strip().upper() in {"1", "ON", "YES", "TRUE"}:
            return f"downloads are disabled ({variable} is set)"
    if any(
        os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY")
    ):
        return ""  # a proxy resolves the host for us: let the hub client try
    host = urlparse(os.environ.get("HF_ENDPOINT") or "https://huggingface.co").hostname or "huggingface.co"
    try:
        socket.getaddrinfo(host, 443)
    except OSError:
        return f"{host} cannot be reached"
    return ""


def resolve_device(device: str) -> torch.device:
    """torch.device for `device`, or a ConfigError if it is malformed or not available here."""
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ConfigError(f"unknown device {device!r}; use cpu, cuda, cuda:N or mps") from exc
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"device {device!r} requested but no CUDA GPU is available; use --device cpu")
    if resolved.type == "cuda" and resolved.index is not None and resolved.index >= torch.cuda.device_count():
        count = torch.cuda.device_count()
        raise ConfigError(
            f"device {device!r} requested but this machine has {count} CUDA GPU{'s' * (count != 1)} "
            f"(cuda:0 to cuda:{count - 1})"
        )
    if resolved.type == "mps" and not torch.backends.mps.is_available():
        raise ConfigError(f"device {device!r} requested but MPS is not available; use --device cpu")
    return resolved


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _blocks(model) -> list:
    """The model's transformer blocks, if it has the BERT layout we read; else a clear error."""
    blocks = getattr(getattr(model, "encoder", None), "layer", None)
    if blocks is None or len(blocks) == 0:
        raise UnsupportedModelError(
            f"{type(model).__name__} is not a BERT-family encoder (no encoder.layer blocks); "
            "use a BERT, RoBERTa, ELECTRA or MiniLM style model"
        )
    for block in blocks:
        if attention_modules.layout(block) is None:
            raise UnsupportedModelError(
                f"{type(model).__name__} blocks have no attention.self.query/key/value (nor MPNet's "
                "attention.attn.q/k/v/o); use a BERT-family or MPNet encoder"
            )
    return list(blocks)


class Encoder:
    """A BERT-family encoder that exposes its heads.

    >>> enc = Encoder()                      # packaged all-MiniLM-L6-v2, offline
    >>> toks = enc.tokenize("Hello there. Bye.")
    >>> enc.n_layers, enc.n_heads, enc.head_dim
    (6, 12, 32)
    """

    def __init__(
        self,
        model: str | None = None,
        device: str = "cpu",
        max_layer: int | None = None,
        precision: str = "auto",
        deltas: dict[str, np.ndarray] | None = None,
        pruning: dict[str, np.ndarray] | None = None,
    ):
        """deltas: low-rank weight deltas of a tuned probe (`segmenter.encoder.torch.adapter`), merged into
        the weights of the blocks kept before they are cast to `precision`. pruning: the heads and units a
        tuned probe's narrowed blocks keep (`segmenter.encoder.torch.pruning`), applied before the deltas."""
        resolved_device = resolve_device(device)
        self.backend = choose_backend(precision, resolved_device)  # runtime, precision, kernels: once
        self.precision = self.backend.precision
        loaded = _load(model, self.backend.attention)
        encoder, name = loaded.model, loaded.name
        blocks = _blocks(encoder)
        self.name = name
        self.n_layers = len(blocks)
        self.n_heads = int(encoder.config.num_attention_heads)
        self.hidden_size = int(encoder.config.hidden_size)
        self.head_dim = self.hidden_size // self.n_heads
        self.max_positions = int(getattr(encoder.config, "max_position_embeddings", 512))
        if encoder.config.model_type in ("roberta", "xlm-roberta", "camembert", "mpnet"):
            self.max_positions -= 2  # their positions start after the padding index
        keep = self.n_layers if max_layer is None else max_layer
        if not 1 <= keep <= self.n_layers:
            raise UnsupportedModelError(f"{name!r} has {self.n_layers} layers; layer {keep} does not exist")
        encoder.encoder.layer = torch.nn.ModuleList(blocks[:keep])
        encoder.config.num_hidden_layers = keep
        if hasattr(encoder, "pooler"):
            encoder.pooler = None
        if pruning:
            prune(encoder, pruning)
        if deltas:
            encoder = encoder.float()  # a half-precision checkpoint would round the deltas away
            merge(encoder, deltas)
        self.loaded_layers = keep
        self.device = resolved_device
        dtype = torch.bfloat16 if self.precision == "bfloat16" else torch.float32
        self.model = encoder.to(self.device, dtype=dtype).eval()
        if self.backend.packed and isinstance(self.model, BertModel):  # no layer reads its weights
            pack_linears(
                self.model.encoder
            )  # the same outputs, faster products (segmenter.encoder.torch.packed_linear)
        # a transformers model reads attention through a registered attention function
        # (segmenter.encoder.torch.bert has its own slot for it; MPNet has neither, see
        # segmenter.encoder.torch.attention)
        self._dispatches_attention = not hasattr(
            attention_modules.self_attention(blocks[0]), "reader"
        ) and attention_modules.use_reading_attention(self.model)
        self._loaded = loaded
        self._backend = loaded.backend
        self._backend.no_truncation()
        self._backend.no_padding()
        special = loaded.special_ids
        if special["cls_token"] is None or special["sep_token"] is None:
            raise UnsupportedModelError(
                f"{name!r} has a tokenizer without [CLS]/[SEP] tokens; use a BERT-family encoder"
            )
        self.cls_id = int(special["cls_token"])
        self.sep_id = int(special["sep_token"])
        self.pad_id = int(special["pad_token"] or 0)
        self.unk_id = special["unk_token"]
        self._int8 = self._int8_blocks() if self.precision == "int8" else None

    def _int8_blocks(self):
        """The blocks as an int8 graph (`segmenter.encoder.onnx.export`): for the plain BERT layout of
        `segmenter.encoder.torch.bert`."""
        from segmenter.encoder.onnx.export import CALIBRATION_TEXT, Int8Blocks
        from segmenter.encoder.torch.bert import BertModel

        if not isinstance(self.model, BertModel):
            raise ConfigError(
                f"precision 'int8' needs a plain BERT-layout model; {self.name!r} is not one: "
                "use --precision auto"
            )
        ids = self.tokenize(CALIBRATION_TEXT.read_text(encoding="utf-8")).ids
        width = min(126, self.max_positions - 2)
        rows = [ids[start : start + width] for start in range(0, len(ids), width)]
        input_ids = np.full((len(rows), width + 2), self.pad_id, dtype=np.int64)
        mask = np.zeros_like(input_ids)
        for row, chunk in enumerate(rows):
            input_ids[row, : len(chunk) + 2] = [self.cls_id, *chunk, self.sep_id]
            mask[row, : len(chunk) + 2] = 1
        return Int8Blocks(self.model, [(torch.from_numpy(input_ids), torch.from_numpy(mask))])

    @property
    def source(self) -> str:
        """The folder (or hub id) the model came from."""
        return self._loaded.source

    @property
    def int8_graph_key(self) -> str | None:
        """The cache key of the int8 graph this encoder runs (`segmenter.encoder.onnx.runtime.graph_path`), or
        None at a float precision."""
        return None if self._int8 is None else self._int8.key

    @functools.cached_property
    def tokenizer(self):
        """The transformers tokenizer of the model (token strings for the analysis), loaded on first use:
        segmentation needs only the fast tokenizer it already holds."""
        if self._loaded.tokenizer is None:
            from transformers import AutoTokenizer

            self._loaded.tokenizer = AutoTokenizer.from_pretrained(self._loaded.source, local_files_only=True)
        return self._loaded.tokenizer

    def tokenize(self, text: str) -> Tokens:
        """Tokenize `text` without special tokens; offsets index into `text` itself (the surface flags a
        probe reads are added by `segmenter.text.surface.with_surface`)."""
        return tokenize(self._backend, text)

    def joins(self, left: str, right: str) -> bool:
        """Whether the tokenizer reads the characters `left` and `right`, side by side, as one word
        (`segmenter.text.tokens.joins`)."""
        return joins(self._backend, left, right)

    @torch.inference_mode()
    def forward(
        self,
        input_ids: np.ndarray,
        attention_mask: np.ndarray,
        layers: tuple[int, ...],
        attention_layers: tuple[int, ...] = (),
        contexts: bool = True,
        hidden: bool = False,
        summary_layers: tuple[int, ...] = (),
    ) -> Capture:
        """Run a batch through the needed blocks and capture the requested layers.

        input_ids, attention_mask: (B, T) arrays with [CLS]/[SEP] already in place.
        layers: 1-based layers whose context vectors are returned (ascending).
        attention_layers: 1-based layers whose attention probabilities are returned (subset of `layers`).
        summary_layers: 1-based layers whose attention summaries (see `Capture`) are returned.
        contexts / hidden: whether to return per-head context vectors / block outputs of `layers`.
        """
        wanted = wanted_layers(self.name, self.loaded_layers, layers, attention_layers, summary_layers)
        if self._int8 is not None:
            refuse_inside_reads(layers, attention_layers, contexts, summary_layers)
            return self._int8.session.capture(input_ids, attention_mask, layers, hidden)
        ids = torch.as_tensor(input_ids, dtype=torch.long, device=self.device)
        mask = torch.as_tensor(attention_mask, dtype=torch.long, device=self.device)
        batch, length = ids.shape
        store: dict[tuple[str, int], torch.Tensor] = {}
        hooks = []
        blocks = self.model.encoder.layer
        read = set(attention_layers) | set(summary_layers)
        for layer in wanted:
            attn = attention_modules.self_attention(blocks[layer - 1])
            if contexts and layer in layers:
                hooks.append(attention_modules.keep_contexts(attn, store, ("ctx", layer)))
            if hidden and layer in layers:
                hooks.append(
                    blocks[layer - 1].register_forward_hook(_keep(store, ("hid", layer), first=None))
                )
        # Layers whose attention is read compute it once, in our own attention kernel (which keeps the
        # probabilities); the others run the model's own (`Backend.attention`).
        bias = key_bias(mask, self.n_heads) if read else None  # (B*H, 1, T)
        detach = [self._attach_reader(blocks[layer - 1], store, layer, bias) for layer in sorted(read)]
        # Blocks after the last wanted one need not run at all.
        saved = self.model.encoder.layer
        self.model.encoder.layer = torch.nn.ModuleList(list(saved)[: wanted[-1]])
        try:
            self.model(input_ids=ids, attention_mask=mask)
        finally:
            self.model.encoder.layer = saved
            for hook in hooks:
                hook.remove()
            for undo in detach:
                undo()

        ctx = None
        if contexts and layers:
            # (L, B, T, H*d) -> (L, B, T, H, d)
            ctx = torch.stack([store[("ctx", layer)] for layer in layers])
            ctx = ctx.reshape(len(layers), batch, length, self.n_heads, self.head_dim).float().cpu().numpy()
        att = None
        if attention_layers:
            att = (
                torch.stack([store[("p", layer)] for layer in attention_layers]).cpu().numpy()
            )  # (L, B, H, T, T)
        summaries = None
        if summary_layers:
            summaries = (
                torch.stack([attention_summary(store[("p", layer)], mask) for layer in summary_layers])
                .cpu()
                .numpy()
            )  # (L, B, 3, H, T)
        hid = None
        if hidden and layers:
            hid = (
                torch.stack([store[("hid", layer)] for layer in layers]).float().cpu().numpy()
            )  # (L, B, T, D)
        return Capture(layers=tuple(layers), contexts=ctx, attentions=att, hidden=hid, summaries=summaries)

    @contextlib.contextmanager
    def reading(self, layer: int, attention_mask: torch.Tensor) -> Iterator[dict]:
        """While open, `layer`'s self-attention runs our own kernel in the model's forward passes over
        batches masked by `attention_mask` (B, T); the dict it yields receives that layer's
        probabilities (B, H, T, T) under ("p", layer) and its per-head context vectors (B, T, H*d)
        under ("ctx", layer). Outside inference mode they carry gradients (tuning reads signals)."""
        block = self.model.encoder.layer[layer - 1]
        attn = attention_modules.self_attention(block)
        store: dict[tuple[str, int], torch.Tensor] = {}
        detach = self._attach_reader(block, store, layer, key_bias(attention_mask, self.n_heads))
        hook = attention_modules.keep_contexts(attn, store, ("ctx", layer))
        try:
            yield store
        finally:
            hook.remove()
            detach()

    def _attach_reader(self, block, store: dict, layer: int, bias: torch.Tensor):
        """Make `block`'s self-attention run our kernel, which also keeps its probabilities, until the
        returned function is called (how, by model: `segmenter.encoder.torch.attention`).

        The model's own attention up to rounding (scores in the encoder's precision, softmax in float32
        over the real keys given by `bias` (B*H, 1, T): 0 for real keys, -inf for padding); the
        probabilities are stored as (B, H, T, T) under ("p", layer).
        """
        attn = attention_modules.self_attention(block)
        heads, dim = self.n_heads, self.head_dim
        if attention_modules.layout(block) == attention_modules.MPNET:  # no dispatch point to use
            attn.forward = attention_modules.mpnet_reading_attention(attn, store, layer, bias, heads, dim)
            return lambda: delattr(attn, "forward")  # back to the class's forward
        if not (hasattr(attn, "reader") or self._dispatches_attention):
            raise UnsupportedModelError(
                f"the attention of {self.name!r} cannot be read: its self-attention does not dispatch "
                "through transformers' AttentionInterface; use a probe or strategy that reads no attention"
            )
        return attention_modules.attach_reader(
            attn, attention_modules.bert_reader(store, layer, bias, heads, dim)
        )


def key_bias(mask: torch.Tensor, heads: int) -> torch.Tensor:
    """(B*H, 1, T) float32 additive attention bias from mask (B, T): 0 for real keys, -inf for padding."""
    padding = torch.zeros(mask.shape, dtype=torch.float32, device=mask.device)
    padding.masked_fill_(~mask.bool(), float("-inf"))
    return padding.repeat_interleave(heads, dim=0)[:, None, :]


def attention_summary(probs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(B, 3, H, T) summary (see `Capture.summaries`) of (B, H, T, T) probabilities; mask (B, T)."""
    real = mask.to(probs.dtype)  # (B, T): which queries are real
    weights = (real / real.sum(-1, keepdim=True))[:, None, None, :]  # (B, 1, 1, T)
    received = (weights @ probs).squeeze(2)  # (B, H, T): mean over the real queries
    last = (mask.sum(-1) - 1).clamp(min=0)  # (B,) position of each row's final [SEP]
    index = last[:, None, None, None].expand(probs.shape[0], probs.shape[1], probs.shape[2], 1)
    to_sep = probs.gather(-1, index).squeeze(-1)  # (B, H, T)
    to_cls = probs[..., 0]  # (B, H, T)
    return torch.stack([received, to_sep, to_cls], dim=1)


def _keep(store: dict, key: tuple[str, int], first: bool | None = False):
    """A forward hook that stores the module output under `key`.

    first: True takes output[0]; None takes output[0] only if the output is a tuple.
    """

    def hook(_module, _inputs, output):
        if first or (first is None and isinstance(output, tuple)):
            output = output[0]
        store[key] = output

    return hook
