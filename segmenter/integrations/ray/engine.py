"""Segment a Ray Data dataset of documents on a pool of actors, one row per segment out.

`segment_dataset(ds, text_column, id_column, config, ...)` maps batches of documents through a pool
of actors (Ray Data's class-based `map_batches`); each actor builds one `Segmenter` from `config` (a
`SegmenterConfig`) when it starts and runs every batch it is given through it. The result is a lazy
`ray.data.Dataset` with the columns of `OUTPUT_SCHEMA`: a segment row per segment (`error` null), and
an error row per document that could not be read (a missing text column, a null or non-string value,
bytes that do not decode), with the document's id and the reason in `error` (the segment fields null).
A bad document never fails the job. Actors are restarted and their batches retried when a worker
process dies (Ray Data's defaults); a batch's output exists only once the batch has finished, so a
retry neither loses nor repeats rows.

Spans are those of `Segmenter.segment` on the same text, whatever the batching: each document goes
through `Segmenter.segment_stream` alone (which equals `segment`). `Segmenter.pipe`, which batches
encoder windows across documents, is not used: rounding in a shared batch moves spans, so they would
depend on how Ray cut the dataset into batches.

Reading files, starting Ray and writing output are not done here (`segmenter.integrations.ray.inputs`,
`segmenter.integrations.ray.run`, `segmenter.integrations.ray.output`). Ray is imported only when a function
here runs.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from segmenter.config import SegmenterConfig
from segmenter.errors import ConfigError
from segmenter.extras import require

pa = require("pyarrow", "ray", "--engine ray")

if TYPE_CHECKING:  # pragma: no cover
    import ray.data

DOCUMENTS_PER_BATCH = 64

OUTPUT_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("index", pa.int64()),  # position of the segment in its document, from 0
        ("start", pa.int64()),  # character offsets into the document's text
        ("end", pa.int64()),
        ("text", pa.string()),
        ("score", pa.float64()),  # probability of the boundary that opens the segment
        ("error", pa.string()),  # null on a segment row; why the document was not segmented otherwise
    ]
)
SEGMENT_FIELDS = ("id", "index", "start", "end", "text", "score")
READ_ERROR_COLUMN = "read_error"  # an input column: when not null, the row is reported with this reason


def segment_dataset(
    ds: ray.data.Dataset,
    text_column: str = "text",
    id_column: str | None = None,
    config: SegmenterConfig | None = None,
    *,
    settings: SegmenterConfig | None = None,
    encoding: str = "utf-8",
    errors: str = "strict",
    batch_size: int = DOCUMENTS_PER_BATCH,
    concurrency: int = 1,
    num_cpus: float = 1,
    num_gpus: float = 0,
) -> ray.data.Dataset:
    """`ds` segmented: rows of `OUTPUT_SCHEMA`, one per segment and one per unreadable document.

    text_column: str values, or bytes decoded with `encoding` / `errors` ("strict" or "replace").
    id_column:   each document's id (any type, written as str); None: the SHA-1 of the document's
                 UTF-8 bytes (hex), so identical texts share an id (pass an id column to tell them apart).
    config:      what each actor's `Segmenter` is built from (default: `SegmenterConfig()`); its
                 batch_size is windows per encoder pass. `settings=` is the same argument under its
                 earlier name.
    batch_size:  documents per Ray batch; concurrency: actors in the pool (a fixed size), each with
                 `num_cpus` CPUs (its torch threads) and `num_gpus` GPUs (set config.device="cuda").
    A dead actor is restarted and the batch it was running is retried, without limit (Ray Data's
    defaults for actor pools), so a document that kills its worker every time stalls the job.
    A row whose `read_error` column (`READ_ERROR_COLUMN`) is not null becomes an error row with that
    reason. With `DataContext.execution_options.preserve_order` set, rows come out in document order.
    """
    import ray.data

    if settings is not None:
        if config is not None:
            raise ConfigError("the segmenter settings are given twice: as config and as settings=")
        config = settings
    if config is not None and not isinstance(config, SegmenterConfig):
        raise ConfigError(f"config must be a SegmenterConfig, got {type(config).__name__} {config!r}")
    if concurrency < 1 or batch_size < 1:
        raise ValueError(f"concurrency and batch_size must be at least 1, not {concurrency}, {batch_size}")
    "".encode(encoding)  # an unknown encoding is a LookupError now, not in every actor
    return ds.map_batches(
        SegmentBatches,
        fn_constructor_kwargs={
            "config": config if config is not None else SegmenterConfig(),
            "text_column": text_column,
            "id_column": id_column,
            "encoding": encoding,
            "errors": errors,
            "threads": max(1, int(num_cpus)),
        },
        batch_size=batch_size,
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=concurrency),
        num_cpus=num_cpus,
        num_gpus=num_gpus,
    )


class SegmentBatches:
    """The actor: one `Segmenter`, built at start; each call turns a batch of documents into rows."""

    def __init__(
        self,
        config: SegmenterConfig,
        text_column: str,
        id_column: str | None,
        encoding: str,
        errors: str,
        threads: int,
    ):
        import torch

        from segmenter.api import Segmenter

        torch.set_num_threads(threads)
        self.segmenter = Segmenter(config)
        self.text_column, self.id_column = text_column, id_column
        self.encoding, self.errors = encoding, errors

    def __call__(self, batch: pa.Table) -> pa.Table:
        documents = read_documents(batch, self.text_column, self.id_column, self.encoding, self.errors)
        rows: dict[str, list] = {name: [] for name in OUTPUT_SCHEMA.names}
        for doc_id, text, error in documents:
            if text is None:
                _append(rows, doc_id, None, None, error)
                continue
            # one document at a time: `pipe` would batch windows across documents, and rounding in a
            # shared batch moves some spans, so the spans would depend on how Ray cut the batches
            for index, span in enumerate(self.segmenter.segment_stream([text])):
                _append(rows, doc_id, index, span, None)
        return pa.Table.from_pydict(rows, schema=OUTPUT_SCHEMA)


def _append(rows: dict[str, list], doc_id: str | None, index: int | None, span, error: str | None) -> None:
    rows["id"].append(doc_id)
    rows["index"].append(index)
    rows["start"].append(None if span is None else span.start)
    rows["end"].append(None if span is None else span.end)
    rows["text"].append(None if span is None else span.text)
    rows["score"].append(None if span is None else float(span.score))
    rows["error"].append(error)


def read_documents(
    batch: pa.Table, text_column: str, id_column: str | None, encoding: str, errors: str
) -> list[tuple[str | None, str | None, str | None]]:
    """(id, text, error) per row of `batch`: text None and the reason in error for a row that has no
    usable text."""
    n = batch.num_rows
    texts: list[Any] = batch.column(text_column).to_pylist() if text_column in batch.column_names else None
    if id_column is None:
        ids = [_content_id(text) for text in texts] if texts is not None else [None] * n
    elif id_column in batch.column_names:
        ids = [None if value is None else str(value) for value in batch.column(id_column).to_pylist()]
    else:
        return [(None, None, f"no id column {id_column!r} (columns: {', '.join(batch.column_names)})")] * n
    if texts is None:
        reason = f"no text column {text_column!r} (columns: {', '.join(batch.column_names)})"
        return [(doc_id, None, reason) for doc_id in ids]
    documents = [
        (doc_id, *text_of(value, encoding, errors)) for doc_id, value in zip(ids, texts, strict=True)
    ]
    if READ_ERROR_COLUMN in batch.column_names:  # a reader that could not make a row's text says why
        read_errors = batch.column(READ_ERROR_COLUMN).to_pylist()
        documents = [
            (doc_id, None, reason) if reason is not None else (doc_id, text, error)
            for (doc_id, text, error), reason in zip(documents, read_errors, strict=True)
        ]
    return documents


def text_of(value: Any, encoding: str, errors: str) -> tuple[str | None, str | None]:
    if isinstance(value, str):
        return value, None
    if isinstance(value, bytes):
        if b"\x00" in value and not encoding.lower().replace("_", "-").startswith(("utf-16", "utf-32")):
            return None, "looks like a binary file (it contains NUL bytes)"
        try:
            return value.decode(encoding, errors), None
        except UnicodeDecodeError as exc:
            byte = value[exc.start : exc.start + 1].hex()
            return None, f"not valid {encoding} (byte 0x{byte} at offset {exc.start})"
    if value is None:
        return None, "text is null"
    return None, f"text is {type(value).__name__}, not a string"


def _content_id(value: Any) -> str | None:
    if isinstance(value, str):
        value = value.encode("utf-8", "surrogatepass")
    return hashlib.sha1(value).hexdigest() if isinstance(value, bytes) else None


def is_error(row: dict) -> bool:
    """Whether an output row reports an unreadable document rather than a segment."""
    return row.get("error") is not None
