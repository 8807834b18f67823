"""Read input files into text (whole or streamed) and write output files atomically, with one-line errors.

`read_input` turns a path (or '-' for stdin) into a str; `iter_input` yields the same text in pieces,
reading at most `chunk_bytes` bytes at a time, so memory does not grow with the file (`read_input` is
its join: one code path); `checked_input` is `iter_input` with its start read at once, to refuse a bad
input early without losing what a pipe, a FIFO or /dev/stdin gives only once. They refuse directories,
missing or unreadable files, binary data and undecodable bytes with an `InputError` that says what to
do; a streamed read raises it on reaching the bad chunk, so with both NUL bytes and undecodable bytes
in a file, the first chunk holding either decides which is reported. `AtomicOutput` writes to a
temporary file next to the target and renames it over the target only on success, so an interrupted or
failed run leaves the previous file (or nothing), never a partial one; devices and pipes are written in
place. No segmentation happens here.
"""

from __future__ import annotations

import codecs
import contextlib
import itertools
import os
import secrets
import signal
import stat
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO, TextIO

from segmenter.errors import InputError, SegmenterError

STDIO = "-"
CHUNK_BYTES = 1 << 20  # default size of one read in `iter_input`
# Byte-order marks of the encodings whose text is full of NUL bytes (UTF-32 first: it starts like UTF-16).
_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_HEAD_BYTES = 4  # the longest byte-order mark
# Codecs that pick their byte order from a byte-order mark; without one, `bytes.decode` uses the machine's.
_BOM_ORDERED = {
    "utf-16": (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE),
    "utf-32": (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE),
}
_NATIVE_ORDER = "le" if sys.byteorder == "little" else "be"
# Signals that end the process by default and that a user, a terminal or a supervisor sends (SIGINT is
# Python's KeyboardInterrupt already, unless set back to the default); SIGKILL cannot be caught.
ENDING_SIGNALS = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM")
    if hasattr(signal, name)
)


class SignalTakeover:
    """While taken over, each ending signal at its default disposition raises KeyboardInterrupt, and is
    remembered; an ignored signal (a SIGHUP under nohup) stays ignored, and a handler of the caller's
    stays in place unless the caller names its signal in `also`.

    Remembered because that KeyboardInterrupt can be lost: Python runs a signal handler between the
    bytecodes of whatever runs at the time, and when that is a weakref callback or a `__del__` method
    (as during an import or a garbage collection) it prints "Exception ignored" and carries on. So
    whoever commits an output calls `raise_if_signalled` first, and an interrupted run never ends as
    if it had not been. Only the main thread may set handlers: elsewhere `take` does nothing.
    """

    def __init__(self) -> None:
        self.signalled: int | None = None  # the last signal taken, if any
        self._previous: dict[int, object] = {}

    def take(self, also: frozenset[int] = frozenset()) -> None:
        """Take over `ENDING_SIGNALS` at their default disposition, and those in `also` unless ignored."""
        if threading.current_thread() is not threading.main_thread():
            return
        for signum in ENDING_SIGNALS:
            handler = signal.getsignal(signum)
            if handler == signal.SIG_DFL or (signum in also and handler != signal.SIG_IGN):
                self._previous[signum] = signal.signal(signum, self._interrupt)

    def _interrupt(self, signum, frame):  # pragma: no cover - runs as a signal handler
        self.signalled = signum
        raise KeyboardInterrupt(f"signal {signum}")

    def raise_if_signalled(self) -> None:
        """KeyboardInterrupt if a signal was taken (its own KeyboardInterrupt may have been lost)."""
        if self.signalled is not None:
            raise KeyboardInterrupt(f"signal {self.signalled}")

    def restore(self) -> None:
        """Put the handlers found back."""
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()


def read_input(name: str, encoding: str = "utf-8", errors: str = "strict") -> str:
    """The decoded text of file `name` ('-' reads stdin). Newlines are kept exactly as in the file."""
    return "".join(iter_input(name, encoding, errors))


def iter_input(
    name: str, encoding: str = "utf-8", errors: str = "strict", chunk_bytes: int = CHUNK_BYTES
) -> Iterator[str]:
    """The decoded text of file `name` ('-' reads stdin) in pieces, reading at most `chunk_bytes` bytes
    at a time; the pieces join to `read_input`'s text. A bad encoding is refused at once; a missing,
    unreadable or directory `name` on the first `next()`; binary or undecodable data on reaching it."""
    if chunk_bytes < 1:
        raise ValueError(f"chunk_bytes must be at least 1, not {chunk_bytes}")
    codec = _text_codec(encoding)
    return _decode_stream(name, codec, encoding, errors, chunk_bytes)


def checked_input(
    name: str, encoding: str = "utf-8", errors: str = "strict", chunk_bytes: int = CHUNK_BYTES
) -> Iterator[str]:
    """`iter_input(name, ...)`, its first piece read now, so that a missing, unreadable, binary or
    undecodable start raises its `InputError` here. A regular file is closed again and read anew by the
    iterator (many files need not stay open at once); anything else (a pipe, a FIFO, /dev/stdin, a
    process substitution's /dev/fd/N, a device) gives its data only once, so it stays open and the
    iterator starts with the piece already read. stdin ('-') is not read ahead."""
    chunks = iter_input(name, encoding, errors, chunk_bytes)
    if name == STDIO:
        return chunks
    first = next(chunks, None)
    if _rereadable(name):
        chunks.close()
        return iter_input(name, encoding, errors, chunk_bytes)
    return chunks if first is None else itertools.chain([first], chunks)


def _rereadable(name: str) -> bool:
    """Whether `name` is a regular file (which can be read twice), following symbolic links."""
    try:
        return stat.S_ISREG(os.stat(name).st_mode)
    except (OSError, ValueError):  # gone since it was read: reading it again reports why
        return True


def _text_codec(encoding: str) -> codecs.CodecInfo:
    try:
        codec = codecs.lookup(encoding)
    except LookupError as exc:
        raise InputError(f"unknown encoding {encoding!r}; use a codec name such as utf-8 or latin-1") from exc
    if not getattr(codec, "_is_text_encoding", True) or codec.incrementaldecoder is None:
        # base64, rot13, zlib...: bytes-to-bytes codecs
        raise InputError(f"{encoding!r} is not a text encoding; use a codec name such as utf-8 or latin-1")
    return codec


def _decode_stream(
    name: str, codec: codecs.CodecInfo, encoding: str, errors: str, chunk_bytes: int
) -> Iterator[str]:
    label = "<stdin>" if name == STDIO else name
    with contextlib.closing(_read_chunks(name, chunk_bytes)) as chunks:
        head = _head(chunks)  # the first chunks, joined, so that any byte-order mark is whole
        decoder = _incremental_decoder(codec, head, errors)
        end = 0  # offset in the whole input just past the bytes given to the decoder
        for chunk in itertools.chain([head], chunks):
            _refuse_binary(chunk, head, codec, label)
            end += len(chunk)
            if text := _decode(decoder, chunk, end, False, label, encoding):
                yield text
        if text := _decode(decoder, b"", end, True, label, encoding):
            yield text


def _read_chunks(name: str, chunk_bytes: int) -> Iterator[bytes]:
    if name == STDIO:
        yield from _chunks_of(sys.stdin.buffer, chunk_bytes)
        return
    path = Path(name)
    try:
        if path.is_dir():  # may raise PermissionError itself when a parent folder cannot be entered
            raise InputError(f"{name} is a directory; pass the files inside it")
        with path.open("rb") as stream:
            yield from _chunks_of(stream, chunk_bytes)
    except FileNotFoundError as exc:
        raise InputError(f"{name}: no such file") from exc
    except PermissionError as exc:
        raise InputError(f"{name}: permission denied") from exc
    except OSError as exc:
        raise InputError(f"{name}: cannot read ({exc.strerror or exc})") from exc


def _chunks_of(stream: BinaryIO, chunk_bytes: int) -> Iterator[bytes]:
    while chunk := stream.read(chunk_bytes):
        yield chunk


def _head(chunks: Iterator[bytes]) -> bytes:
    """Join chunks from the start until there are `_HEAD_BYTES` bytes (fewer only in a shorter input)."""
    head = b""
    for chunk in chunks:
        head += chunk
        if len(head) >= _HEAD_BYTES:
            break
    return head


def _incremental_decoder(codec: codecs.CodecInfo, head: bytes, errors: str) -> codecs.IncrementalDecoder:
    marks = _BOM_ORDERED.get(codec.name)
    if marks is not None and not head.startswith(marks):
        # `bytes.decode` reads such a stream in the machine's byte order; the incremental decoder refuses it
        return codecs.getincrementaldecoder(f"{codec.name}-{_NATIVE_ORDER}")(errors)
    return codec.incrementaldecoder(errors)


def _refuse_binary(chunk: bytes, head: bytes, codec: codecs.CodecInfo, label: str) -> None:
    if b"\x00" not in chunk or codec.name.startswith(("utf-16", "utf-32")):  # name is normalised: u16 too
        return
    for bom, wide in _WIDE_BOMS:
        if head.startswith(bom):
            raise InputError(
                f"{label} is {wide} text (it starts with a byte-order mark); pass --encoding {wide}"
            )
    raise InputError(f"{label} looks like a binary file (it contains NUL bytes); pass a text file")


def _decode(
    decoder: codecs.IncrementalDecoder, data: bytes, end: int, final: bool, label: str, encoding: str
) -> str:
    """Decode the next `data`, which ends at offset `end` of the whole input."""
    try:
        return decoder.decode(data, final)
    except UnicodeDecodeError as exc:
        # exc.object is a tail of the input: the bytes the decoder held back plus `data` (less a byte-order
        # mark it stripped), so exc.start counts from offset `end - len(exc.object)` of the whole input.
        offset = end - len(exc.object) + exc.start
        byte = bytes(exc.object[exc.start : exc.start + 1]).hex()
        raise InputError(
            f"{label} is not valid {encoding} (byte 0x{byte} at offset {offset}); "
            "pass --encoding (e.g. --encoding latin-1) or --errors replace"
        ) from exc


class AtomicOutput:
    """Context manager yielding a text stream; '-' is stdout, a regular file (new or existing) is written
    atomically.

    Atomically: into a temporary file beside it, renamed over it on success, so a failed or interrupted
    run leaves the previous file as it was. An existing file keeps its permission bits, and a symbolic
    link stays a link (the file it points to is replaced). Anything else that exists at the path (a
    device such as /dev/null, a named pipe) is opened and written in place, and so is any path under
    /dev/ or /proc/ (/dev/stdout, /dev/fd/N of a shell redirection or process substitution), even when
    it leads to a regular file that may be open for appending. While open, every signal in
    `ENDING_SIGNALS` whose handler is the default (which would end the process at once) raises
    KeyboardInterrupt instead, so the temporary file is removed on the way out; an ignored signal (a
    SIGHUP under nohup) stays ignored, and a handler of the caller's stays in place. Where Python
    swallowed that KeyboardInterrupt, the stream's next write raises it again, and the file is never
    committed.
    """

    def __init__(self, target: str):
        self.target = target
        self._tmp: Path | None = None
        self._target_path: Path | None = None  # the regular file replaced on success (links resolved)
        self._mode: int | None = None  # permission bits of the file replaced
        self._stream: TextIO | None = None
        self._signals = SignalTakeover()

    def __enter__(self) -> TextIO:
        if self.target == STDIO:
            return _EncodableStdout(sys.stdout)
        path = Path(self.target)
        try:
            if path.is_dir():
                raise InputError(f"output {self.target} is a directory; pass a file path")
            try:
                existing = os.stat(path)  # follows symbolic links
            except FileNotFoundError:
                existing = None
            if existing is not None and (not stat.S_ISREG(existing.st_mode) or _is_descriptor(path)):
                return self._open_in_place(path)
            path = Path(os.path.realpath(path))  # a link stays a link: its target is replaced
            if not path.parent.exists():
                raise InputError(f"output folder {path.parent} does not exist")
        except OSError as exc:  # a parent folder that cannot be entered
            raise InputError(f"cannot write to {path.parent}: {exc.strerror or exc}") from exc
        self._target_path = path
        # The handlers go in before the temporary file exists, and the file's name is known before it
        # is created: a signal arriving at any moment then leaves no temporary file behind.
        self._signals.take()
        self._mode = None if existing is None else stat.S_IMODE(existing.st_mode)  # kept on replace
        try:
            self._stream = os.fdopen(self._create_temporary(path), "w", encoding="utf-8", newline="")
        except BaseException as exc:
            self._signals.restore()
            if self._tmp is not None:
                self._tmp.unlink(missing_ok=True)
                self._tmp = None
            if isinstance(exc, OSError):
                raise InputError(f"cannot write to {path.parent}: {exc.strerror or exc}") from exc
            raise
        return _InterruptibleStream(self._stream, self._signals)

    def _open_in_place(self, path: Path) -> TextIO:
        """A device or pipe: nothing to replace atomically, so write to it directly."""
        try:
            # append: reopening /dev/fd/N of a `>>` redirection must not truncate the file behind it
            self._stream = open(path, "a", encoding="utf-8", newline="")  # noqa: SIM115 - closed in __exit__
        except OSError as exc:
            raise InputError(f"cannot write to {path}: {exc.strerror or exc}") from exc
        return self._stream

    def _create_temporary(self, path: Path) -> int:
        """Create `.NAME.RANDOM.tmp` beside `path` (mode 0o666 less the umask, like any new file)."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
        while True:
            self._tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
            try:
                return os.open(self._tmp, flags, 0o666)
            except OSError as exc:
                self._tmp = None  # not created, or not ours
                if not isinstance(exc, FileExistsError):
                    raise

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._stream is None:
            return
        if self._tmp is None:  # written in place
            try:
                self._stream.close()
            except OSError as exc:
                if exc_type is None:
                    raise InputError(f"cannot write to {self.target}: {exc.strerror or exc}") from exc
            return
        try:
            if exc_type is None:
                self._stream.flush()
                os.fsync(self._stream.fileno())
            self._stream.close()
            if exc_type is None:
                self._signals.raise_if_signalled()  # an interrupt whose exception Python swallowed
                if self._mode is not None:
                    os.chmod(self._tmp, self._mode)  # the file keeps its permission bits
                os.replace(self._tmp, self._target_path)
        finally:
            if self._tmp is not None and self._tmp.exists():
                self._tmp.unlink()
            self._signals.restore()


class _InterruptibleStream:
    """The temporary file of `AtomicOutput`: each write first raises the KeyboardInterrupt of a signal
    taken since it opened (`SignalTakeover.raise_if_signalled`), so a run whose interrupt Python
    swallowed stops at its next write instead of working to its end and then refusing to commit."""

    def __init__(self, stream: TextIO, signals: SignalTakeover):
        self._stream, self._signals = stream, signals

    def write(self, text: str) -> int:
        self._signals.raise_if_signalled()
        return self._stream.write(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


class _EncodableStdout:
    """stdout for `AtomicOutput('-')`: a character the stream's encoding cannot hold (say, an emoji with
    PYTHONIOENCODING=ascii) is a one-line `SegmenterError` instead of a traceback."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except UnicodeEncodeError as exc:
            raise SegmenterError(
                f"stdout ({exc.encoding}) cannot encode {exc.object[exc.start : exc.end]!a}; "
                "write to a file with -o (always UTF-8) or set PYTHONIOENCODING=utf-8"
            ) from exc

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _is_descriptor(path: Path) -> bool:
    """/dev/stdout, /dev/fd/N, /proc/self/fd/N: an open descriptor (maybe appending), written in place."""
    return str(path).startswith(("/dev/", "/proc/"))
