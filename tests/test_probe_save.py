"""`Probe.save` is atomic: the new folder replaces the old one in one rename, or nothing changes."""

from __future__ import annotations

import os

import numpy as np
import pytest

from segmenter.probe import probe as probe_module
from segmenter.probe.probe import ARRAYS, META, Probe


def _probe(value: float, meta: dict | None = None) -> Probe:
    mean, scale = np.zeros(3, np.float32), np.ones(3, np.float32)
    weights = (np.full((3, 1), value, np.float32),)
    return Probe(mean, scale, weights, (np.zeros(1, np.float32),), {"kind": "logistic", **(meta or {})})


def _snapshot(folder) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def _leftovers(parent, folder) -> list[str]:
    return sorted(path.name for path in parent.iterdir() if path != folder)


def test_a_new_folder_holds_the_probe(tmp_path):
    folder = tmp_path / "deep" / "probe"
    assert _probe(0.5).save(folder) == folder
    loaded = Probe.load(folder)
    np.testing.assert_array_equal(loaded.weights[0], _probe(0.5).weights[0])
    assert sorted(path.name for path in folder.iterdir()) == [META, ARRAYS]
    assert _leftovers(folder.parent, folder) == []


def test_an_existing_folder_is_replaced_and_keeps_its_other_files(tmp_path):
    folder = tmp_path / "probe"
    _probe(0.5).save(folder)
    (folder / "NOTES.txt").write_text("mine", encoding="utf-8")
    (folder / "runs").mkdir()
    (folder / "runs" / META).write_text("{}", encoding="utf-8")  # not the probe's: below the top
    _probe(2.0, {"note": "second"}).save(folder)
    loaded = Probe.load(folder)
    assert loaded.meta["note"] == "second" and loaded.weights[0][0, 0] == 2.0
    assert (folder / "NOTES.txt").read_text(encoding="utf-8") == "mine"
    assert (folder / "runs" / META).read_text(encoding="utf-8") == "{}"
    assert _leftovers(tmp_path, folder) == []


def test_an_empty_existing_folder_is_filled(tmp_path):
    folder = tmp_path / "probe"
    folder.mkdir()
    _probe(0.5).save(folder)
    assert Probe.load(folder).weights[0][0, 0] == 0.5


def test_a_failure_midway_leaves_the_previous_folder_intact(tmp_path):
    folder = tmp_path / "probe"
    _probe(0.5).save(folder)
    before = _snapshot(folder)
    unwritable = _probe(2.0, {"not json": object()})  # the arrays are written, then meta.json fails
    with pytest.raises(TypeError, match="not JSON serializable"):
        unwritable.save(folder)
    assert _snapshot(folder) == before
    assert _leftovers(tmp_path, folder) == []


def test_an_interrupted_save_into_a_new_folder_leaves_nothing(tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(probe_module.np, "savez", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _probe(0.5).save(tmp_path / "probe")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_rename_puts_the_previous_folder_back(tmp_path, monkeypatch):
    folder = tmp_path / "probe"
    _probe(0.5).save(folder)
    before = _snapshot(folder)
    real_replace, calls = os.replace, []

    def replace_failing_second(source, target):
        calls.append(target)
        if len(calls) == 2:  # the new folder moving into place
            raise OSError("disk gone")
        real_replace(source, target)

    monkeypatch.setattr(probe_module.os, "replace", replace_failing_second)
    with pytest.raises(OSError, match="disk gone"):
        _probe(2.0).save(folder)
    assert _snapshot(folder) == before
    assert _leftovers(tmp_path, folder) == []


def test_a_link_to_a_folder_is_followed(tmp_path):
    target = tmp_path / "real"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    assert _probe(0.5).save(link) == link
    assert link.is_symlink() and Probe.load(target).weights[0][0, 0] == 0.5


def test_a_file_in_the_way_is_refused(tmp_path):
    (tmp_path / "probe").write_text("x", encoding="utf-8")
    with pytest.raises(FileExistsError):
        _probe(0.5).save(tmp_path / "probe")
    assert _leftovers(tmp_path, tmp_path / "probe") == []
