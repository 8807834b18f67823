"""Read the files a probe or a saved pipeline is made of, with limits on size and nesting depth.

A probe folder or a saved spaCy component may come from anywhere; a hostile one (a meta.json of
100,000 nested brackets, a file of many gigabytes, a zip member that inflates without end) must be
refused with a `ValueError` saying why, which the callers turn into their one-line error, never a
`RecursionError` traceback or an exhausted memory. `read_bytes` refuses a file larger than its limit
before reading it; `parse_json` refuses text nested deeper than `MAX_DEPTH` before parsing it;
`parse_msgpack` does both for msgpack data. Nothing here knows what the data means.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

MAX_DEPTH = 32  # nesting of arrays and objects; a probe's meta.json uses 3
MAX_JSON_BYTES = 1 << 20  # meta.json and cfg files: the shipped ones hold about 2 KB
MAX_ARRAY_BYTES = 1 << 30  # probe arrays (probe.npz, a component's msgpack probe): the shipped ones hold 4 MB
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def read_bytes(path: str | Path, limit: int) -> bytes:
    """The bytes of file `path`; ValueError when it holds more than `limit` bytes (OSError as usual)."""
    with open(path, "rb") as stream:
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"larger than {_size(limit)}")
    return data


def parse_json(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads(text)`, refused with a ValueError when arrays and objects nest deeper than `max_depth`
    (checked first, by counting the brackets outside strings: no recursion however deep the text)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    depth = 0
    for bracket in _BRACKET.finditer(_JSON_STRING.sub('""', text)):
        depth += 1 if bracket.group() in "[{" else -1
        if depth > max_depth:
            raise ValueError(f"nested deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except RecursionError as exc:  # pragma: no cover - the count above refuses such text first
        raise ValueError(f"nested deeper than {max_depth} levels") from exc


def parse_msgpack(data: bytes, limit: int = MAX_ARRAY_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """The msgpack `data` decoded; ValueError when it is longer than `limit` bytes, nests deeper than
    `max_depth` or is not msgpack."""
    import srsly

    if len(data) > limit:
        raise ValueError(f"larger than {_size(limit)}")
    try:
        decoded = srsly.msgpack_loads(data)
    except Exception as exc:  # msgpack's own errors (ExtraData, StackError, FormatError) and ValueError
        raise ValueError(f"not valid msgpack ({str(exc) or type(exc).__name__})") from exc
    if _depth(decoded, max_depth) > max_depth:
        raise ValueError(f"nested deeper than {max_depth} levels")
    return decoded


def _depth(value: Any, max_depth: int) -> int:
    """Nesting depth of lists and dicts in `value`, counted without recursion (stops past `max_depth`)."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list | tuple):
            deepest = max(deepest, depth)
            if depth > max_depth:
                break
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)
    return deepest


def _size(limit: int) -> str:
    return f"{limit >> 20} MiB" if limit >= 1 << 20 else f"{limit} bytes"
