"""The `segmenter` command line: segment, topics, train, bench, bench-topics, analyze.

Runtime failures (missing or unreadable input, undecodable bytes, unknown model, broken probe) exit 1
with one line on stderr; usage errors exit 2 (click's convention). Output files are written atomically:
to a temporary file beside the target, renamed over it only when everything succeeded. Heavy imports
(torch, transformers) happen inside commands so `--help` stays fast. Segmentation logic lives in
`segmenter.segmenter`; the topics, bench, bench-topics and analyze commands live in
`segmenter.topics_cli`, `benchmarks.cli`, `benchmarks.topics` and `segmenter.analysis.cli`.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from segmenter import ray_run
from segmenter.breaks import LINE_BREAKS
from segmenter.config import DEFAULT_PRESET, PRECISIONS, PRESETS, STRATEGIES
from segmenter.io import STDIO, AtomicOutput, checked_input

_LINE_BREAKS = re.compile(rf"\s*[{LINE_BREAKS}]\s*")


def one_line(text: str) -> str:
    """`text` with every whitespace run that holds a line break replaced by one space."""
    return _LINE_BREAKS.sub(" ", text)


class FiniteFloatRange(click.FloatRange):
    """click's FloatRange that also refuses nan and inf (nan passes every comparison with a bound)."""

    name = "finite float range"

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


def _output_path(ctx, param, value: str) -> str:
    if not value.strip():
        raise click.BadParameter("is empty; pass a file path, or '-' for stdout", ctx, param)
    return value


PRECISION_OPTION = click.option(
    "--precision",
    type=click.Choice(PRECISIONS),
    default="auto",
    show_default=True,
    help="Encoder arithmetic; auto: bfloat16 where the hardware has it natively, else float32.",
)


def model_options(func):
    """The options shared by commands that build a Segmenter."""
    options = [
        click.option(
            "--model", default=None, help="Hugging Face id or local path (default: packaged MiniLM)."
        ),
        click.option(
            "--strategy", type=click.Choice(STRATEGIES), default="probe", show_default=True, help="Scoring."
        ),
        click.option(
            "--threshold", type=FiniteFloatRange(0, 1), default=None, help="Boundary probability cut-off."
        ),
        click.option("--device", default="cpu", show_default=True, help="torch device, e.g. cpu or cuda."),
        PRECISION_OPTION,
        click.option(
            "--preset",
            type=click.Choice(PRESETS),
            default=DEFAULT_PRESET,
            show_default=True,
            help="Shipped probe: accurate (3 tuned blocks), fast (2 tuned blocks, faster) or signals (fast "
            "plus block 2's attention signals); ignored with --probe.",
        ),
        click.option(
            "--batch-size",
            type=click.IntRange(min=1),
            default=16,
            show_default=True,
            help="Windows per pass.",
        ),
        click.option(
            "--probe",
            default=None,
            type=click.Path(),
            help="Probe folder from `segmenter train` (default: shipped).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="attention-segmenter")
def main() -> None:
    """Sentence segmentation from the attention heads of a BERT-family encoder."""
    # Before any command loads torch: its OpenMP threads sleep while they wait instead of spinning, so
    # that another busy process on the machine does not stall every parallel step of the encoder
    # (docs: README "Speed"). An OMP_WAIT_POLICY the user set is kept.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


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
@click.option(
    "-o",
    "--output",
    default="-",
    show_default=True,
    callback=_output_path,
    help="Output file ('-' for stdout).",
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
@ray_run.engine_options
def segment(
    files,
    fmt,
    output,
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
    engine,
    **engine_settings,
):
    """Split FILES (or stdin, or '-') into sentences."""
    from segmenter.errors import SegmenterError

    if engine == "ray":  # FILES may also be folders, globs, JSONL and Parquet files
        from segmenter.ray_engine import SegmenterSettings

        settings = SegmenterSettings(
            model, strategy, threshold, device, batch_size, probe, None, precision, preset
        )
        return ray_run.run(files, fmt, output, settings, encoding, errors, progress, engine_settings)
    ray_run.refuse_ray_only(click.get_current_context())
    if fmt == "parquet":
        raise click.UsageError("--format parquet needs --engine ray")

    names = list(files) or ["-"]
    if any(not name.strip() for name in names):
        raise click.BadParameter("an input file name is empty", param_hint="FILES")
    try:
        # fail on a missing, unreadable or binary file before loading the model (a pipe is read once)
        inputs = [(name, checked_input(name, encoding, errors, SMALL_FILE_CHARS)) for name in names]
        segmenter = _build(model, strategy, threshold, device, batch_size, probe, precision, preset)
        with AtomicOutput(output) as out, _progress(None, progress) as bar:
            for name, spans in _segment_files(segmenter, inputs, bar.update):
                for line in _render(name, spans, fmt):
                    out.write(line)
    except SegmenterError as exc:
        raise click.ClickException(str(exc)) from exc
    except OSError as exc:  # writing failed: a full disk or device, a reader that went away
        if output == STDIO:
            _detach_stdout()
        target = "stdout" if output == STDIO else output
        raise click.ClickException(f"cannot write to {target}: {exc.strerror or exc}") from exc


def _detach_stdout() -> None:
    """Point stdout at the null device, so that flushing it at exit does not fail a second time."""
    with contextlib.suppress(OSError, ValueError, AttributeError):  # not a real file: a test runner's buffer
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


SMALL_FILE_CHARS = 1 << 20  # files up to this size are batched together; longer ones are streamed


def _segment_files(segmenter, inputs: list[tuple[str, Iterator[str]]], progress) -> Iterator:
    """(name, spans) per (name, text pieces) of `inputs`, in order. Short files are segmented in groups
    (windows batched across files); a file longer than one read is streamed (read, segmented and
    written piece by piece), so memory stays flat however large it is."""
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
        if second is None:
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


def _build(
    model, strategy, threshold, device, batch_size, probe=None, precision="auto", preset=DEFAULT_PRESET
):
    from segmenter.segmenter import Segmenter

    return Segmenter(
        model=model,
        strategy=strategy,
        threshold=threshold,
        device=device,
        batch_size=batch_size,
        probe=probe,
        precision=precision,
        preset=preset,
    )


def _progress(total: int | None, enabled: bool):
    from tqdm import tqdm

    return tqdm(
        total=total,
        unit="char",
        unit_scale=True,
        file=sys.stderr,
        disable=not (enabled and sys.stderr.isatty()),
        leave=False,
    )


@main.command()
@click.option(
    "--data",
    "specs",
    multiple=True,
    required=True,
    help="Training data: conllu:PATH, golden:PATH, raw:PATH (punctuated text, self-supervised), "
    "ud-train[:DIR] (the six UD English train splits, from DIR, $SEGMENTER_UD or ../shared/data/ud) "
    "or a built-in dev set (ewt-dev). Repeatable.",
)
@click.option(
    "--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Probe folder to write."
)
@click.option(
    "--model", default=None, help="Backbone: Hugging Face id or local path (default: packaged MiniLM)."
)
@click.option("--layers", default="2,3,4", show_default=True, help="Comma-separated 1-based layers.")
@click.option("--hidden/--no-hidden", default=True, show_default=True, help="Use block outputs.")
@click.option(
    "--vectors/--no-vectors", default=False, show_default=True, help="Use per-head context vectors."
)
@click.option(
    "--signals/--no-signals",
    default=True,
    show_default=True,
    help="Use attention signals (with --tune-blocks: off unless given, and read from block K).",
)
@click.option(
    "--surface/--no-surface",
    default=True,
    show_default=True,
    help="Use case and punctuation flags of the original characters.",
)
@click.option(
    "--line-breaks/--no-line-breaks",
    default=None,
    help="Read line breaks (whether a token starts a line, and how long the line before it was) and "
    "also train on the text laid out in lines: paragraphs on lines of their own, and hard-wrapped.  "
    "[default: on; off with --no-surface]",
)
@click.option(
    "--context",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Tokens on each side of a gap whose features describe it.",
)
@click.option(
    "--kind",
    type=click.Choice(["mlp", "logistic"]),
    default="mlp",
    show_default=True,
    help="Probe: one ReLU hidden layer (mlp) or linear (logistic).",
)
@click.option(
    "--conditions",
    type=click.Choice(["both", "clean", "corrupt"]),
    default="both",
    show_default=True,
    help="Train on the text as given, corrupted (lowercase, no punctuation), or both.",
)
@click.option(
    "--unmarked-share",
    type=FiniteFloatRange(0, 1),
    default=0.0,
    show_default=True,
    help="Share of the sentences that lose their final punctuation (. ! ? ...) in the clean training "
    "copy, picked by a hash of document and sentence, so the probe also learns boundaries that no "
    "punctuation marks (chat, web text). Held-out text stays as given.",
)
@click.option(
    "--c",
    "c",
    type=FiniteFloatRange(min=0, min_open=True),
    default=0.005,
    show_default=True,
    help="Inverse L2 strength.",
)
@click.option(
    "--hidden-units",
    type=click.IntRange(min=1),
    default=None,
    help="ReLU units of the MLP probe's hidden layer.  [default: 128; 256 with --tune-blocks]",
)
@click.option(
    "--members",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="MLPs fitted with seeds SEED, SEED+1, ... and averaged into one probe (an ensemble).",
)
@click.option("--window-size", type=click.IntRange(min=8), default=128, show_default=True)
@click.option(
    "--stride",
    type=click.IntRange(min=1),
    default=None,
    help="Tokens between window starts.  [default: 3/4 of --window-size, 96 for 128]",
)
@click.option(
    "--holdout",
    type=FiniteFloatRange(0, 0.9),
    default=0.2,
    show_default=True,
    help="Share of the gold documents held out to pick the thresholds (raw: documents always train, "
    "unless there is no gold data).",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the held-out split and of the probe's initial weights.",
)
@click.option(
    "--split-seed",
    type=int,
    default=None,
    help="Seed of the held-out split alone  [default: --seed]; fix it to compare seeds on the same "
    "held-out documents.",
)
@click.option(
    "--refit/--no-refit",
    default=False,
    show_default=True,
    help="After picking thresholds, refit on every document (held-out ones included); the thresholds "
    "still come from the first fit, which a refitted MLP may not honour.",
)
@click.option(
    "--tune-blocks",
    type=click.IntRange(min=1),
    default=None,
    help="Tune the encoder too: low-rank deltas on blocks 1..K, trained jointly with the MLP probe, "
    "which reads block K's output and the case/punctuation flags (the frozen-encoder feature and "
    "probe options do not apply). The shipped presets are tuned.",
)
@click.option(
    "--rank",
    type=click.IntRange(min=1),
    default=16,
    show_default=True,
    help="Rank of the deltas (--tune-blocks).",
)
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Passes over the data (--tune-blocks).",
)
@click.option(
    "--learning-rate",
    type=FiniteFloatRange(min=0, min_open=True),
    default=5e-4,
    show_default=True,
    help="Peak learning rate of the deltas (--tune-blocks).",
)
@click.option("--batch-size", type=click.IntRange(min=1), default=16, show_default=True)
@PRECISION_OPTION
@click.option("--progress/--no-progress", default=True)
@click.pass_context
def train(
    ctx,
    specs,
    out_dir,
    model,
    layers,
    hidden,
    vectors,
    signals,
    surface,
    line_breaks,
    context,
    kind,
    conditions,
    unmarked_share,
    c,
    hidden_units,
    members,
    window_size,
    stride,
    holdout,
    seed,
    split_seed,
    refit,
    tune_blocks,
    rank,
    epochs,
    learning_rate,
    batch_size,
    precision,
    progress,
):
    """Train a boundary probe and write it to --out (probe.npz + meta.json).

    With --tune-blocks K the encoder's blocks 1..K are tuned with the probe; the probe then carries
    their low-rank weight deltas, which the segmenter merges when it loads it.
    """
    from click.core import ParameterSource

    from segmenter.config import FeatureConfig, WindowConfig
    from segmenter.encoder import Encoder
    from segmenter.errors import ConfigError, SegmenterError
    from segmenter.train import CONDITIONS, LAYOUTS, TrainConfig, train_probe
    from segmenter.training_data import load_training_documents
    from segmenter.tune import TuneConfig, tune_probe

    frozen_only = (
        "layers",
        "hidden",
        "vectors",
        "surface",
        "context",
        "kind",
        "c",
        "members",
        "refit",
    )
    tuning_only = ("rank", "epochs", "learning_rate")
    for names, refused, why in (
        (
            frozen_only,
            tune_blocks is not None,
            "describes a probe of the frozen encoder; drop it or --tune-blocks",
        ),
        (tuning_only, tune_blocks is None, "applies only with --tune-blocks"),
    ):
        given = [n for n in names if ctx.get_parameter_source(n) is ParameterSource.COMMANDLINE]
        if given and refused:
            raise click.UsageError(f"--{given[0].replace('_', '-')} {why}")
    try:
        layer_tuple = tuple(int(x) for x in layers.split(","))
    except ValueError as exc:
        raise click.UsageError(f"--layers must be comma-separated integers, got {layers!r}") from exc
    if members > 1 and kind != "mlp":
        raise click.UsageError("--members above 1 needs --kind mlp: only MLP probes can be averaged")
    try:  # option values that do not fit together are usage errors (exit 2)
        window = WindowConfig(
            size=window_size, stride=stride or max(1, min(window_size * 3 // 4, window_size - 3))
        )
        condition_tuple = CONDITIONS if conditions == "both" else (conditions,)
        line_breaks = surface if line_breaks is None else line_breaks
        if line_breaks:
            condition_tuple += LAYOUTS
        if tune_blocks is not None:
            config = TuneConfig(
                blocks=tune_blocks,
                rank=rank,
                epochs=epochs,
                learning_rate=learning_rate,
                hidden_units=hidden_units or 256,
                window=window,
                conditions=condition_tuple,
                holdout=holdout,
                batch_size=batch_size,
                seed=seed,
                split_seed=split_seed,
                lines=line_breaks,
                unmarked_share=unmarked_share,
                # a tuned probe reads no signals unless asked (a frozen one does by default)
                signals=signals and ctx.get_parameter_source("signals") is ParameterSource.COMMANDLINE,
            )
        else:
            features = FeatureConfig(
                layers=layer_tuple,
                vectors=vectors,
                signals=signals,
                hidden=hidden,
                surface=surface,
                lines=line_breaks,
                context=context,
            )
            config = TrainConfig(
                features=features,
                window=window,
                conditions=condition_tuple,
                kind=kind,
                refit=refit,
                c=c,
                hidden_units=hidden_units or 128,
                members=members,
                holdout=holdout,
                seed=seed,
                split_seed=split_seed,
                batch_size=batch_size,
                unmarked_share=unmarked_share,
            )
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    try:
        # the model loads before the data, so a bad --layers or --model fails at once
        blocks = tune_blocks if tune_blocks is not None else max(layer_tuple)
        encoder = Encoder(model, max_layer=blocks, precision=precision)
        docs, sources = load_training_documents(specs)
        with _progress(0, progress) as bar:
            if tune_blocks is not None:
                del encoder
                bar.unit, bar.unit_scale = "batch", False
                probe = tune_probe(
                    model, docs, config, sources, precision, progress=bar.update, start=_set_total(bar)
                )
            else:
                probe = train_probe(encoder, docs, config, sources, progress=bar.update)
        folder = probe.save(Path(out_dir))
    except SegmenterError as exc:
        raise click.ClickException(str(exc)) from exc
    scores = probe.meta["held_out_gap_scores"]
    click.echo(f"wrote {folder} (threshold {probe.meta['threshold']}, held-out gap scores {scores})")


def _set_total(bar):
    """A callback that gives the progress bar `bar` its total once it is known."""

    def start(total: int) -> None:
        bar.total = total
        bar.refresh()

    return start


def _register_optional_commands() -> None:
    """analyze, topics and models (the library's) and the commands of the `segmenter.commands` entry-point
    group (the benchmark harness's bench and bench-topics) live with their own code; each is listed here
    by name and imported only when click needs it (`segmenter.lazy_commands`)."""
    from segmenter.lazy_commands import optional_commands

    for command in optional_commands(taken=main.commands):
        main.add_command(command)


if __name__ == "__main__":
    # `python -m segmenter.cli`: run the module under its own name, so that command modules which import
    # `segmenter.cli` (topics_cli) meet the one copy, with its commands registered, not this one.
    from segmenter.cli import main as entry_point

    entry_point()
else:
    _register_optional_commands()
