"""`segmenter topics`: cut FILES into topical sections, each a run of whole sentences.

Input handling, `-o`, `--format` and exit codes are those of `segmenter segment` (their shared
helpers are in `segmenter.cli.common` and `segmenter.io`): a missing, unreadable, binary or
undecodable file fails before the model loads, with one line on stderr and status 1; usage errors
exit 2; `-o` is written atomically. `lines` prints each sentence on a line and a blank line between
sections; `jsonl` one object per section with its character offsets. A file is read whole (a section
can only be placed once its whole text is seen), so memory grows with the file. The method lives in
`segmenter.topics.segmenter`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import click

from segmenter.cli.common import (
    FiniteFloatRange,
    command_errors,
    config_options,
    input_names,
    input_options,
    one_line,
    output_option,
    progress_bar,
)
from segmenter.config import SegmenterConfig
from segmenter.io import AtomicOutput, checked_input


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
@output_option
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
@config_options
@input_options
def topics(
    files, fmt, output, n_topics, sensitivity, min_sentences, max_sentences, config: SegmenterConfig,
    encoding, errors, progress,
):  # fmt: skip
    """Split FILES (or stdin, or '-') into topical sections of whole sentences."""
    names = input_names(files)
    options = {
        "n_topics": n_topics,
        "sensitivity": sensitivity,
        "min_sentences": min_sentences,
        "max_sentences": max_sentences,
    }
    with command_errors(output):
        inputs = [(name, checked_input(name, encoding, errors)) for name in names]
        from segmenter.api import Segmenter
        from segmenter.topics.segmenter import TopicSegmenter

        segmenter = Segmenter(config)
        topic_segmenter = TopicSegmenter(
            segmenter, model=config.model, device=config.device, precision=config.precision
        )
        with AtomicOutput(output) as out, progress_bar(None, progress) as bar:
            first = True
            for name, chunks in inputs:
                text = "".join(chunks)
                sentences = segmenter.segment(text)
                sections = topic_segmenter.from_sentences(text, sentences, **options)
                for line in _render(name, sections, sentences, fmt, first):
                    out.write(line)
                first = first and not sections
                bar.update(len(text))


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
