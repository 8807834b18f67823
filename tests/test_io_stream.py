"""`iter_input` streams what `read_input` returns: the same text (newlines kept exactly, characters and
CRLF split across chunk boundaries whole again), the same one-line errors (byte offsets counted in the
whole input, not in a chunk), stdin read piecewise too, and no read larger than `chunk_bytes`."""

from __future__ import annotations

import codecs
import io
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segmenter.errors import InputError
from segmenter.io import iter_input, read_input

TEXT = "Zoë’s café opened.\r\nIt was 🎉 busy!\r\n\r\nOld Mac line\rend\n今日は晴れ。"
ALPHABET = st.sampled_from(list("ab .\r\n\t") + ["é", "’", "€", "今", "🎉", "\u2028", "\ufeff"])


def write(tmp_path: Path, data: bytes, name: str = "input.txt") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def streamed(name: str, chunk_bytes: int, encoding: str = "utf-8", errors: str = "strict") -> str:
    pieces = list(iter_input(name, encoding, errors, chunk_bytes=chunk_bytes))
    assert all(pieces), "no empty pieces"
    return "".join(pieces)


def error_of(call) -> str:
    with pytest.raises(InputError) as caught:
        call()
    return str(caught.value)


# -- the same text -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("chunk_bytes", range(1, 8))
def test_join_equals_read_input_with_tiny_chunks(tmp_path, chunk_bytes):
    name = write(tmp_path, TEXT.encode())
    assert streamed(name, chunk_bytes) == read_input(name) == TEXT


def test_crlf_and_multibyte_character_split_across_chunks(tmp_path):
    data = b"ab\r\n" + "é🎉".encode() + b"\r\n"  # chunks of 3: b"ab\r" b"\n\xc3\xa9" b"\xf0\x9f\x8e" ...
    name = write(tmp_path, data)
    pieces = list(iter_input(name, chunk_bytes=3))
    assert "".join(pieces) == "ab\r\né🎉\r\n"
    assert len(pieces) > 1


@settings(max_examples=60, deadline=None)
@given(text=st.text(ALPHABET, max_size=40), chunk_bytes=st.integers(1, 7))
def test_join_equals_read_input_for_any_utf8_text(tmp_path_factory, text, chunk_bytes):
    name = write(tmp_path_factory.mktemp("utf8"), text.encode())
    assert streamed(name, chunk_bytes) == read_input(name) == text


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(ALPHABET, max_size=30),
    encoding=st.sampled_from(
        ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig", "shift_jis", "cp1252"]
    ),
    chunk_bytes=st.integers(1, 7),
)
def test_join_equals_read_input_in_other_encodings(tmp_path_factory, text, encoding, chunk_bytes):
    data = text.encode(encoding, errors="ignore")
    name = write(tmp_path_factory.mktemp("enc"), data)
    expected = data.decode(encoding)
    assert streamed(name, chunk_bytes, encoding) == read_input(name, encoding) == expected


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
@pytest.mark.parametrize("chunk_bytes", [1, 3, 64])
def test_wide_text_without_byte_order_mark_is_read_in_machine_order(tmp_path, encoding, chunk_bytes):
    """As `bytes.decode` does; the incremental decoder alone refuses a stream that lacks the mark."""
    data = TEXT.encode(f"{encoding}-{'le' if sys.byteorder == 'little' else 'be'}")
    name = write(tmp_path, data)
    assert streamed(name, chunk_bytes, encoding) == read_input(name, encoding) == data.decode(encoding)


@pytest.mark.parametrize("chunk_bytes", [1, 2, 5])
def test_errors_replace_streams_the_same_text(tmp_path, chunk_bytes):
    data = "Zoë’s café.".encode() + b" \xff\xfe bad \xe2\x80 bytes \xc3"
    name = write(tmp_path, data)
    text = data.decode("utf-8", errors="replace")
    assert streamed(name, chunk_bytes, errors="replace") == read_input(name, errors="replace") == text


def test_empty_file(tmp_path):
    name = write(tmp_path, b"")
    assert list(iter_input(name, chunk_bytes=1)) == []
    assert read_input(name) == ""


# -- stdin ---------------------------------------------------------------------------------------------------


class CountingReader(io.BytesIO):
    """A byte stream that records the size asked of every read."""

    def __init__(self, data: bytes):
        super().__init__(data)
        self.asked: list[int] = []

    def read(self, size: int | None = -1) -> bytes:
        self.asked.append(-1 if size is None else size)
        return super().read(size)


@pytest.mark.parametrize("chunk_bytes", [1, 4, 1 << 20])
def test_stdin_is_read_in_chunks(monkeypatch, chunk_bytes):
    data = TEXT.encode() * 3
    reader = CountingReader(data)
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=reader))
    assert streamed("-", chunk_bytes) == TEXT * 3
    assert reader.asked and all(0 < size <= chunk_bytes for size in reader.asked)
    assert len(reader.asked) == len(data) // chunk_bytes + (1 if len(data) % chunk_bytes else 0) + 1


def test_stdin_errors_name_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=io.BytesIO(b"abcdefgh\xff")))
    assert error_of(lambda: streamed("-", 2)).startswith("<stdin> is not valid utf-8 (byte 0xff at offset 8)")


# -- no read larger than chunk_bytes -----------------------------------------------------------------------


@pytest.fixture
def readers(monkeypatch) -> list[CountingReader]:
    """Every file opened for reading bytes through `Path.open` from now on, as a reader that records
    each read's size."""
    opened: list[CountingReader] = []
    real_open = Path.open

    def counting_open(self, mode="r", *args, **kwargs):
        if mode != "rb":
            return real_open(self, mode, *args, **kwargs)
        with real_open(self, mode, *args, **kwargs) as stream:
            opened.append(CountingReader(stream.read()))
        return opened[-1]

    monkeypatch.setattr(Path, "open", counting_open)
    return opened


def test_file_reads_never_exceed_chunk_bytes(tmp_path, readers):
    data = TEXT.encode() * 50
    name = write(tmp_path, data)
    for chunk_bytes in (1, 7, 100):
        readers.clear()
        assert streamed(name, chunk_bytes) == TEXT * 50
        (reader,) = readers
        assert max(reader.asked) == chunk_bytes
        assert reader.closed, "the file is closed once read"


def test_iteration_is_lazy(tmp_path, readers):
    """Taking the first piece reads about one chunk, not the file."""
    name = write(tmp_path, b"x" * 10_000)
    pieces = iter_input(name, chunk_bytes=100)
    assert next(pieces) == "x" * 100
    assert readers[0].asked == [100]
    pieces.close()
    assert readers[0].closed


# -- the same errors -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("chunk_bytes", [1, 3, 8, 16])
def test_invalid_byte_after_the_first_chunk_reports_the_global_offset(tmp_path, chunk_bytes):
    data = "Zoë’s café opened. ".encode() + b"\xff" + b" tail"
    offset = data.index(b"\xff")
    name = write(tmp_path, data)
    message = error_of(lambda: streamed(name, chunk_bytes))
    assert message == error_of(lambda: read_input(name))
    assert f"byte 0xff at offset {offset}" in message
    assert message.startswith(f"{name} is not valid utf-8")


@pytest.mark.parametrize("chunk_bytes", [1, 2, 3, 5])
def test_truncated_character_at_the_end_reports_its_start(tmp_path, chunk_bytes):
    data = "Zoë’s café".encode()[:-1]
    name = write(tmp_path, data)
    message = error_of(lambda: streamed(name, chunk_bytes))
    assert message == error_of(lambda: read_input(name))
    assert "byte 0xc3 at offset 12" in message


def test_offset_after_a_stripped_byte_order_mark_counts_the_mark(tmp_path):
    data = codecs.BOM_UTF8 + b"ab\xff"
    name = write(tmp_path, data)
    message = error_of(lambda: streamed(name, 2, "utf-8-sig"))
    assert message == error_of(lambda: read_input(name, "utf-8-sig"))
    assert "byte 0xff at offset 5" in message


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(ALPHABET, max_size=30),
    bad=st.sampled_from([b"\xff", b"\xc3", b"\xe2\x80", b"\xed\xa0\x80", b"\x80"]),
    where=st.floats(0, 1),
    chunk_bytes=st.integers(1, 7),
)
def test_undecodable_bytes_give_whole_file_message(tmp_path_factory, text, bad, where, chunk_bytes):
    head = text[: int(len(text) * where)]  # `bad` goes in at a character boundary
    data = head.encode() + bad + text[len(head) :].encode()
    name = write(tmp_path_factory.mktemp("bad"), data)
    try:
        data.decode()
    except UnicodeDecodeError as exc:
        expected = exc.start
    else:  # pragma: no cover - every `bad` above is invalid where it is put
        pytest.fail("expected undecodable data")
    message = error_of(lambda: streamed(name, chunk_bytes))
    assert message == error_of(lambda: read_input(name))
    assert f"at offset {expected});" in message


@pytest.mark.parametrize("chunk_bytes", [1, 4, 10])
def test_nul_in_a_later_chunk_is_binary(tmp_path, chunk_bytes):
    name = write(tmp_path, b"It rained all day. We stayed in." + b"\x00" + b" The end.")
    message = error_of(lambda: streamed(name, chunk_bytes))
    assert message == error_of(lambda: read_input(name))
    assert message == f"{name} looks like a binary file (it contains NUL bytes); pass a text file"


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
@pytest.mark.parametrize("chunk_bytes", [1, 2, 3, 64])
def test_wide_text_read_as_utf8_is_named(tmp_path, encoding, chunk_bytes):
    wide = encoding[:6]
    name = write(tmp_path, ("\ufeff" + TEXT).encode(encoding))
    message = error_of(lambda: streamed(name, chunk_bytes))
    assert message == error_of(lambda: read_input(name))
    assert message == f"{name} is {wide} text (it starts with a byte-order mark); pass --encoding {wide}"


def test_nul_is_no_binary_sign_in_wide_encodings(tmp_path):
    name = write(tmp_path, TEXT.encode("utf-16-le"))
    assert streamed(name, 3, "UTF-16LE") == read_input(name, "utf_16_le") == TEXT


@pytest.mark.parametrize(
    ("encoding", "message"),
    [
        ("klingon", "unknown encoding 'klingon'; use a codec name such as utf-8 or latin-1"),
        ("base64", "'base64' is not a text encoding; use a codec name such as utf-8 or latin-1"),
        ("rot13", "'rot13' is not a text encoding; use a codec name such as utf-8 or latin-1"),
    ],
)
def test_bad_encodings_are_refused_before_reading(tmp_path, encoding, message):
    name = str(tmp_path / "never-opened.txt")  # missing: the encoding is refused first
    assert error_of(lambda: iter_input(name, encoding)) == message
    assert error_of(lambda: read_input(name, encoding)) == message


def test_chunk_bytes_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="chunk_bytes"):
        iter_input(write(tmp_path, b"x"), chunk_bytes=0)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing.txt", "{}: no such file"),
        (lambda d: d, "{} is a directory; pass the files inside it"),
    ],
    ids=["missing", "directory"],
)
def test_path_errors_come_on_the_first_next(tmp_path, make, message):
    name = str(make(tmp_path))
    pieces = iter_input(name, chunk_bytes=1)
    assert error_of(lambda: next(pieces)) == message.format(name)
    assert error_of(lambda: read_input(name)) == message.format(name)


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (PermissionError(13, "Permission denied"), "{}: permission denied"),
        (OSError(5, "Input/output error"), "{}: cannot read (Input/output error)"),
    ],
    ids=["permission", "other"],
)
def test_open_errors_come_on_the_first_next(tmp_path, monkeypatch, error, message):
    name = write(tmp_path, TEXT.encode())

    def refuse(self, *args, **kwargs):
        raise error

    monkeypatch.setattr(Path, "open", refuse)
    assert error_of(lambda: next(iter_input(name))) == message.format(name)
    assert error_of(lambda: read_input(name)) == message.format(name)


def test_read_error_in_a_later_chunk_is_one_clear_line(tmp_path, monkeypatch):
    name = write(tmp_path, TEXT.encode())

    class FailingReader(io.BytesIO):
        def read(self, size=-1):
            if self.tell() >= 8:
                raise OSError(5, "Input/output error")
            return super().read(size)

    monkeypatch.setattr(Path, "open", lambda self, *args, **kwargs: FailingReader(TEXT.encode()))
    pieces = iter_input(name, chunk_bytes=4)
    assert next(pieces)
    assert error_of(lambda: list(pieces)) == f"{name}: cannot read (Input/output error)"
