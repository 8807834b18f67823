"""The `segmenter` command line: segment, topics, train, bench, bench-topics, bench-chunks, analyze.

Runtime failures (missing or unreadable input, undecodable bytes, unknown model, broken probe) exit 1
with one line on stderr; usage errors exit 2 (click's convention). Output files are written atomically:
to a temporary file beside the target, renamed over it only when everything succeeded. Heavy imports
(torch, transformers) happen inside commands so `--help` stays fast. This module holds the main group
and `segment`; the options and error handling the commands share live in `segmenter.cli.common`, the
segmentation logic in `segmenter.api`; the train, topics, models, bench, bench-topics and analyze
commands live in `segmenter.cli.train`, `segmenter.cli.topics`, `segmenter.cli.models`,
`segmenter.bench.cli`, `segmenter.bench.topics` (through the `segmenter.commands` entry points) and
`segmenter.cli.analyze`.
"""

from __future__ import annotations

import itertools
import json
import logging
import sys
from collections.abc import Iterator

import click

from segmenter.cli.common import (
    PRECISION_OPTION,
    FiniteFloatRange,
    command_errors,
    config_options,
    input_names,
    input_options,
    one_line,
    output_option,
    progress_bar,
)
from segmenter.cli.train import train
from segmenter.config import SegmenterConfig
from segmenter.encoder import wait_policy
from segmenter.integrations.ray import run as ray_run
from segmenter.io import AtomicOutput, checked_input

# one_line, FiniteFloatRange and PRECISION_OPTION lived here before segmenter.cli.common
__all__ = ["PRECISION_OPTION", "FiniteFloatRange", "main", "one_line", "segment", "train"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="attention-segmenter")
def main() -> None:
    """Sentence segmentation from the attention heads of a BERT-family encoder."""
    # Before any command loads torch: on a busy machine its OpenMP threads sleep while they wait, so
    # that another process does not stall every parallel step of the encoder; on a quiet one they
    # spin a while first, which is faster (`segmenter.encoder.wait_policy`; docs: README "Speed"). An
    # OMP_WAIT_POLICY the user set is kept.
    wait_policy.choose()
    _show_progress_notes()


def _show_progress_notes() -> None:
    """On a terminal, print the library's notes on slow one-off steps (the first run's int8 graph) to
    stderr, as progress bars are; in pipes and files stderr stays for errors."""
    log = logging.getLogger("segmenter.encoder.loader")
    if sys.stderr.isatty() and not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("segmenter: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)


@main.command()
@click.argument("files", nargs=-1, type=str)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["lines", "jsonl", "parquet"]),
    default="lines",
    show_default=True,
    help="lines: one segment per line; jsonl: one JSON object per segment with offsets; parquet: "
    "(--engine ray) the same fields in Parquet shards.",
)
@output_option
@config_options
@input_options
@ray_run.engine_options
def segment(
    files, fmt, output, config: SegmenterConfig, encoding, errors, progress, engine, **engine_settings
):
    """Split FILES (or stdin, or '-') into sentences."""
    if engine == "ray":  # FILES may also be folders, globs, JSONL and Parquet files
        return ray_run.run(files, fmt, output, config, encoding, errors, progress, engine_settings)
    ray_run.refuse_ray_only(click.get_current_context())
    if fmt == "parquet":
        raise click.UsageError("--format parquet needs --engine ray")

    names = input_names(files)
    with command_errors(output):
        # fail on a missing, unreadable or binary file before loading the model (a pipe is read once)
        inputs = [(name, checked_input(name, encoding, errors, SMALL_FILE_CHARS)) for name in names]
        segmenter = _build(config)
        with AtomicOutput(output) as out, progress_bar(None, progress) as bar:
            for name, spans in segment_inputs(segmenter, inputs, bar.update):
                for line in _render(name, spans, fmt):
                    out.write(line)


SMALL_FILE_CHARS = 1 << 20  # files up to this size are batched together; longer ones are streamed


def segment_inputs(segmenter, inputs: list[tuple[str, Iterator[str]]], progress) -> Iterator:
    """(name, spans) per (name, text pieces) of `inputs`, in order; `progress(characters)` as they go.

    Every input goes through the same inference path (`GapScorer`: tokens -> windows -> encoder ->
    features -> probabilities, then decoding), fed one of two ways, picked per input by its size:

    - pooled batches (cross-file batching), for an input whose text comes in one read (`inputs` read
      `SMALL_FILE_CHARS` bytes at a time): such texts are gathered until they hold `SMALL_FILE_CHARS`
      characters and segmented together by `Segmenter.pipe`, which batches their windows across
      files, so many small files make full encoder passes;
    - the streaming feed (bounded memory), for a file or pipe longer than one read:
      `Segmenter.segment_stream` reads, segments and yields it piece by piece, so memory stays flat
      however large it is. The texts pooled before it are segmented first, so output keeps input order.
    """
    group: list[tuple[str, str]] = []
    grouped_chars = 0

    def flush():
        nonlocal grouped_chars
        texts = [text for _, text in group]
        for (name, text), spans in zip(group, segmenter.pipe(texts), strict=True):
            yield name, spans
            progress(len(text))
        group.clear()
        grouped_chars = 0

    for name, chunks in inputs:
        first, second = next(chunks, ""), next(chunks, None)
        if second is None:  # the whole file came in one read: pool it
            group.append((name, first))
            grouped_chars += len(first)
            if grouped_chars >= SMALL_FILE_CHARS:
                yield from flush()
            continue
        yield from flush()
        yield name, segmenter.segment_stream(_counted(itertools.chain([first, second], chunks), progress))
    yield from flush()


def _counted(chunks: Iterator[str], progress) -> Iterator[str]:
    for chunk in chunks:
        yield chunk
        progress(len(chunk))


def _render(name: str, spans, fmt: str) -> Iterator[str]:
    for index, span in enumerate(spans):
        if fmt == "lines":
            yield one_line(span.text) + "\n"
        else:
            record = {"file": name, "index": index, "start": span.start, "end": span.end, "text": span.text}
            yield json.dumps(record, ensure_ascii=False) + "\n"


def _build(config: SegmenterConfig):
    """The `Segmenter` of `config` (loads the encoder and probe)."""
    from segmenter.api import Segmenter

    return Segmenter(config)


main.add_command(train)


def _register_optional_commands() -> None:
    """analyze, topics and models (the library's) and the commands of the `segmenter.commands` entry-point
    group (the benchmark harness's bench and bench-topics) live with their own code; each is listed here
    by name and imported only when click needs it (`segmenter.cli.lazy`)."""
    from segmenter.cli.lazy import optional_commands

    for command in optional_commands(taken=main.commands):
        main.add_command(command)


if __name__ == "__main__":
    # `python -m segmenter.cli.main`: run the module under its own name, so that command modules which import
    # `segmenter.cli.main` (topics_cli) meet the one copy, with its commands registered, not this one.
    from segmenter.cli.main import main as entry_point

    entry_point()
else:
    _register_optional_commands()
