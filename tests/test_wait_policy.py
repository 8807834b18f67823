"""The OpenMP wait policy chosen at start-up: the user's kept, passive on a busy machine, libgomp's
default on a quiet one, and the CPU-time reading it rests on."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from segmenter.encoder import wait_policy

TICKS = os.sysconf("SC_CLK_TCK")


def _stat(per_cpu: dict[int, tuple[int, ...]]) -> str:
    """A /proc/stat text: the aggregate line, then one line per CPU (user nice system idle iowait irq
    softirq steal guest guest_nice), then lines that are not CPUs."""
    total = [sum(column) for column in zip(*per_cpu.values(), strict=True)]
    lines = ["cpu  " + " ".join(map(str, total))]
    lines += [f"cpu{cpu} " + " ".join(map(str, values)) for cpu, values in per_cpu.items()]
    lines += ["intr 12345 0 0", "ctxt 999", "procs_running 3"]
    return "\n".join(lines) + "\n"


def test_busy_seconds_count_every_busy_column_of_the_given_cpus_only():
    text = _stat({0: (10, 1, 2, 500, 40, 3, 4, 5, 0, 0), 1: (7, 0, 0, 900, 0, 0, 0, 0, 0, 0)})
    assert wait_policy.busy_seconds({0}, text) == pytest.approx((10 + 1 + 2 + 3 + 4 + 5) / TICKS)
    assert wait_policy.busy_seconds({0, 1}, text) == pytest.approx(32 / TICKS)
    assert wait_policy.busy_seconds({5}, text) == 0.0  # a CPU the text does not list


def _reading(busy_ticks_between: dict[int, int], own_seconds: float, wall_seconds: float = 1.0):
    """other_busy_cores over a fake interval: each CPU spends `busy_ticks_between[cpu]` ticks busy and
    this process `own_seconds` of CPU time in `wall_seconds`."""
    cpus = sorted(os.sched_getaffinity(0))
    before = {cpu: (100, 0, 0, 1000, 0, 0, 0, 0, 0, 0) for cpu in cpus}
    after = {
        cpu: (100 + busy_ticks_between.get(i, 0), 0, 0, 1000, 0, 0, 0, 0, 0, 0) for i, cpu in enumerate(cpus)
    }
    texts = iter([_stat(before), _stat(after)])
    clocks, owns = iter([0.0, wall_seconds]), iter([5.0, 5.0 + own_seconds])
    return wait_policy.other_busy_cores(
        1.0, lambda: next(texts), lambda _: None, lambda: next(clocks), lambda: next(owns)
    )


def test_one_busy_core_of_another_process_reads_as_one_core():
    assert _reading({0: TICKS}, own_seconds=0.0) == pytest.approx(1.0)


def test_this_process_own_cpu_time_is_not_counted_as_other_load():
    assert _reading({0: TICKS}, own_seconds=1.0) == pytest.approx(0.0)
    assert _reading({0: TICKS}, own_seconds=0.25) == pytest.approx(0.75)


def test_an_unreadable_load_is_none():
    def missing():
        raise FileNotFoundError("/proc/stat")

    assert wait_policy.other_busy_cores(0.0, missing, lambda _: None) is None


@pytest.mark.parametrize(
    ("busy", "expected", "variable"),
    [(0.0, "default", None), (0.3, "default", None), (0.5, "PASSIVE", "PASSIVE"), (1.7, "PASSIVE", "PASSIVE"),
     (None, "PASSIVE", "PASSIVE")],
)  # fmt: skip
def test_policy_follows_the_load_when_the_user_set_none(busy, expected, variable):
    environ: dict[str, str] = {}
    assert wait_policy.choose(environ, lambda: busy) == expected
    assert environ.get("OMP_WAIT_POLICY") == variable


def test_a_policy_the_user_set_is_kept_without_reading_the_load():
    def never():
        raise AssertionError("the load was read")

    environ = {"OMP_WAIT_POLICY": "ACTIVE"}
    assert wait_policy.choose(environ, never) == "ACTIVE" and environ == {"OMP_WAIT_POLICY": "ACTIVE"}


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="reads Linux's /proc/stat")
def test_a_real_busy_process_is_seen():
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)  # the interpreter starts and spins
        assert wait_policy.other_busy_cores(0.3) >= wait_policy.BUSY_CORES
    finally:
        spinner.kill()
        spinner.wait()


def test_openmp_counts_as_loaded_once_torch_is_imported():
    import torch  # noqa: F401  (the test process loads it anyway)

    assert wait_policy.openmp_loaded()
