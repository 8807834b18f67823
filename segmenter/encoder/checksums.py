"""The sha256 of a file, read in chunks with progress: what model installs check their files against.

Shared by `segmenter.encoder.model_store` (split archives, converted files) and
`segmenter.encoder.e5_convert` (its source file); it reads files only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

CHUNK = 1 << 20  # bytes read at a time


def sha256_of(path: Path, progress: Callable[[int], None] | None = None) -> str:
    """The hex sha256 of the file at `path`; progress(n) after each n bytes read."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
            if progress:
                progress(len(chunk))
    return digest.hexdigest()
