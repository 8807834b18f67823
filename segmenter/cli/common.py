"""What the `segmenter` commands share: option types, the common options, progress bars and how a
command turns failures into one line.

`config_options` adds the options that choose a segmenter (--model, --strategy, --threshold, --device,
--precision, --preset, --batch-size, --probe) and hands the command ONE argument, `config`, a
`SegmenterConfig` built from them, so that no command lists those settings again. `output_option` and
`input_options` are the `-o` and the --encoding / --errors / --progress options of the commands that
read text files; `command_errors` makes a library error (`SegmenterError`) or a failed write a one-line
message with exit status 1.

Leaves out: the commands themselves (`segmenter.cli.main`, `segmenter.cli.train`, `segmenter.cli.topics`,
`segmenter.cli.models`, `segmenter.integrations.ray.run`, which import this module and never each other), and
anything that loads a model: torch and transformers are not imported here, so `--help` stays fast.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
import sys
from collections.abc import Iterator

import click

from segmenter.config import DEFAULT_PRESET, LAYOUTS, PRECISIONS, PRESETS, STRATEGIES, SegmenterConfig
from segmenter.errors import ConfigError, SegmenterError
from segmenter.io import STDIO
from segmenter.text.breaks import LINE_BREAKS

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


def check_output_path(ctx, param, value: str) -> str:
    """click callback of `-o`: an empty or blank path is a usage error."""
    if not value.strip():
        raise click.BadParameter("is empty; pass a file path, or '-' for stdout", ctx, param)
    return value


PRECISION_OPTION = click.option(
    "--precision",
    type=click.Choice(PRECISIONS),
    default="auto",
    show_default=True,
    help="Encoder arithmetic; auto: int8 for presets that name it on a CPU with VNNI or AVX2 (no AMX), "
    "else bfloat16 where the hardware has it natively, else float32; int8: ONNX Runtime with int8 "
    "weights on the CPU (not for --preset signals).",
)

# SegmenterConfig field -> its option, in the order `--help` lists them (max_chars has no option)
CONFIG_OPTIONS = {
    "model": click.option(
        "--model", default=None, help="Hugging Face id or local path (default: packaged MiniLM)."
    ),
    "strategy": click.option(
        "--strategy", type=click.Choice(STRATEGIES), default="probe", show_default=True, help="Scoring."
    ),
    "threshold": click.option(
        "--threshold", type=FiniteFloatRange(0, 1), default=None, help="Boundary probability cut-off."
    ),
    "device": click.option(
        "--device", default="cpu", show_default=True, help="torch device, e.g. cpu or cuda."
    ),
    "precision": PRECISION_OPTION,
    "preset": click.option(
        "--preset",
        type=click.Choice(PRESETS),
        default=DEFAULT_PRESET,
        show_default=True,
        help="Shipped probe: accurate (3 tuned blocks), fast (2 tuned blocks, faster), fastest (fast with "
        "half of each block's heads and units, fastest) or signals (fast plus block 2's attention "
        "signals); ignored with --probe.",
    ),
    "batch_size": click.option(
        "--batch-size",
        type=click.IntRange(min=1),
        default=16,
        show_default=True,
        help="Windows per pass.",
    ),
    "probe": click.option(
        "--probe",
        default=None,
        type=click.Path(),
        help="Probe folder from `segmenter train` (default: shipped).",
    ),
    "layout": click.option(
        "--layout",
        type=click.Choice(LAYOUTS),
        default="auto",
        show_default=True,
        help="Markdown blocks read before the model: auto (headings, lists, fenced code, tables, quotes: "
        "what plain text does not have by accident), markdown (indented code and HTML blocks too) or plain "
        "(none).",
    ),
    "paired": click.option(
        "--paired/--alone",
        default=True,
        show_default=True,
        help="Where the probe names a partner (--model all-mpnet-base-v2 does: the MiniLM default), "
        "average the partner's boundary probabilities with the probe's; --alone reads the probe alone.",
    ),
}


def config_options(command):
    """Decorator: the options of `CONFIG_OPTIONS`, given to `command` as one `config: SegmenterConfig`."""

    @functools.wraps(command)
    def with_config(*args, **kwargs):
        settings = {name: kwargs.pop(name) for name in CONFIG_OPTIONS}
        try:
            config = SegmenterConfig(**settings)
        except ConfigError as exc:  # click's types check each value; this is the last word on them
            raise click.UsageError(str(exc)) from exc
        return command(*args, config=config, **kwargs)

    for option in reversed(CONFIG_OPTIONS.values()):
        with_config = option(with_config)
    return with_config


output_option = click.option(
    "-o",
    "--output",
    default="-",
    show_default=True,
    callback=check_output_path,
    help="Output file ('-' for stdout).",
)

_INPUT_OPTIONS = (
    click.option("--encoding", default="utf-8", show_default=True, help="Text encoding of the input files."),
    click.option(
        "--errors",
        type=click.Choice(["strict", "replace"]),
        default="strict",
        show_default=True,
        help="On undecodable bytes: fail (strict) or substitute U+FFFD (replace).",
    ),
    click.option(
        "--progress/--no-progress", default=True, help="Progress bar on stderr (only on a terminal)."
    ),
)


def input_options(command):
    """Decorator: --encoding, --errors and --progress of the commands that read text files."""
    for option in reversed(_INPUT_OPTIONS):
        command = option(command)
    return command


def input_names(files: tuple[str, ...]) -> list[str]:
    """The FILES argument as a list, stdin ('-') when empty; an empty name is a usage error."""
    names = list(files) or [STDIO]
    if any(not name.strip() for name in names):
        raise click.BadParameter("an input file name is empty", param_hint="FILES")
    return names


@contextlib.contextmanager
def command_errors(output: str) -> Iterator[None]:
    """Turn a library error into its one-line message, and a failed write to `output` (a full disk or
    device, a reader that went away) into `cannot write to ...`: both exit 1."""
    try:
        yield
    except SegmenterError as exc:
        raise click.ClickException(str(exc)) from exc
    except OSError as exc:
        if output == STDIO:
            detach_stdout()
        target = "stdout" if output == STDIO else output
        raise click.ClickException(f"cannot write to {target}: {exc.strerror or exc}") from exc


def detach_stdout() -> None:
    """Point stdout at the null device, so that flushing it at exit does not fail a second time."""
    with contextlib.suppress(OSError, ValueError, AttributeError):  # not a real file: a test runner's buffer
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def progress_bar(total: int | None, enabled: bool, unit: str = "char", log_every: float | None = None):
    """A tqdm bar in `unit`s on stderr, shown when `enabled` and stderr is a terminal. With `log_every`
    (seconds), a stderr that is no terminal (a log file, nohup) gets the bar as a plain line that often
    instead of nothing, so a long run is never silent."""
    from tqdm import tqdm

    terminal = sys.stderr.isatty()
    logged = enabled and not terminal and log_every is not None
    return tqdm(
        total=total,
        unit=unit,
        unit_scale=unit == "char",
        file=_LogLines(sys.stderr) if logged else sys.stderr,
        mininterval=log_every if logged else 0.1,
        disable=not (enabled and (terminal or logged)),
        leave=False,
    )


class _LogLines:
    """A stream for tqdm that writes each redraw of the bar as a line of its own (no carriage returns)."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text: str) -> None:
        line = text.replace("\r", "").strip()
        if line:
            self.stream.write(line + "\n")

    def flush(self) -> None:
        self.stream.flush()


def set_total(bar):
    """A callback that gives the progress bar `bar` its total once it is known."""

    def start(total: int) -> None:
        bar.total = total
        bar.refresh()

    return start
