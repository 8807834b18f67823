"""The encoder's blocks as an int8 ONNX Runtime graph: `precision="int8"`, on CPUs.

`Int8Blocks(model, calibration)` takes the loaded blocks of a `segmenter.bert.BertModel` (a tuned
probe's deltas already merged, narrowed heads already pruned), exports them to ONNX with torch's
exporter and quantises every matrix weight to int8 per output channel with ONNX Runtime's dynamic
quantisation: each batch's activations are quantised to uint8 on the fly, so the products run on the
CPU's integer dot-product units (AVX512-VNNI / AVX-VNNI where it has them). Before export each linear
layer is smoothed (SmoothQuant, Xiao et al. 2023): its input channels are divided by per-channel
scales and its weight columns multiplied by them, the same function in exact arithmetic, with the
activation outliers that per-batch uint8 rounds worst moved into the weights, which are rounded per
channel. The scales come from the largest input each channel sees on `calibration` (embedded windows
of a fixed text, data/int8_calibration.txt) and SMOOTHING. The embeddings stay in torch, in float32;
the graph takes their output and returns every block's output (the residual stream). Nothing inside
the attention comes back, so a probe that reads attention or per-head vectors cannot run in int8.
Each window runs alone, cut to its real tokens: activations are quantised with one scale per run, and
in a shared batch a window's boundaries moved with its neighbours (35 of 316 EWT test documents
segmented differently by `pipe` and `segment`, `training/batch_invariance.py`); alone, none do.

Why by hand: neither torch's own int8 path (slower than bfloat16 on CPUs with bfloat16 units,
segmenter/models/README.md) nor a ready-made exporter covers blocks with merged deltas and pruned
heads; this module is the glue between torch.onnx and onnxruntime.quantization, plus the smoothing.

The quantised graph is built once per set of weights and kept on disk (`cache_dir`), named by a hash
of the weights, the calibration and the library versions, so later runs load it in a fraction of a
second; where the cache cannot be written it is built in memory. The session runs on as many threads
as torch has when a batch arrives, with ONNX Runtime's spinning off (idle threads sleep, as torch's
do under `segmenter.wait_policy`). Knows nothing of windows, features or probes.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
import torch
from torch import nn

from segmenter.extras import require

GRAPH_VERSION = "2"  # part of the cache key: bump when the exported graph changes
SMOOTHING = 0.8  # SmoothQuant's exponent (models README, "int8"); None: no smoothing
CALIBRATION_TEXT = Path(__file__).parent / "data" / "int8_calibration.txt"


def cache_dir() -> Path:
    """$SEGMENTER_CACHE, else $XDG_CACHE_HOME/attention-segmenter, else ~/.cache/attention-segmenter."""
    if os.environ.get("SEGMENTER_CACHE"):
        return Path(os.environ["SEGMENTER_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "attention-segmenter"


class _Blocks(nn.Module):
    """What the graph computes: the blocks over embedded windows, every block's output stacked."""

    def __init__(self, blocks: nn.ModuleList):
        super().__init__()
        self.blocks = blocks

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """hidden (B, T, D) float32 embeddings; mask (B, T) int64, 1 for real tokens -> (L, B, T, D)."""
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


def smoothed(blocks: nn.ModuleList, calibration: list[tuple[torch.Tensor, torch.Tensor]]) -> _Blocks:
    """A copy of `blocks` with plain attention products (what the exporter traces best) and every
    linear layer smoothed by scales from its largest inputs on `calibration` ((B, T, D) embeddings,
    (B, T) masks): max|x_j|^a / max|w_j|^(1-a), a = SMOOTHING."""
    module = _Blocks(copy.deepcopy(blocks))
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
        for hidden, mask in calibration:
            module(hidden, mask)
    for hook in hooks:
        hook.remove()
    for name, layer in linears.items():
        column_max = layer.weight.detach().abs().amax(0).clamp(min=1e-5)  # (in,)
        scale = largest[name].clamp(min=1e-5) ** SMOOTHING / column_max ** (1 - SMOOTHING)
        parent, _, attribute = name.rpartition(".")
        setattr(module.get_submodule(parent), attribute, _Smoothed(layer, scale.clamp(min=1e-5)))
    return module


class Int8Blocks:
    """The blocks of `model` (a float32 `segmenter.bert.BertModel` in eval mode) as an int8 graph,
    smoothed on `calibration` ((B, T, D) float32 embeddings and (B, T) int64 masks)."""

    def __init__(self, model: nn.Module, calibration: list[tuple[torch.Tensor, torch.Tensor]]):
        ort = require("onnxruntime", "int8", "precision 'int8'")
        require("onnx", "int8", "precision 'int8'")  # the exporter and the quantiser write through it
        self._ort = ort
        blocks = model.encoder.layer
        self.layers = len(blocks)
        key = _weights_key(blocks, calibration, ort.__version__)
        self.graph = _cached_graph(lambda: smoothed(blocks, calibration), key)
        self._session = None
        self._threads = 0

    def __call__(self, embedded: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """embedded (B, T, D) float32, mask (B, T) int64 with each row's real tokens first ->
        (L, B, T, D) float32 block outputs, zero at padding.

        Each row runs alone, cut to its real tokens: activations are quantised with one scale per
        run, so in a shared batch a window's outputs would depend on the other windows and on the
        padding; alone, they depend on the window only (as in float32 and bfloat16)."""
        threads = torch.get_num_threads()
        if self._session is None or threads != self._threads:
            self._session, self._threads = self._open(threads), threads
        lengths = mask.sum(axis=1)  # (B,)
        outputs = np.zeros((self.layers, *embedded.shape), dtype=np.float32)  # (L, B, T, D)
        for row, length in enumerate(lengths.tolist()):
            feed = {
                "hidden": np.ascontiguousarray(embedded[row : row + 1, :length], dtype=np.float32),
                "mask": np.ones((1, length), dtype=np.int64),
            }
            outputs[:, row, :length] = self._session.run(None, feed)[0][:, 0]  # (L, length, D)
        return outputs

    def _open(self, threads: int):
        options = self._ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3  # errors only
        return self._ort.InferenceSession(self.graph, options, providers=["CPUExecutionProvider"])


def _weights_key(blocks: nn.ModuleList, calibration: list, ort_version: str) -> str:
    """sha256 of the blocks' weights and architecture, the calibration inputs, the smoothing and the
    versions that export and run the graph."""
    digest = hashlib.sha256(f"{GRAPH_VERSION} {SMOOTHING} {torch.__version__} {ort_version}".encode())
    tensors = list(blocks.state_dict().items())
    tensors += [(f"calibration {i}", t) for i, pair in enumerate(calibration) for t in pair]
    for name, tensor in tensors:
        digest.update(f"{name} {tuple(tensor.shape)} {tensor.dtype}".encode())
        digest.update(tensor.detach().contiguous().numpy().tobytes())
    return digest.hexdigest()[:32]


def _cached_graph(build, key: str) -> bytes:
    """The serialised int8 graph: read from the cache, else `_build(build())` (cached if we can)."""
    path = cache_dir() / f"int8-{key}.onnx"
    try:
        return path.read_bytes()
    except OSError:
        pass
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
    """Export `module` to ONNX and quantise its matrix weights to int8 per output channel."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    width = module.blocks[0].output.LayerNorm.normalized_shape[0]
    hidden = torch.zeros((2, 8, width))
    mask = torch.ones((2, 8), dtype=torch.long)
    mask[1, 5:] = 0  # a padded row, so that the trace keeps the mask
    axes = {"hidden": {0: "batch", 1: "length"}, "mask": {0: "batch", 1: "length"}}
    with tempfile.TemporaryDirectory() as folder:
        plain, quantised = Path(folder) / "blocks.onnx", Path(folder) / "blocks-int8.onnx"
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # the exporter's deprecation notices
            torch.onnx.export(
                module,
                (hidden, mask),
                str(plain),
                input_names=["hidden", "mask"],
                output_names=["outputs"],
                dynamic_axes={**axes, "outputs": {1: "batch", 2: "length"}},
                opset_version=17,
                dynamo=False,
            )
        logging.disable(logging.WARNING)  # quantize_dynamic's advice to pre-process, on the root logger
        try:
            quantize_dynamic(str(plain), str(quantised), per_channel=True, weight_type=QuantType.QInt8)
        finally:
            logging.disable(logging.NOTSET)
        return quantised.read_bytes()
