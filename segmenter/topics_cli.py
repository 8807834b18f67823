"""`segmenter topics`: cut FILES into topical sections, each a run of whole sentences.

Input handling, `-o`, `--format` and exit codes are those of `segmenter segment` (its helpers in
`segmenter.cli` and `segmenter.io`): a missing, unreadable, binary or undecodable file fails before the
model loads, with one line on stderr and status 1; usage errors exit 2; `-o` is written atomically.
`lines` prints each sentence on a line and a blank line between sections; `jsonl` one object per
section with its character offsets. A file is read whole (a section can only be placed once its whole
text is seen), so memory grows with the file. The method lives in `segmenter.topics`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import click

from segmenter.cli import (
    FiniteFloatRange,
    _build,
    _detach_stdout,
    _output_path,
    _progress,
    model_options,
    one_line,
)
from segmenter.io import STDIO, AtomicOutput, checked_input


@click.command("topics")
@click.argument("files", nargs=-1, type=str)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["lines", "jsonl"]),
    default="lines",
    show_default=True,
    help="lines: one sentence per line, a blank line between sections; jsonl: one JSON object per "
    "section with offsets.",
)
@click.option(
    "-o",
    "--output",
    default="-",
    show_default=True,
    callback=_output_path,
    help="Output file ('-' for stdout).",
)
@click.option(
    "--n-topics", type=click.IntRange(min=1), default=None, help="Number of sections per file, if known."
)
@click.option(
    "--sensitivity",
    type=FiniteFloatRange(min=0, min_open=True),
    default=1.0,
    show_default=True,
    help="Without --n-topics: how readily a new section starts (higher: more sections).",
)
@click.option("--min-sentences", type=click.IntRange(min=1), default=1, show_default=True)
@click.option(
    "--max-sentences", type=click.IntRange(min=1), default=None, help="Longest section, in sentences."
)
@model_options
@click.option("--encoding", default="utf-8", show_default=True, help="Text encoding of the input files.")
@click.option(
    "--errors",
    type=click.Choice(["strict", "replace"]),
    default="strict",
    show_default=True,
    help="On undecodable bytes: fail (strict) or substitute U+FFFD (replace).",
)
@click.option("--progress/--no-progress", default=True, help="Progress bar on stderr (only on a terminal).")
def topics(
    files,
    fmt,
    output,
    n_topics,
    sensitivity,
    min_sentences,
    max_sentences,
    model,
    strategy,
    threshold,
    device,
    precision,
    preset,
    batch_size,
    probe,
    encoding,
    errors,
    progress,
):
    """Split FILES (or stdin, or '-') into topical sections of whole sentences."""
    from segmenter.errors import SegmenterError

    names = list(files) or ["-"]
    if any(not name.strip() for name in names):
        raise click.BadParameter("an input file name is empty", param_hint="FILES")
    options = {
        "n_topics": n_topics,
        "sensitivity": sensitivity,
        "min_sentences": min_sentences,
        "max_sentences": max_sentences,
    }
    try:
        inputs = [(name, checked_input(name, encoding, errors)) for name in names]
        from segmenter.topics import TopicSegmenter

        segmenter = _build(model, strategy, threshold, device, batch_size, probe, precision, preset)
        topic_segmenter = TopicSegmenter(segmenter, model=model, device=device, precision=precision)
        with AtomicOutput(output) as out, _progress(None, progress) as bar:
            first = True
            for name, chunks in inputs:
                text = "".join(chunks)
                sentences = segmenter.segment(text)
                sections = topic_segmenter.from_sentences(text, sentences, **options)
                for line in _render(name, sections, sentences, fmt, first):
                    out.write(line)
                first = first and not sections
                bar.update(len(text))
    except SegmenterError as exc:
        raise click.ClickException(str(exc)) from exc
    except OSError as exc:  # writing failed: a full disk or device, a reader that went away
        if output == STDIO:
            _detach_stdout()
        target = "stdout" if output == STDIO else output
        raise click.ClickException(f"cannot write to {target}: {exc.strerror or exc}") from exc


def _render(name: str, sections, sentences, fmt: str, first: bool) -> Iterator[str]:
    """Output lines of one file's `sections`; `first`: nothing was written before (no blank line)."""
    if fmt == "jsonl":
        for index, span in enumerate(sections):
            record = {"file": name, "index": index, "start": span.start, "end": span.end, "text": span.text}
            yield json.dumps(record, ensure_ascii=False) + "\n"
        return
    position = 0
    for index, span in enumerate(sections):
        if index or not first:
            yield "\n"
        while position < len(sentences) and sentences[position].end <= span.end:
            yield one_line(sentences[position].text) + "\n"
            position += 1
