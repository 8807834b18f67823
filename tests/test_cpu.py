"""The CPU description read from /proc/cpuinfo: the model name a benchmark records, and the flags."""

from __future__ import annotations

import pytest

import segmenter.encoder.cpu as cpu

BLOCK = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 1
model name\t: AMD EPYC
flags\t\t: fpu avx avx2 fma

processor\t: 1
model name\t: Another CPU
"""


@pytest.fixture
def cpuinfo(monkeypatch):
    def use(text: str) -> None:
        monkeypatch.setattr(cpu, "_cpuinfo", lambda: text)

    return use


def test_the_model_name_comes_with_family_and_model_numbers(cpuinfo):
    cpuinfo(BLOCK)
    assert cpu.cpu_model() == "AMD EPYC (family 25, model 1)"  # the first CPU's, not the second's
    assert {"avx2", "fma"} <= cpu.cpu_flags()


def test_a_bare_model_name_and_no_cpuinfo(cpuinfo):
    cpuinfo("model name\t: Some ARM core\nFeatures\t: neon\n")
    assert cpu.cpu_model() == "Some ARM core"
    cpuinfo("")  # not Linux
    assert cpu.cpu_model() is None and cpu.cpu_flags() == frozenset()
