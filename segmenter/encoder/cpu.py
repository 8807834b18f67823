"""What this machine's CPU computes natively, read from its feature flags (Linux /proc/cpuinfo).

The encoder's precision follows it: bfloat16 where the CPU has bfloat16 units
(`segmenter.encoder.backend`), int8 where it has integer dot-product instructions or AVX2's byte
multiply-adds, and no matrix units (`segmenter.encoder.backend.int8_path`). Imports nothing heavy;
elsewhere than Linux no flags are known, and the plain float32 defaults apply.
"""

from __future__ import annotations

import functools
from pathlib import Path

VNNI_FLAGS = frozenset({"avx512_vnni", "avx_vnni"})  # int8 dot products in vector units
# byte multiply-adds into 16-bit sums, which ONNX Runtime's int8 products use where VNNI is missing
AVX2_FLAGS = frozenset({"avx2"})
AMX_FLAGS = frozenset({"amx_bf16", "amx_int8"})  # matrix units
# the ways a CPU runs int8 products fast, best first (`segmenter.encoder.backend.int8_path`); a probe may
# name the ones its automatic precision applies to (`ProbeMeta.automatic_precision_cpus`)
INT8_PATHS = {"vnni": VNNI_FLAGS, "avx2": AVX2_FLAGS}


@functools.cache
def _cpuinfo() -> str:
    """/proc/cpuinfo's text; empty elsewhere than Linux."""
    try:
        return Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except OSError:  # not Linux: no flags known, so float32 and the plain defaults
        return ""


def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags as Linux lists them in /proc/cpuinfo (empty elsewhere)."""
    return frozenset(_cpuinfo().split())


def cpu_model() -> str | None:
    """The first CPU's model name with its family and model numbers, as /proc/cpuinfo lists them
    ("AMD EPYC (family 25, model 1)": virtual machines often report a bare name), so that a speed
    can be traced to the CPU that gave it; None where nothing is listed."""
    fields: dict[str, str] = {}
    for line in _cpuinfo().splitlines():
        if not line.strip():
            break  # the first CPU's block ends at the first blank line
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    name = fields.get("model name")
    if not name:
        return None
    labels = (("family", "cpu family"), ("model", "model"))
    numbers = [f"{label} {fields[key]}" for label, key in labels if fields.get(key)]
    return f"{name} ({', '.join(numbers)})" if numbers else name
