"""The CPU a benchmarked system may use: its thread count, and optional busy companion processes.

Speed is only comparable at equal resources, so every system runs with the same number of threads:
the thread-count variables of the numeric libraries (OpenMP, MKL, OpenBLAS, BLIS) are set before a
system's process starts (`thread_environment`, for spawned processes: the libraries read them once,
when they load), and again in the process once the system is loaded (`limit_threads`: torch's
intra-op pool and, through threadpoolctl, any BLAS or OpenMP pool already loaded).

`busy_companions(k)` starts k processes that each keep one core busy for as long as the block runs, so
a run shows what a system does on a machine that is doing something else too.

This module times and scores nothing.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator

THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
_SPIN = "while True:\n    pass\n"  # one core's worth of work that never ends


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask), which can be fewer than the machine has."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this platform
        return os.cpu_count() or 1


@contextlib.contextmanager
def thread_environment(threads: int) -> Iterator[None]:
    """Inside the block, processes started from this one run their numeric libraries on `threads`."""
    saved = {name: os.environ.get(name) for name in THREAD_VARIABLES}
    os.environ.update({name: str(threads) for name in THREAD_VARIABLES})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def limit_threads(threads: int) -> None:
    """Cap this process's loaded thread pools at `threads`: torch's (if imported) and BLAS/OpenMP's."""
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # only pools that torch owns are capped then
        return
    threadpool_limits(limits=threads)


@contextlib.contextmanager
def busy_companions(count: int) -> Iterator[list[subprocess.Popen]]:
    """`count` processes, each spinning on one core, for as long as the block runs."""
    processes = [
        subprocess.Popen([sys.executable, "-c", _SPIN], stdin=subprocess.DEVNULL) for _ in range(count)
    ]
    try:
        yield processes
    finally:
        for process in processes:
            process.kill()
        for process in processes:
            process.wait()
