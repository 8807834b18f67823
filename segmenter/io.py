"""Read input files into text and write output files atomically, with one-line errors.

`read_input` turns a path (or '-' for stdin) into a str, refusing directories, missing or unreadable
files, binary data and undecodable bytes with an `InputError` that says what to do. `AtomicOutput`
writes to a temporary file next to the target and renames it over the target only on success, so an
interrupted or failed run leaves the previous file (or nothing), never a partial one. No segmentation
happens here.
"""

from __future__ import annotations

import codecs
import os
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import TextIO

from segmenter.errors import InputError

STDIO = "-"


def read_input(name: str, encoding: str = "utf-8", errors: str = "strict") -> str:
    """The decoded text of file `name` ('-' reads stdin). Newlines are kept exactly as in the file."""
    try:
        codecs.lookup(encoding)
    except LookupError as exc:
        raise InputError(f"unknown encoding {encoding!r}; use a codec name such as utf-8 or latin-1") from exc
    label = "<stdin>" if name == STDIO else name
    data = _read_bytes(name)
    if b"\x00" in data and not encoding.lower().replace("_", "-").startswith(("utf-16", "utf-32")):
        raise InputError(f"{label} looks like a binary file (it contains NUL bytes); pass a text file")
    try:
        return data.decode(encoding, errors=errors)
    except UnicodeDecodeError as exc:
        byte = data[exc.start : exc.start + 1].hex()
        raise InputError(
            f"{label} is not valid {encoding} (byte 0x{byte} at offset {exc.start}); "
            "pass --encoding (e.g. --encoding latin-1) or --errors replace"
        ) from exc


def _read_bytes(name: str) -> bytes:
    if name == STDIO:
        return sys.stdin.buffer.read()
    path = Path(name)
    if path.is_dir():
        raise InputError(f"{name} is a directory; pass the files inside it")
    try:
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise InputError(f"{name}: no such file") from exc
    except PermissionError as exc:
        raise InputError(f"{name}: permission denied") from exc
    except OSError as exc:
        raise InputError(f"{name}: cannot read ({exc.strerror or exc})") from exc


class AtomicOutput:
    """Context manager yielding a text stream; '-' is stdout, anything else is written atomically.

    While open, SIGTERM is turned into KeyboardInterrupt so the temporary file is removed on the way out.
    """

    def __init__(self, target: str):
        self.target = target
        self._tmp: Path | None = None
        self._stream: TextIO | None = None
        self._previous_handler = None

    def __enter__(self) -> TextIO:
        if self.target == STDIO:
            return sys.stdout
        path = Path(self.target)
        if path.is_dir():
            raise InputError(f"output {self.target} is a directory; pass a file path")
        if not path.parent.exists():
            raise InputError(f"output folder {path.parent} does not exist")
        try:
            handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        except OSError as exc:
            raise InputError(f"cannot write to {path.parent}: {exc.strerror or exc}") from exc
        self._tmp = Path(tmp)
        self._stream = os.fdopen(handle, "w", encoding="utf-8", newline="")
        if threading.current_thread() is threading.main_thread():
            self._previous_handler = signal.signal(signal.SIGTERM, _interrupt)
        return self._stream

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._stream is None:
            return
        try:
            if exc_type is None:
                self._stream.flush()
                os.fsync(self._stream.fileno())
            self._stream.close()
            if exc_type is None:
                os.replace(self._tmp, self.target)
        finally:
            if self._tmp is not None and self._tmp.exists():
                self._tmp.unlink()
            if self._previous_handler is not None:
                signal.signal(signal.SIGTERM, self._previous_handler)


def _interrupt(signum, frame):  # pragma: no cover - exercised through a subprocess test
    raise KeyboardInterrupt(f"signal {signum}")
