"""How far int8 arithmetic moves the 12-layer encoder (all-mpnet-base-v2) from float32, and how much
faster it runs: the measurement behind "The 12-layer encoder in int8" in models/README.md.

    python training/mpnet_int8.py [--ud ../shared/data/ud] [--windows 20]

Reads the encoder's first seven blocks (the block the shipped probe reads) through transformers, on the first
`--windows` windows of 128 tokens of EWT dev text, one thread, and compares each int8 variant with torch
float32: speed (float32 seconds / variant seconds over the same windows), the relative norm of the difference
in block 7's output (mean over windows) and the largest difference in block 7's attention probabilities; then,
per kind of product, how far the largest input channel of block 7 stands out (its largest value over the
windows against the median channel's). Variants: torch's dynamic quantisation of the linear layers (weights
per tensor; per channel; per channel after SmoothQuant scaling from the int8 calibration text at a = 0.5 and
0.8; per channel on one kind of product only), and ONNX Runtime (the encoder exported with the attention as an
output, float32 and dynamically quantised per channel as `segmenter.encoder.onnx.export` quantises). Run it
alone. A development tool: nothing in `segmenter` imports it.
"""

from __future__ import annotations

import copy
import logging
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from pathlib import Path  # noqa: E402

import click  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from dev_scores import dev_file, ud_option  # noqa: E402
from torch import nn  # noqa: E402

from segmenter.bench.datasets import evaluation_items, load_dataset  # noqa: E402
from segmenter.encoder.onnx.runtime import CALIBRATION_TEXT  # noqa: E402
from segmenter.encoder.torch.encoder import Encoder  # noqa: E402

BLOCKS = 7
WINDOW = 128


class _Scaled(nn.Module):
    """Multiplies its input by fixed per-channel factors (the smoothing's division, kept in float)."""

    def __init__(self, factors: torch.Tensor):
        super().__init__()
        self.register_buffer("factors", factors)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.factors


class _Outputs(nn.Module):
    """The encoder as the exporter sees it: (ids, mask) -> (block 7's output, block 7's attention)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, ids: torch.Tensor, mask: torch.Tensor):
        out = self.model(input_ids=ids, attention_mask=mask, output_attentions=True)
        return out.last_hidden_state, out.attentions[-1]


def windows_of(encoder: Encoder, text: str, limit: int) -> list[torch.Tensor]:
    """Up to `limit` (1, WINDOW) id tensors: [CLS] + consecutive tokens of `text` + [SEP]."""
    ids = encoder.tokenize(text).ids.tolist()
    cls, sep = encoder.cls_id, encoder.sep_id
    body = WINDOW - 2
    return [
        torch.tensor([[cls, *ids[i : i + body], sep]], dtype=torch.long)
        for i in range(0, len(ids) - body, body)
    ][:limit]


def largest_inputs(
    model: nn.Module, windows: list[torch.Tensor], prefix: str = ""
) -> dict[str, torch.Tensor]:
    """Per linear layer of `model` named with `prefix` (the name after it as key), the largest |value|
    of each input channel (in,) over `windows`."""
    largest: dict[str, torch.Tensor] = {}

    def keep(name):
        def hook(_layer, inputs):
            seen = inputs[0].detach().abs().flatten(0, -2).amax(0)  # (in,)
            largest[name] = seen if name not in largest else torch.maximum(largest[name], seen)

        return hook

    hooks = [
        layer.register_forward_pre_hook(keep(name[len(prefix) :]))
        for name, layer in model.named_modules()
        if isinstance(layer, nn.Linear) and name.startswith(prefix)
    ]
    torch_run(model, windows)
    for hook in hooks:
        hook.remove()
    return largest


def input_outliers(model: nn.Module, windows: list[torch.Tensor], block: int) -> dict[str, float]:
    """Per linear layer of `block` (0-based), the largest input channel's largest |value| over
    `windows` divided by the median channel's."""
    largest = largest_inputs(model, windows, f"encoder.layer.{block}.")
    return {name: float(seen.max() / seen.median()) for name, seen in largest.items()}


def torch_run(model: nn.Module, windows: list[torch.Tensor]) -> tuple[float, list]:
    outputs = []
    with torch.inference_mode():
        start = time.perf_counter()
        for ids in windows:
            outputs.append(_Outputs(model)(ids, torch.ones_like(ids)))
        return time.perf_counter() - start, [(h.numpy(), a.numpy()) for h, a in outputs]


def smooth(model: nn.Module, calibration: list[torch.Tensor], alpha: float) -> nn.Module:
    """A copy of `model` whose linear layers' inputs are divided by SmoothQuant scales (float) and whose
    weight columns are multiplied by them, so that quantising the weights rounds the outliers."""
    model = copy.deepcopy(model)
    linears = {name: layer for name, layer in model.named_modules() if isinstance(layer, nn.Linear)}
    largest = largest_inputs(model, calibration)
    for name, layer in linears.items():
        weight_max = layer.weight.detach().abs().amax(0).clamp(min=1e-5)  # (in,)
        scale = (largest[name].clamp(min=1e-5) ** alpha / weight_max ** (1 - alpha)).clamp(min=1e-5)
        scaled = nn.Linear(layer.in_features, layer.out_features, bias=layer.bias is not None)
        scaled.weight.data = layer.weight.detach() * scale[None, :]
        if layer.bias is not None:
            scaled.bias.data = layer.bias.detach().clone()
        parent, _, attribute = name.rpartition(".")
        setattr(model.get_submodule(parent), attribute, nn.Sequential(_Scaled(1.0 / scale), scaled))
    return model


def quantised(model: nn.Module, per_channel: bool, only: tuple[str, ...] = ()) -> nn.Module:
    """torch's dynamic int8 of `model`'s linear layers (those named with an ending of `only`, if given)."""
    from torch.ao.quantization import default_dynamic_qconfig, per_channel_dynamic_qconfig

    qconfig = per_channel_dynamic_qconfig if per_channel else default_dynamic_qconfig
    names = [n for n, layer in model.named_modules() if isinstance(layer, nn.Linear)]
    chosen = {n for n in names if not only or n.endswith(only)}
    return torch.ao.quantization.quantize_dynamic(copy.deepcopy(model), dict.fromkeys(chosen, qconfig))


def ort_runs(model: nn.Module, windows: list[torch.Tensor]) -> dict[str, tuple[float, list]]:
    """ONNX Runtime float32 and int8 (per channel, MatMul only) runs of `model` over `windows`."""
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folder = Path(tempfile.mkdtemp())
    ids = torch.zeros((1, 8), dtype=torch.long)
    axes = {
        "ids": {0: "b", 1: "t"},
        "mask": {0: "b", 1: "t"},
        "h": {0: "b", 1: "t"},
        "a": {0: "b", 2: "t", 3: "t"},
    }
    with torch.no_grad():
        torch.onnx.export(
            _Outputs(model), (ids, torch.ones_like(ids)), str(folder / "float.onnx"),
            input_names=["ids", "mask"], output_names=["h", "a"], dynamic_axes=axes, opset_version=17,
            dynamo=False,
        )  # fmt: skip
    logging.disable(logging.WARNING)
    quantize_dynamic(
        str(folder / "float.onnx"), str(folder / "int8.onnx"), op_types_to_quantize=["MatMul"],
        per_channel=True, weight_type=QuantType.QInt8,
    )  # fmt: skip
    logging.disable(logging.NOTSET)
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    runs = {}
    for name in ("float", "int8"):
        session = ort.InferenceSession(
            str(folder / f"{name}.onnx"), options, providers=["CPUExecutionProvider"]
        )
        feeds = [{"ids": w.numpy(), "mask": np.ones_like(w.numpy())} for w in windows]
        session.run(None, feeds[0])
        start = time.perf_counter()
        outputs = [tuple(session.run(None, feed)) for feed in feeds]
        runs[name] = (time.perf_counter() - start, outputs)
    return runs


@click.command()
@ud_option
@click.option("--windows", "limit", type=click.IntRange(min=1), default=20, show_default=True)
def main(ud: Path, limit: int) -> None:
    """Print one markdown row per int8 variant against torch float32."""
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    encoder = Encoder("all-mpnet-base-v2", max_layer=BLOCKS, precision="float32")
    text = "\n\n".join(item.text for item in evaluation_items(load_dataset(dev_file(ud, "EWT")), "clean"))
    measured = windows_of(encoder, text, limit)
    calibration = windows_of(encoder, CALIBRATION_TEXT.read_text(encoding="utf-8"), 16)
    base = encoder.model
    torch_run(base, measured[:2])  # warm-up
    seconds, reference = torch_run(base, measured)
    variants = {
        "torch, weights per tensor": lambda: quantised(base, per_channel=False),
        "torch, weights per channel": lambda: quantised(base, per_channel=True),
        "torch, per channel, smoothed a = 0.5": lambda: quantised(smooth(base, calibration, 0.5), True),
        "torch, per channel, smoothed a = 0.8": lambda: quantised(smooth(base, calibration, 0.8), True),
        "torch, per channel, query/key/value only": lambda: quantised(
            base, True, ("attn.q", "attn.k", "attn.v")
        ),
        "torch, per channel, attention output only": lambda: quantised(base, True, ("attn.o",)),
        "torch, per channel, feed-forward first only": lambda: quantised(base, True, ("intermediate.dense",)),
        "torch, per channel, feed-forward second only": lambda: quantised(base, True, ("output.dense",)),
    }
    runs = {}
    for label, build in variants.items():
        model = build()
        torch_run(model, measured[:2])
        runs[label] = torch_run(model, measured)
    for name, run in ort_runs(base, measured).items():
        runs[f"ONNX Runtime {name}"] = run
    click.echo(f"torch float32: {seconds:.2f} s for {len(measured)} windows of {WINDOW} tokens, one thread")
    click.echo(
        "| variant | speed | block-7 error | block-7 attention, largest difference |\n|---|---|---|---|"
    )
    for label, (spent, outputs) in runs.items():
        error = np.mean(
            [
                np.linalg.norm(h - o[0]) / np.linalg.norm(h)
                for (h, _), o in zip(reference, outputs, strict=True)
            ]
        )
        attention = max(float(np.abs(a - o[1]).max()) for (_, a), o in zip(reference, outputs, strict=True))
        click.echo(f"| {label} | {seconds / spent:.2f}x | {error:.3f} | {attention:.3f} |")
    outliers = input_outliers(base, measured, BLOCKS - 1)
    click.echo(
        "block 7, largest input channel / median channel: "
        + ", ".join(f"{n} {r:.0f}" for n, r in outliers.items())
    )


if __name__ == "__main__":
    main()
