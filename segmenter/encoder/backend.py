"""How each encoder runs, decided in one place: from the device, the CPU's instruction sets and the
precision the caller asks for.

Two choices, made once per encoder:

- `probe_precision`: what a probe's "auto" means. "int8" where the probe's meta names int8 as its
  automatic precision, the encoder runs on a CPU that does int8 natively by a path the meta allows
  (`int8_path`) and the probe reads block outputs only; else the caller's precision, unchanged (the
  probe's thresholds are looked up under it).
- `choose_backend`: the runtime and arithmetic that precision gives on a device (`Backend`). int8 runs
  the blocks as an ONNX Runtime graph (CPUs with VNNI or AVX2 and no AMX: there it is the fastest);
  "auto" is bfloat16 where the hardware multiplies it natively (CPUs with AVX512-BF16 or AMX, CUDA GPUs
  that support it), with the linear weights reordered once for oneDNN on a CPU, else float32 (GPUs
  without bfloat16, CPUs without bfloat16 units).

The runtimes themselves live in `segmenter.encoder.torch` and `segmenter.encoder.onnx`; opening the one
chosen is `segmenter.encoder.loader.open_encoder`. This module imports no runtime: torch only to ask
a CUDA device about bfloat16, and only then. Measurements behind each rule: docs/performance.md and
docs/model-selection.md ("int8 as the automatic precision", "Attention kernel", "Linear weights
reordered once").
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass

from segmenter.config import check_precision
from segmenter.encoder.cpu import AMX_FLAGS, INT8_PATHS, cpu_flags
from segmenter.errors import ConfigError

BFLOAT16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})  # bfloat16 products in hardware


@dataclass(frozen=True)
class Backend:
    """How one encoder runs.

    precision: "int8" (the blocks as an ONNX Runtime graph), "bfloat16" or "float32" (torch).
    attention: the attention kernel of the layers whose attention is not read (torch): "sdpa" or
               "eager" (two products and a softmax: faster in bfloat16 on a CPU without AMX).
    packed:    bfloat16 linear weights reordered once for oneDNN (torch on a CPU that can).
    """

    precision: str
    attention: str = "sdpa"
    packed: bool = False


def int8_path() -> str | None:
    """How this machine runs int8 fast, where it does: "vnni" where the CPU has integer dot-product
    instructions (`segmenter.encoder.cpu.VNNI_FLAGS`; int8 measured 1.3x as fast as bfloat16), else
    "avx2" where it has AVX2's byte multiply-adds (int8 measured 1.5x as fast as float32 on a CPU
    without bfloat16 units); None without ONNX Runtime, without either, or with matrix units (AMX,
    where bfloat16 runs on them and is the faster). Measurements: docs/model-selection.md, "int8 as the
    automatic precision" and "int8 on CPUs with AVX2 and no VNNI"."""
    flags = cpu_flags()
    if AMX_FLAGS & flags or importlib.util.find_spec("onnxruntime") is None:
        return None
    return next((path for path, needs in INT8_PATHS.items() if needs & flags), None)


def probe_precision(
    precision: str,
    device: str,
    reads_inside: bool,
    automatic: str | None = None,
    automatic_cpus: tuple[str, ...] = (),
    reader: str = "probe",
) -> str:
    """The precision a reader asks of its encoder: `precision`, except that "auto" becomes "int8" where
    `automatic` (the probe meta's automatic precision) is "int8", the encoder runs on the CPU and the
    CPU does int8 natively by a path in `automatic_cpus` (empty: any). int8 returns block outputs only,
    so a reader that `reads_inside` (attention or per-head vectors) refuses it with a ConfigError naming
    `reader`, and never gets it automatically."""
    if precision == "int8" and reads_inside:
        raise ConfigError(
            f"precision 'int8' returns block outputs only; this {reader} reads attention or per-head "
            "vectors: use --precision auto"
        )
    if precision == "auto" and automatic == "int8" and device == "cpu" and not reads_inside:
        path = int8_path()
        return "int8" if path is not None and (not automatic_cpus or path in automatic_cpus) else "auto"
    return precision


def choose_backend(precision: str, device) -> Backend:
    """The backend of `precision` ("auto", "float32", "bfloat16" or "int8") on `device` (a
    torch.device); a ConfigError names the choices, or says int8 runs on the CPU only."""
    if check_precision(precision) == "int8":
        if device.type != "cpu":
            raise ConfigError(f"precision 'int8' runs on the CPU only, not on {device}; use --precision auto")
        return Backend(precision="int8")
    if precision == "auto":
        precision = "bfloat16" if native_bfloat16(device) else "float32"
    on_cpu_in_bfloat16 = precision == "bfloat16" and device.type == "cpu"
    plain_attention = on_cpu_in_bfloat16 and "amx_bf16" not in cpu_flags()
    return Backend(
        precision=precision,
        attention="eager" if plain_attention else "sdpa",
        packed=on_cpu_in_bfloat16 and _packing_available(),
    )


@functools.cache
def native_bfloat16(device) -> bool:
    """Whether `device` (a torch.device) does bfloat16 arithmetic in hardware."""
    if device.type == "cuda":
        import torch

        return bool(torch.cuda.is_bf16_supported())
    if device.type != "cpu":
        return False
    return bool(BFLOAT16_FLAGS & cpu_flags())


def _packing_available() -> bool:
    from segmenter.encoder.torch.packed_linear import packing_available

    return packing_available()
