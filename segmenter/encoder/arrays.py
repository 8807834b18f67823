"""The encoder arrays a tuned probe carries, checked without torch.

Low-rank weight deltas ("<dense layer>.a" (r, in) and "<dense layer>.b" (out, r), `layers_of`) and the
heads and feed-forward units narrowed blocks keep ("encoder.layer.N.heads" / ".units", `check_keep`).
Loading a probe checks them here; merging them into a model is `segmenter.encoder.torch.adapter`'s and
`segmenter.encoder.torch.pruning`'s work, in torch.
"""

from __future__ import annotations

import re

import numpy as np

KEEP_KEY = re.compile(r"encoder\.layer\.(\d+)\.(heads|units)")


def layers_of(deltas: dict[str, np.ndarray]) -> list[str]:
    """The dense layers `deltas` change, in order; ValueError if a factor lacks its partner or the two
    do not multiply."""
    names = sorted({key.rsplit(".", 1)[0] for key in deltas})
    for name in names:
        a, b = deltas.get(f"{name}.a"), deltas.get(f"{name}.b")
        if a is None or b is None or a.ndim != 2 or b.ndim != 2 or a.shape[0] != b.shape[1]:
            raise ValueError(f"low-rank factors of {name} are missing or do not multiply")
        if not (np.isfinite(a).all() and np.isfinite(b).all()):
            raise ValueError(f"low-rank factors of {name} hold non-finite values")
    return names


def keep_key(block: int, kind: str) -> str:
    """The name of block `block`'s (0-based) kept `kind` ("heads" or "units")."""
    return f"encoder.layer.{block}.{kind}"


def check_keep(keep: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`keep` with int64 arrays; ValueError for an unknown name or indices that are not whole,
    ascending, unique and non-negative."""
    checked = {}
    for name, values in keep.items():
        if KEEP_KEY.fullmatch(name) is None:
            raise ValueError(f"unknown pruning array {name!r}")
        values = np.asarray(values)
        whole = values.ndim == 1 and values.size > 0 and np.all(np.isfinite(values))
        whole = whole and np.all(values == np.round(values)) and values.min() >= 0
        indices = values.astype(np.int64) if whole else None
        if indices is None or np.any(np.diff(indices) <= 0):
            raise ValueError(f"pruning array {name} must hold ascending unique indices")
        checked[name] = indices
    return checked
