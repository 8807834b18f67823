"""`segmenter cache`: the folder, what it holds, and purging only the cache's own files."""

from __future__ import annotations

from segmenter.cli.main import main


def test_cache_dir_info_and_purge(runner, tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("SEGMENTER_CACHE", str(folder))
    assert runner.invoke(main, ["cache", "dir"]).stdout == f"{folder}\n"
    empty = runner.invoke(main, ["cache", "info"])
    assert empty.exit_code == 0 and empty.stdout == f"{folder}: 0 int8 graphs, 0 entries, 0.0 MB\n"

    folder.mkdir()
    (folder / "int8-aaaa.onnx").write_bytes(b"x" * 1_500_000)
    (folder / "int8-bbbb.onnx").write_bytes(b"x" * 500_000)
    (folder / "compiled-cccc.json").write_text("{}", encoding="utf-8")
    (folder / "tmp1234.part").write_bytes(b"half")
    (folder / "notes.txt").write_text("mine", encoding="utf-8")  # not the cache's
    info = runner.invoke(main, ["cache", "info"])
    assert info.stdout == f"{folder}: 2 int8 graphs, 1 entries, 2.0 MB\n"
    purged = runner.invoke(main, ["cache", "purge"])
    assert purged.exit_code == 0 and purged.stdout == f"removed 4 files (2.0 MB) from {folder}\n"
    assert [path.name for path in folder.iterdir()] == ["notes.txt"]


def test_a_purged_cache_is_rebuilt_by_the_next_int8_run(runner, tmp_path, monkeypatch, tiny_bert_dir):
    from segmenter.cli.cache import cached_files
    from segmenter.encoder.torch.encoder import Encoder

    folder = tmp_path / "cache"
    monkeypatch.setenv("SEGMENTER_CACHE", str(folder))
    Encoder(str(tiny_bert_dir), max_layer=1, precision="int8")
    assert cached_files(folder)
    assert runner.invoke(main, ["cache", "purge"]).exit_code == 0
    assert cached_files(folder) == []
    Encoder(str(tiny_bert_dir), max_layer=1, precision="int8")
    assert [path.name.startswith("int8-") for path in cached_files(folder)] == [True]


def test_a_file_that_cannot_be_deleted_is_one_line_and_exit_1(runner, tmp_path, monkeypatch):
    from pathlib import Path

    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / "int8-aaaa.onnx").write_bytes(b"x")
    monkeypatch.setenv("SEGMENTER_CACHE", str(folder))

    def refuse(self, missing_ok=False):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "unlink", refuse)
    result = runner.invoke(main, ["cache", "purge"])
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == [
        f"Error: cannot delete {folder / 'int8-aaaa.onnx'}: Permission denied"
    ]
