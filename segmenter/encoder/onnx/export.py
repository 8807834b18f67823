"""The encoder's blocks as an int8 ONNX Runtime graph: `precision="int8"`, on CPUs.

`Int8Blocks(model, calibration)` takes the embeddings and loaded blocks of a
`segmenter.encoder.torch.bert.BertModel` (a tuned probe's deltas already merged, narrowed heads already
pruned), exports them to ONNX with torch's exporter and quantises every matrix weight of the blocks to int8
per output channel (the embedding tables stay float32) with ONNX Runtime's dynamic quantisation: each batch's
activations are quantised to uint8 on the fly, so the products run on the CPU's integer dot-product units
(AVX512-VNNI / AVX-VNNI where it has them). Before export each linear layer is smoothed (SmoothQuant, Xiao et
al. 2023): its input channels are divided by per-channel scales and its weight columns multiplied by them, the
same function in exact arithmetic, with the activation outliers that per-batch uint8 rounds worst moved into
the weights, which are rounded per channel. The scales come from the largest input each channel sees on
`calibration` (windows of a fixed text, data/int8_calibration.txt) and SMOOTHING. The graph takes token ids
and returns every block's output (the residual stream), so running it needs neither torch nor the model.
Nothing inside the attention comes back, so a probe that reads attention or per-head vectors cannot run in
int8. Each window runs alone, cut to its real tokens: activations are quantised with one scale per run, and in
a shared batch a window's boundaries moved with its neighbours (35 of 316 EWT test documents segmented
differently by `pipe` and `segment`, `training/batch_invariance.py`); alone, none do.

Why by hand: neither torch's own int8 path (slower than bfloat16 on CPUs with bfloat16 units,
docs/model-selection.md) nor a ready-made exporter covers blocks with merged deltas and pruned
heads; this module is the glue between torch.onnx and onnxruntime.quantization, plus the smoothing.

The quantised graph is built once per set of weights and kept on disk
(`segmenter.encoder.onnx.runtime.cache_dir`), named by a hash of the weights, the calibration and the library
versions, so later runs load it in a fraction of a second; where the cache cannot be written it is built in
memory. It runs in `segmenter.encoder.onnx.runtime.Int8Session` (`Int8Blocks.session`), on as many threads as
torch has when a batch arrives. Knows nothing of windows, features or probes.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import tempfile
import warnings
from pathlib import Path

import torch
from torch import nn

from segmenter.encoder.onnx.runtime import (
    CALIBRATION_TEXT,
    GRAPH_VERSION,
    SMOOTHING,
    Int8Session,
    cache_dir,
    graph_path,
)
from segmenter.extras import require

__all__ = ["CALIBRATION_TEXT", "Int8Blocks", "cache_dir", "smoothed"]


class _Blocks(nn.Module):
    """What the graph computes: the embeddings, then the blocks, every block's output stacked."""

    def __init__(self, embeddings: nn.Module, blocks: nn.ModuleList):
        super().__init__()
        self.embeddings = embeddings
        self.blocks = blocks

    def forward(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """input_ids (B, T) int64 with [CLS]/[SEP] in place; mask (B, T) int64, 1 for real tokens ->
        (L, B, T, D) float32."""
        hidden = self.embeddings(input_ids)  # (B, T, D)
        additive = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min  # (B, 1, 1, T)
        outputs = []
        for block in self.blocks:
            hidden = block(hidden, additive)
            outputs.append(hidden)
        return torch.stack(outputs)


class _Smoothed(nn.Module):
    """`linear` with its input divided by `scale` per channel and its weight columns multiplied by it."""

    def __init__(self, linear: nn.Linear, scale: torch.Tensor):
        super().__init__()
        self.register_buffer("inverse", 1.0 / scale)  # (in,)
        self.register_buffer("weight", linear.weight.detach() * scale[None, :])  # (out, in)
        self.register_buffer("bias", None if linear.bias is None else linear.bias.detach())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.linear(x * self.inverse, self.weight, self.bias)


def smoothed(model: nn.Module, calibration: list[tuple[torch.Tensor, torch.Tensor]]) -> _Blocks:
    """A copy of `model`'s embeddings and blocks with plain attention products (what the exporter
    traces best) and every linear layer smoothed by scales from its largest inputs on `calibration`
    ((B, T) ids, (B, T) masks): max|x_j|^a / max|w_j|^(1-a), a = SMOOTHING."""
    module = _Blocks(copy.deepcopy(model.embeddings), copy.deepcopy(model.encoder.layer))
    for block in module.blocks:
        block.attention.self.attention = "eager"
    if SMOOTHING is None:
        return module
    linears = {name: layer for name, layer in module.named_modules() if isinstance(layer, nn.Linear)}
    largest = {name: torch.zeros(layer.in_features) for name, layer in linears.items()}

    def keep_largest(name: str):
        def hook(_layer, inputs):
            x = inputs[0].detach().abs().reshape(-1, inputs[0].shape[-1])  # (B*T, in)
            largest[name] = torch.maximum(largest[name], x.amax(0))

        return hook

    hooks = [layer.register_forward_pre_hook(keep_largest(name)) for name, layer in linears.items()]
    with torch.no_grad():
        for input_ids, mask in calibration:
            module(input_ids, mask)
    for hook in hooks:
        hook.remove()
    for name, layer in linears.items():
        column_max = layer.weight.detach().abs().amax(0).clamp(min=1e-5)  # (in,)
        scale = largest[name].clamp(min=1e-5) ** SMOOTHING / column_max ** (1 - SMOOTHING)
        parent, _, attribute = name.rpartition(".")
        setattr(module.get_submodule(parent), attribute, _Smoothed(layer, scale.clamp(min=1e-5)))
    return module


class Int8Blocks:
    """The blocks of `model` (a float32 `segmenter.encoder.torch.bert.BertModel` in eval mode) as an int8
    graph, smoothed on `calibration` ((B, T) int64 ids and masks)."""

    def __init__(self, model: nn.Module, calibration: list[tuple[torch.Tensor, torch.Tensor]]):
        ort = require("onnxruntime", "int8", "precision 'int8'")
        self.key = _weights_key(model, calibration, ort.__version__)
        self.graph = _cached_graph(lambda: smoothed(model, calibration), self.key)
        self.session = Int8Session(self.graph, len(model.encoder.layer), int(model.config.hidden_size))


def _weights_key(model: nn.Module, calibration: list, ort_version: str) -> str:
    """sha256 of the weights and architecture of the embeddings and blocks, the calibration inputs, the
    smoothing and the versions that export and run the graph."""
    digest = hashlib.sha256(f"{GRAPH_VERSION} {SMOOTHING} {torch.__version__} {ort_version}".encode())
    tensors = [(f"embeddings.{n}", t) for n, t in model.embeddings.state_dict().items()]
    tensors += list(model.encoder.layer.state_dict().items())
    tensors += [(f"calibration {i}", t) for i, pair in enumerate(calibration) for t in pair]
    for name, tensor in tensors:
        digest.update(f"{name} {tuple(tensor.shape)} {tensor.dtype}".encode())
        digest.update(tensor.detach().contiguous().numpy().tobytes())
    return digest.hexdigest()[:32]


def _cached_graph(build, key: str) -> bytes:
    """The serialised int8 graph: read from the cache, else `_build(build())` (cached if we can)."""
    path = graph_path(key)
    try:
        return path.read_bytes()
    except OSError:
        pass
    require("onnx", "int8", "precision 'int8'")  # the exporter and the quantiser write through it
    graph = _build(build())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".part", delete=False) as handle:
            handle.write(graph)
        os.replace(handle.name, path)  # whole or absent, never half-written
    except OSError:
        pass  # a read-only home: built again next time
    return graph


def _build(module: _Blocks) -> bytes:
    """Export `module` to ONNX and quantise the weights of its matrix products to int8 per output
    channel (MatMul alone: the embedding tables, read by Gather, stay float32)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    input_ids = torch.zeros((2, 8), dtype=torch.long)
    mask = torch.ones((2, 8), dtype=torch.long)
    mask[1, 5:] = 0  # a padded row, so that the trace keeps the mask
    axes = {"input_ids": {0: "batch", 1: "length"}, "mask": {0: "batch", 1: "length"}}
    with tempfile.TemporaryDirectory() as folder:
        plain, quantised = Path(folder) / "blocks.onnx", Path(folder) / "blocks-int8.onnx"
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # the exporter's deprecation notices
            torch.onnx.export(
                module,
                (input_ids, mask),
                str(plain),
                input_names=["input_ids", "mask"],
                output_names=["outputs"],
                dynamic_axes={**axes, "outputs": {1: "batch", 2: "length"}},
                opset_version=17,
                dynamo=False,
            )
        logging.disable(logging.WARNING)  # quantize_dynamic's advice to pre-process, on the root logger
        try:
            quantize_dynamic(
                str(plain),
                str(quantised),
                op_types_to_quantize=["MatMul"],
                per_channel=True,
                weight_type=QuantType.QInt8,
            )
        finally:
            logging.disable(logging.NOTSET)
        return quantised.read_bytes()
