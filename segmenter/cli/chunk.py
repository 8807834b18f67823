"""`segmenter chunk`: cut FILES into chunks for retrieval, runs of whole sentences under a token budget.

Input handling, `-o`, `--format` and exit codes are those of `segmenter segment` (their shared helpers
are in `segmenter.cli.common` and `segmenter.io`): a missing, unreadable, binary or undecodable file
fails before the model loads, with one line on stderr and status 1; usage errors exit 2; `-o` is
written atomically. Every file is read piece by piece and chunked as a stream
(`Chunker.chunk_stream`), so memory stays flat however large it is. `lines` prints each chunk on one
line (its line breaks as spaces); `jsonl` one object per chunk with its exact character offsets and
token count. The method lives in `segmenter.chunking`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import click

from segmenter.chunking.config import DEFAULT_MAX_TOKENS, ChunkConfig
from segmenter.cli.common import (
    command_errors,
    config_options,
    input_names,
    input_options,
    one_line,
    output_option,
    progress_bar,
)
from segmenter.config import SegmenterConfig
from segmenter.errors import ConfigError
from segmenter.io import AtomicOutput, checked_input


@click.command("chunk")
@click.argument("files", nargs=-1, type=str)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["lines", "jsonl"]),
    default="lines",
    show_default=True,
    help='lines: one chunk per line; jsonl: {"file","index","start","end","tokens","text"} per chunk.',
)
@output_option
@click.option(
    "--max-tokens",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_TOKENS,
    show_default=True,
    help="Most tokens in a chunk.",
)
@click.option(
    "--min-tokens", type=click.IntRange(min=0), default=0, show_default=True, help="Avoid shorter chunks."
)
@click.option(
    "--overlap",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Tokens of whole sentences each chunk repeats from the one before.",
)
@click.option(
    "--tokenizer",
    default="wordpieces",
    show_default=True,
    help="What a token is: wordpieces (the backbone's), chars, or a tiktoken encoding such as cl100k_base "
    "(the [tiktoken] extra).",
)
@click.option(
    "--topics/--no-topics",
    default=True,
    show_default=True,
    help="Prefer cuts where the topic shifts (reads sentence vectors: slower).",
)
@config_options
@input_options
def chunk(
    files, fmt, output, max_tokens, min_tokens, overlap, tokenizer, topics, config: SegmenterConfig,
    encoding, errors, progress,
):  # fmt: skip
    """Cut FILES (or stdin, or '-') into chunks for retrieval."""
    names = input_names(files)
    try:
        settings = ChunkConfig(max_tokens, min_tokens, overlap, tokenizer, topics)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    with command_errors(output):
        inputs = [(name, checked_input(name, encoding, errors)) for name in names]
        from segmenter.api import Segmenter
        from segmenter.chunking.chunker import Chunker

        chunker = Chunker(Segmenter(config), settings)
        with AtomicOutput(output) as out, progress_bar(None, progress) as bar:
            for name, pieces in inputs:
                for index, found in enumerate(chunker.chunk_stream(_counted(pieces, bar.update))):
                    out.write(_render(name, index, found, fmt))


def _counted(pieces: Iterator[str], progress) -> Iterator[str]:
    for piece in pieces:
        yield piece
        progress(len(piece))


def _render(name: str, index: int, found, fmt: str) -> str:
    if fmt == "lines":
        return one_line(found.text) + "\n"
    record = {
        "file": name, "index": index, "start": found.start, "end": found.end, "tokens": found.tokens,
        "text": found.text,
    }  # fmt: skip
    return json.dumps(record, ensure_ascii=False) + "\n"
