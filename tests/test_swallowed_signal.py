"""A signal whose KeyboardInterrupt Python swallows still ends the output unwritten.

Python runs a signal handler wherever the main thread is; inside a `__del__` method (or a weakref
callback, as during an import) the KeyboardInterrupt it raises is printed as "Exception ignored" and
lost. `AtomicOutput` and Ray's `StagedFolder` remember the signal and refuse to commit, and
`AtomicOutput` stops the run at its next write.
"""

from __future__ import annotations

import gc
import os
import signal

import pytest

from segmenter.integrations.ray.output import StagedFolder
from segmenter.io import AtomicOutput

# the swallowed KeyboardInterrupt is reported to pytest as an unraisable exception: that is the point
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


@pytest.fixture
def default_sigterm():
    """SIGTERM at its default disposition, which the outputs take over (an earlier test in the same
    process, Ray's driver for one, may have left a handler of its own); restored afterwards."""
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGTERM, previous)


class _SignalsWhenCollected:
    def __del__(self):
        signal.raise_signal(signal.SIGTERM)  # the handler's KeyboardInterrupt is raised here, and lost


def _swallow_a_signal() -> None:
    _SignalsWhenCollected()
    gc.collect()


def test_atomic_output_keeps_the_previous_file(tmp_path, default_sigterm):
    target = tmp_path / "out.txt"
    target.write_text("previous\n", encoding="utf-8")
    with pytest.raises(KeyboardInterrupt, match="signal"), AtomicOutput(str(target)) as out:
        out.write("partial\n")
        _swallow_a_signal()  # no exception reaches this frame
        out.write("the rest\n")
    assert target.read_text(encoding="utf-8") == "previous\n"
    assert os.listdir(tmp_path) == ["out.txt"]  # no temporary file left
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # the takeover ended


def test_atomic_output_stops_the_run_at_its_next_write(tmp_path, default_sigterm):
    target = tmp_path / "out.txt"
    reached = []
    with pytest.raises(KeyboardInterrupt, match="signal"), AtomicOutput(str(target)) as out:
        out.write("partial\n")
        _swallow_a_signal()
        reached.append("after the signal")
        out.writelines(["the rest\n"])
        reached.append("after the next write")
    assert reached == ["after the signal"]
    assert os.listdir(tmp_path) == []  # no temporary file, and nothing committed


def test_staged_folder_is_not_renamed_into_place(tmp_path, default_sigterm):
    target = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt, match="signal"), StagedFolder(target) as staging:
        (staging / "segments-00000.jsonl").write_text('{"id": "x"}\n', encoding="utf-8")
        _swallow_a_signal()
    assert os.listdir(tmp_path) == []


def test_a_run_without_signals_is_written(tmp_path):
    target = tmp_path / "out.txt"
    with AtomicOutput(str(target)) as out:
        out.write("whole\n")
    assert target.read_text(encoding="utf-8") == "whole\n"
