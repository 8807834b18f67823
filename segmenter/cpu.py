"""What this machine's CPU computes natively, read from its feature flags (Linux /proc/cpuinfo).

The encoder's precision follows it: bfloat16 where the CPU has bfloat16 units (`segmenter.encoder`),
int8 where it has integer dot-product instructions or AVX2's byte multiply-adds, and no matrix units
(`segmenter.int8_runtime.int8_path`). Imports nothing heavy; elsewhere than Linux no flags are known,
and the plain float32 defaults apply.
"""

from __future__ import annotations

import functools
from pathlib import Path

VNNI_FLAGS = frozenset({"avx512_vnni", "avx_vnni"})  # int8 dot products in vector units
# byte multiply-adds into 16-bit sums, which ONNX Runtime's int8 products use where VNNI is missing
AVX2_FLAGS = frozenset({"avx2"})
AMX_FLAGS = frozenset({"amx_bf16", "amx_int8"})  # matrix units
# the ways a CPU runs int8 products fast, best first (`segmenter.int8_runtime.int8_path`); a probe may
# name the ones its automatic precision applies to (`ProbeMeta.automatic_precision_cpus`)
INT8_PATHS = {"vnni": VNNI_FLAGS, "avx2": AVX2_FLAGS}


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags as Linux lists them in /proc/cpuinfo (empty elsewhere)."""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except OSError:  # not Linux: no flags known, so float32 and the plain defaults
        return frozenset()
    return frozenset(cpuinfo.split())
