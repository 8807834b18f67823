"""Choose how torch's OpenMP threads wait for one another, from how busy the machine is at start-up.

OpenMP reads its wait policy once, when torch loads it, so a process must choose before it imports
torch. The two policies trade against each other (docs/benchmarks.md, "A busy machine"):

- libgomp's default (spin a while, then sleep) is the fastest way to spread the encoder over idle
  cores: on the 2-core AMX host two spinning threads ran the default preset 1.6-1.8x as fast as one;
- `OMP_WAIT_POLICY=PASSIVE` (sleep at once) keeps a busy machine from stalling the encoder: while
  another process holds a core, spinning threads burn the time slice the thread they wait for needs,
  and two of them ran at less than half the speed of one; two passive threads kept one thread's speed.

`choose()` keeps a policy the user set; otherwise it reads how many cores other processes kept busy
over `SAMPLE_SECONDS` (Linux `/proc/stat`, only the CPUs this process may run on, less this process's
own CPU time) and sets the passive policy when they hold at least half a core, or when the load cannot
be read (not Linux). A quiet machine keeps libgomp's default. The policy never changes the arithmetic,
so the output does not depend on the load; a thread count chosen from the load would (1 and 2 threads
give different boundaries on 3 of 316 unpunctuated EWT test texts).

`openmp_loaded()` says whether it is too late to choose: the benchmark's same-process path, which
starts its busy companions after the command line chose, chooses again if torch is still unloaded.

Left out: load that starts after the choice (a long run that starts on a quiet machine keeps spinning
threads), and CPU quotas of a cgroup (only the CPUs of the affinity mask are counted). This module
imports nothing heavy, so the command line and the benchmark's worker processes call it first.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, MutableMapping

VARIABLE = "OMP_WAIT_POLICY"
SAMPLE_SECONDS = 0.05
BUSY_CORES = 0.5  # other processes holding this much CPU make waiting threads sleep
STAT_PATH = "/proc/stat"
# /proc/stat's per-CPU columns: user nice system idle iowait irq softirq steal (guest time is in user)
_BUSY_COLUMNS = (0, 1, 2, 5, 6, 7)


def busy_seconds(cpus: set[int], stat_text: str) -> float:
    """CPU seconds `cpus` have spent busy (everything but idle and I/O wait) since boot, from the text
    of /proc/stat."""
    ticks = 0
    for line in stat_text.splitlines():
        name, _, values = line.partition(" ")
        if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus:
            columns = values.split()
            ticks += sum(int(columns[i]) for i in _BUSY_COLUMNS if i < len(columns))
    return ticks / os.sysconf("SC_CLK_TCK")


def _read_stat() -> str:
    with open(STAT_PATH, encoding="ascii") as handle:
        return handle.read()


def other_busy_cores(
    seconds: float = SAMPLE_SECONDS,
    read_stat: Callable[[], str] = _read_stat,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    own_time: Callable[[], float] = time.process_time,
) -> float | None:
    """How many of this process's CPUs other processes kept busy over the next `seconds` (0.0 on a
    quiet machine, about 1.0 with one busy companion); None where the load cannot be read."""
    try:
        cpus = os.sched_getaffinity(0)
        wall, own, busy = clock(), own_time(), busy_seconds(cpus, read_stat())
        sleep(seconds)
        busy = busy_seconds(cpus, read_stat()) - busy
        own, wall = own_time() - own, clock() - wall
    except (OSError, AttributeError, ValueError, IndexError):  # no /proc/stat, no affinity (not Linux)
        return None
    return max(0.0, busy - own) / max(wall, 1e-6)


def choose(
    environ: MutableMapping[str, str] | None = None,
    measure: Callable[[], float | None] | None = None,
) -> str:
    """Set `OMP_WAIT_POLICY` in `environ` (default: this process's) for torch to read when it loads,
    unless it is set; returns the policy in effect: the user's, "PASSIVE" (a busy machine, or one whose
    load cannot be read) or "default" (libgomp's spin-then-sleep, on a quiet machine). `measure`
    (default: `other_busy_cores`) says how many cores other processes hold."""
    environ = os.environ if environ is None else environ
    if environ.get(VARIABLE):
        return environ[VARIABLE]
    busy = (measure or other_busy_cores)()
    if busy is None or busy >= BUSY_CORES:
        environ[VARIABLE] = "PASSIVE"
        return "PASSIVE"
    return "default"


def openmp_loaded() -> bool:
    """Whether this process has loaded torch, and with it OpenMP, which read the policy once then."""
    return "torch" in sys.modules
