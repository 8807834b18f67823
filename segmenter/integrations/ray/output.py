"""Write the rows of `segmenter.integrations.ray.engine` into an output folder that appears only when it is
complete.

`StagedFolder(target)` refuses a `target` that exists (a rerun into the same folder is refused, never
merged: delete the folder or pass a new one), writes everything into a hidden staging folder beside it
(`.NAME.RANDOM.partial`) and renames that folder to `target` in one step on success. A failed or
interrupted run (an exception, Ctrl-C, SIGTERM or SIGHUP, unless ignored) removes the staging folder;
only SIGKILL or a power cut can leave one behind, and it never has the target's name.

`write_rows` fills the folder from the driver: segment rows go into shards `segments-00000.jsonl`
(or `.parquet`) of at most `ROWS_PER_SHARD` rows, error rows into `errors.jsonl` (always written,
empty when every document was read), and `manifest.json` (counts and shard names) last. Rows are
written in the order they arrive. Nothing here runs Ray or segments text.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
from collections.abc import Callable, Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from segmenter.errors import InputError
from segmenter.integrations.ray.engine import OUTPUT_SCHEMA, SEGMENT_FIELDS
from segmenter.io import SignalTakeover

ROWS_PER_SHARD = 100_000
_TAKEN_OVER = frozenset({signal.SIGINT, signal.SIGTERM})
FORMATS = ("jsonl", "parquet")
SEGMENT_SCHEMA = pa.schema([OUTPUT_SCHEMA.field(name) for name in SEGMENT_FIELDS])


class StagedFolder:
    """Context manager yielding a new, empty staging folder that becomes `target` on success."""

    def __init__(self, target: str | Path):
        self.target = Path(target)
        self.staging: Path | None = None
        self._signals = SignalTakeover()

    def check(self) -> None:
        """Refuse a target that exists or whose parent folder does not (before any work starts)."""
        if self.target.exists() or self.target.is_symlink():
            raise InputError(
                f"output folder {self.target} already exists; remove it or pass a new folder "
                "(runs are not merged into an existing folder)"
            )
        if not self.target.parent.is_dir():
            raise InputError(f"output folder {self.target.parent} does not exist")

    def __enter__(self) -> Path:
        self.check()
        self._signals.take(also=_TAKEN_OVER)  # Ray's driver handles SIGTERM by exiting at once
        self.staging = self.target.parent / f".{self.target.name}.{secrets.token_hex(6)}.partial"
        try:
            self.staging.mkdir()
        except OSError as exc:
            self._signals.restore()
            raise InputError(f"cannot write to {self.target.parent}: {exc.strerror or exc}") from exc
        return self.staging

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            if exc_type is None:
                self._signals.raise_if_signalled()  # an interrupt whose exception Python swallowed
                self.check()  # another run may have made it meanwhile: keep ours staged, say so
                os.rename(self.staging, self.target)
                self.staging = None
        finally:
            if self.staging is not None and (exc_type is not None or self._signals.signalled is not None):
                shutil.rmtree(self.staging, ignore_errors=True)
            self._signals.restore()


def write_rows(
    batches: Iterable[pa.Table], folder: Path, fmt: str, progress: Callable[[int], None] = lambda n: None
) -> dict:
    """Write `batches` (tables of `OUTPUT_SCHEMA`) into `folder`; the manifest's contents.

    progress is called with the characters covered by each batch's segments."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, not {fmt!r}")
    shards = _Shards(folder, fmt)
    counts = {"documents_segmented": 0, "segments": 0, "errors": 0}
    with open(folder / "errors.jsonl", "w", encoding="utf-8") as errors_file:
        for batch in batches:
            is_error = batch.column("error").is_valid()
            errors = batch.filter(is_error)
            segments = batch.filter(pc.invert(is_error)).select(list(SEGMENT_FIELDS))
            for row in errors.select(["id", "error"]).to_pylist():
                errors_file.write(json.dumps(row, ensure_ascii=False) + "\n")
            counts["errors"] += errors.num_rows
            counts["segments"] += segments.num_rows
            counts["documents_segmented"] += pc.sum(pc.equal(segments["index"], 0)).as_py() or 0
            shards.add(segments)
            progress(pc.sum(pc.subtract(segments["end"], segments["start"])).as_py() or 0)
        shards.close()
        errors_file.flush()
        os.fsync(errors_file.fileno())
    manifest = {**counts, "format": fmt, "shards": shards.names, "errors_file": "errors.jsonl"}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


class _Shards:
    """Segment rows into numbered files of at most ROWS_PER_SHARD rows."""

    def __init__(self, folder: Path, fmt: str):
        self.folder, self.fmt = folder, fmt
        self.names: list[str] = []
        self._rows = 0
        self._file = None
        self._parquet: pq.ParquetWriter | None = None

    def add(self, table: pa.Table) -> None:
        while table.num_rows:
            if self._file is None and self._parquet is None:
                self._open()
            room = ROWS_PER_SHARD - self._rows
            head, table = table.slice(0, room), table.slice(room)
            if self.fmt == "parquet":
                self._parquet.write_table(head.cast(SEGMENT_SCHEMA))
            else:
                self._file.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in head.to_pylist())
            self._rows += head.num_rows
            if self._rows == ROWS_PER_SHARD:
                self._close_one()

    def _open(self) -> None:
        name = f"segments-{len(self.names):05d}.{self.fmt}"
        self.names.append(name)
        path = self.folder / name
        if self.fmt == "parquet":
            self._parquet = pq.ParquetWriter(path, SEGMENT_SCHEMA)
        else:
            self._file = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed in _close_one
        self._rows = 0

    def _close_one(self) -> None:
        if self._parquet is not None:
            self._parquet.close()
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
        self._file = self._parquet = None

    def close(self) -> None:
        if not self.names:  # no segments at all: one empty shard, so readers find the schema
            self._open()
        self._close_one()
