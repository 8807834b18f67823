"""Helpers for tests that run the CLI as a real child process (a shell, pipes, signals)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child_environment() -> dict[str, str]:
    """The environment of a child running this checkout's code offline, on one thread."""
    pythonpath = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": pythonpath, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


def run_shell(script: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `script` with bash in `cwd` (process substitution, FIFOs and pipes as a user would write them)."""
    return subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        env=child_environment(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
