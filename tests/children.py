"""Helpers for tests that run the CLI as a real child process (a shell, pipes, signals)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child_environment() -> dict[str, str]:
    """The environment of a child running this checkout's code offline, on one thread."""
    pythonpath = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": pythonpath, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


def run_shell(script: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `script` with bash in `cwd` (process substitution, FIFOs and pipes as a user would write them).

    In a session of its own: after `timeout` seconds everything it started is killed, including
    background children that outlived the shell and hold its output pipes (`subprocess.run` would
    then wait for them forever), and TimeoutExpired is raised."""
    with subprocess.Popen(
        ["bash", "-c", script],
        cwd=cwd,
        env=child_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as shell:
        try:
            stdout, stderr = shell.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(shell.pid, signal.SIGKILL)
            shell.communicate()
            raise
    return subprocess.CompletedProcess(shell.args, shell.returncode, stdout, stderr)
