"""Turn the CLI's INPUTS (text files, folders, globs; JSONL and Parquet files) into one Ray dataset of
documents with the columns `id`, `text` and `read_error`, which `segmenter.integrations.ray.engine` segments.

`expand_inputs` lists the files on the driver (a folder: every file under it, in name order; a glob:
its matches, in name order) and refuses, with an `InputError`, a name that matches nothing. A text
file is one document whose id is its path as listed. A JSONL file (`.jsonl`) is a document per line,
with its text in `text_column` and its id in `id_column` (default: `PATH:LINE`, from 1). A Parquet
file (`.parquet`) is a document per row (id: `id_column`, default `PATH:ROW`, from 1). Each file is
read whole by one Ray task, so on a cluster every node must see the paths. A document that cannot
be read (bytes that do not decode, a line that is not a JSON object, a missing or non-string text)
gets its reason in `read_error` instead of a text. Nothing here segments or writes.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from segmenter.errors import InputError
from segmenter.extras import require

pa = require("pyarrow", "ray", "reading inputs for --engine ray")
pq = require("pyarrow.parquet", "ray", "reading inputs for --engine ray")

from segmenter.integrations.ray.engine import READ_ERROR_COLUMN, read_documents, text_of

if TYPE_CHECKING:  # pragma: no cover
    import ray.data

JSONL_SUFFIXES = (".jsonl",)
PARQUET_SUFFIXES = (".parquet",)


def expand_inputs(inputs: list[str]) -> list[str]:
    """The files named by `inputs` (files, folders, globs), in the order given, each once."""
    files: list[str] = []
    for name in inputs:
        if os.path.isdir(name):
            found = sorted(str(p) for p in Path(name).rglob("*") if p.is_file())
        elif glob.has_magic(name) and not os.path.exists(name):
            found = sorted(p for p in glob.glob(name, recursive=True) if os.path.isfile(p))
        elif os.path.isfile(name):
            found = [name]
        else:
            raise InputError(f"{name}: no such file")
        if not found:
            raise InputError(f"{name} names no files")
        for path in found:
            if not os.access(path, os.R_OK):
                raise InputError(f"{path}: permission denied")
        files.extend(found)
    return list(dict.fromkeys(files))


def documents_dataset(
    files: list[str],
    text_column: str = "text",
    id_column: str | None = None,
    encoding: str = "utf-8",
    errors: str = "strict",
) -> ray.data.Dataset:
    """One dataset of the documents of `files` (see the module docstring), in file order."""
    import ray.data

    listing = ray.data.from_items([{"path": path} for path in files], override_num_blocks=len(files))
    return listing.flat_map(
        _read_file,
        fn_kwargs={
            "text_column": text_column,
            "id_column": id_column,
            "encoding": encoding,
            "errors": errors,
        },
        num_cpus=0,  # reading is light: the actors may take every CPU without starving it
    )


def _read_file(row: dict, text_column: str, id_column: str | None, encoding: str, errors: str) -> Iterator:
    path = row["path"]
    try:
        with open(path, "rb") as stream:
            data = stream.read()
    except OSError as exc:  # gone or changed since it was listed
        yield {"id": path, "text": None, READ_ERROR_COLUMN: f"cannot read ({exc.strerror or exc})"}
        return
    if path.endswith(PARQUET_SUFFIXES):
        yield from _parquet_documents(path, data, text_column, id_column)
        return
    if not path.endswith(JSONL_SUFFIXES):
        text, error = text_of(data, encoding, errors)
        yield {"id": path, "text": text, READ_ERROR_COLUMN: error}
        return
    for number, line in enumerate(data.splitlines(), start=1):  # bytes: splits at \n, \r\n and \r only
        if line.strip():
            yield _jsonl_document(line, f"{path}:{number}", text_column, id_column, encoding, errors)


def _jsonl_document(
    line: bytes, where: str, text_column: str, id_column: str | None, encoding: str, errors: str
) -> dict:
    def document(doc_id, text=None, error=None):
        return {"id": doc_id, "text": text, READ_ERROR_COLUMN: error}

    try:
        record = json.loads(line.decode(encoding, errors))
    except UnicodeDecodeError as exc:
        return document(where, error=f"not valid {encoding} (byte 0x{line[exc.start : exc.start + 1].hex()})")
    except json.JSONDecodeError as exc:
        return document(where, error=f"not JSON ({exc.msg} at column {exc.colno})")
    if not isinstance(record, dict):
        return document(where, error=f"a JSON {type(record).__name__}, not an object")
    doc_id = where
    if id_column is not None:
        if record.get(id_column) is None:
            return document(where, error=f"no id field {id_column!r}")
        doc_id = str(record[id_column])
    if text_column not in record:
        return document(doc_id, error=f"no text field {text_column!r}")
    value = record[text_column]
    if not isinstance(value, str):  # JSON has no bytes: anything else is refused
        return document(doc_id, error="text is null" if value is None else f"text is {type(value).__name__}")
    return document(doc_id, value)


def _parquet_documents(path: str, data: bytes, text_column: str, id_column: str | None) -> Iterator[dict]:
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError) as exc:
        yield {"id": path, "text": None, READ_ERROR_COLUMN: f"not a Parquet file ({exc})"}
        return
    if id_column is None:  # rows are numbered from 1, like JSONL lines
        table = table.append_column("_row", pa.array([f"{path}:{n}" for n in range(1, table.num_rows + 1)]))
    for doc_id, text, error in read_documents(table, text_column, id_column or "_row", "utf-8", "strict"):
        yield {"id": doc_id, "text": text, READ_ERROR_COLUMN: error}
