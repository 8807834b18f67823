"""`segmenter train`: fit a boundary probe and write it to --out (probe.npz + meta.json).

Two subcommands, by what is trained:

- `segmenter train probe`: the encoder stays frozen; a probe (an MLP or a logistic regression) is fitted
  on the features it reads at --layers (block outputs, context vectors, attention signals, case and
  punctuation flags).
- `segmenter train tune`: the encoder's blocks 1..K (--blocks K) are tuned with low-rank weight deltas,
  jointly with an MLP probe reading block K's output and the case and punctuation flags; the probe
  carries the deltas, which the segmenter merges when it loads it (the shipped presets are tuned).

Both take the options of `training_run_options` (data, output folder, backbone, windows, conditions,
held-out split, seeds, batch size, precision, progress), given to them as one `TrainingRun`. An option
of one subcommand given to the other is a usage error naming the subcommand it belongs to. The form
from before the split, `segmenter train --data ... [--tune-blocks K] ...`, still runs: as `tune` when
--tune-blocks is among its arguments, else as `probe`.

Runtime failures (missing data, unknown model, a layer the model lacks) exit 1 with one line; usage errors
exit 2. Leaves out the training itself (`segmenter.training.probe`, `segmenter.training.tune`) and reading the
data (`segmenter.training.data`); those and torch are imported only when a subcommand runs.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path

import click

from segmenter.cli.common import FiniteFloatRange, progress_bar, set_total
from segmenter.config import PRECISIONS, WindowConfig
from segmenter.errors import ConfigError, SegmenterError

TUNE_SWITCH = "--tune-blocks"  # in the form from before the split, this option alone means `tune`


class _TrainGroup(click.Group):
    """The `train` group; arguments that start with an option instead of a subcommand are the form
    from before the split, run as `tune` when TUNE_SWITCH is among them, else as `probe`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0].startswith("-") and args[0] not in ctx.help_option_names:
            tuned = any(arg == TUNE_SWITCH or arg.startswith(TUNE_SWITCH + "=") for arg in args)
            args = ["tune" if tuned else "probe", *args]
        return super().parse_args(ctx, args)


class _TrainCommand(click.Command):
    """A `train` subcommand; an option that belongs to the other subcommand is refused with a line
    naming it. `scope` says what this subcommand's own options are about."""

    def __init__(self, *args, scope: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.scope = scope
        # --help lists what to train on (--data, --out, --model), then this subcommand's own options,
        # then the run options both share
        self.params.sort(key=_help_rank)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            found = _sibling_option(ctx, self, exc.option_name)
            if found is None:
                raise
            owner, param = found
            # the option that names the subcommand (tune's --tune-blocks) needs no scope: it is the scope
            scope = " is" if param.required else f" {owner.scope}:"
            group_path = ctx.parent.command_path
            raise click.UsageError(
                f"{exc.option_name}{scope} an option of `{group_path} {owner.name}`, "
                f"not of `{group_path} {self.name}`",
                ctx,
            ) from exc


def _sibling_option(
    ctx: click.Context, command: click.Command, option: str
) -> tuple[_TrainCommand, click.Parameter] | None:
    """The other `train` subcommand that has `option`, and its parameter, if one has."""
    group = ctx.parent.command if ctx.parent is not None else None
    others = group.commands.values() if isinstance(group, click.Group) else ()
    for other in others:
        if other is command or not isinstance(other, _TrainCommand):
            continue
        for param in other.params:
            if option in (*param.opts, *param.secondary_opts):
                return other, param
    return None


@click.group("train", cls=_TrainGroup)
def train() -> None:
    """Train a boundary probe and write it to --out (probe.npz + meta.json).

    `probe` fits it on the frozen encoder; `tune` also tunes the encoder's blocks 1..K, whose low-rank
    weight deltas the probe then carries and the segmenter merges when it loads it. The form without a
    subcommand still works: with --tune-blocks K it is `tune`, otherwise `probe`.
    """


@dataclass(frozen=True)
class TrainingRun:
    """The options both subcommands share: what to train on, with which backbone, where to write the
    probe, and how to run (windows, conditions, held-out split, seeds, batch size, precision)."""

    specs: tuple[str, ...]
    out_dir: str
    model: str | None
    window: WindowConfig
    conditions: str  # "both", "clean" or "corrupt"
    unmarked_share: float
    holdout: float
    seed: int
    split_seed: int | None
    batch_size: int
    precision: str
    progress: bool

    def condition_names(self, line_breaks: bool) -> tuple[str, ...]:
        """The conditions to train on: those of --conditions, and the line layouts with line breaks."""
        from segmenter.training.probe import CONDITIONS, LAYOUTS

        names = CONDITIONS if self.conditions == "both" else (self.conditions,)
        return names + LAYOUTS if line_breaks else names


_RUN_OPTIONS = (
    click.option(
        "--data",
        "specs",
        multiple=True,
        required=True,
        help="Training data: conllu:PATH, golden:PATH, raw:PATH (punctuated text, self-supervised), "
        "ud-train[:DIR] (the six UD English train splits, from DIR, $SEGMENTER_UD or ../shared/data/ud) "
        "or a built-in dev set (ewt-dev). Repeatable.",
    ),
    click.option(
        "--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Probe folder to write."
    ),
    click.option(
        "--model", default=None, help="Backbone: Hugging Face id or local path (default: packaged MiniLM)."
    ),
    click.option(
        "--conditions",
        type=click.Choice(["both", "clean", "corrupt"]),
        default="both",
        show_default=True,
        help="Train on the text as given, corrupted (lowercase, no punctuation), or both.",
    ),
    click.option(
        "--unmarked-share",
        type=FiniteFloatRange(0, 1),
        default=0.0,
        show_default=True,
        help="Share of the sentences that lose their final punctuation (. ! ? ...) in the clean training "
        "copy, picked by a hash of document and sentence, so the probe also learns boundaries that no "
        "punctuation marks (chat, web text). Held-out text stays as given.",
    ),
    click.option("--window-size", type=click.IntRange(min=8), default=128, show_default=True),
    click.option(
        "--stride",
        type=click.IntRange(min=1),
        default=None,
        help="Tokens between window starts.  [default: 3/4 of --window-size, 96 for 128]",
    ),
    click.option(
        "--holdout",
        type=FiniteFloatRange(0, 0.9),
        default=0.2,
        show_default=True,
        help="Share of the gold documents held out to pick the thresholds (raw: documents always train, "
        "unless there is no gold data).",
    ),
    click.option(
        "--seed",
        type=int,
        default=0,
        show_default=True,
        help="Seed of the held-out split and of the probe's initial weights.",
    ),
    click.option(
        "--split-seed",
        type=int,
        default=None,
        help="Seed of the held-out split alone  [default: --seed]; fix it to compare seeds on the same "
        "held-out documents.",
    ),
    click.option("--batch-size", type=click.IntRange(min=1), default=16, show_default=True),
    click.option(  # int8 runs no torch blocks, and training tunes them
        "--precision",
        type=click.Choice(tuple(p for p in PRECISIONS if p != "int8")),
        default="auto",
        show_default=True,
        help="Encoder arithmetic; auto: bfloat16 where the hardware has it natively, else float32.",
    ),
    click.option("--progress/--no-progress", default=True),
)


def _help_rank(param: click.Parameter) -> int:
    """Where `param` goes in a subcommand's --help: 0 what to train on (--data, --out, --model), 1 the
    subcommand's own options, 2 the other options of `TrainingRun` (window_size and stride make its
    window)."""
    if param.name in ("specs", "out_dir", "model"):
        return 0
    return 2 if param.name in {field.name for field in fields(TrainingRun)} | {"window_size", "stride"} else 1


def training_run_options(command):
    """Decorator: the options of `_RUN_OPTIONS`, given to `command` as one `run: TrainingRun`."""

    @functools.wraps(command)
    def with_run(*args, window_size: int, stride: int | None, **kwargs):
        settings = {
            field.name: kwargs.pop(field.name) for field in fields(TrainingRun) if field.name != "window"
        }
        with _usage_errors():
            window = WindowConfig(
                size=window_size, stride=stride or max(1, min(window_size * 3 // 4, window_size - 3))
            )
        return command(*args, run=TrainingRun(window=window, **settings), **kwargs)

    for option in reversed(_RUN_OPTIONS):
        with_run = option(with_run)
    return with_run


@contextlib.contextmanager
def _usage_errors() -> Iterator[None]:
    """Option values that do not fit together (a `ConfigError` from a config class) exit 2."""
    try:
        yield
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc


def _line_breaks_option(default: bool | None, note: str):
    return click.option(
        "--line-breaks/--no-line-breaks",
        default=default,
        help="Read line breaks (whether a token starts a line, and how long the line before it was) and "
        "also train on the text laid out in lines: paragraphs on lines of their own, and hard-wrapped.  "
        f"[default: {note}]",
    )


def _hidden_units_option(default: int):
    return click.option(
        "--hidden-units",
        type=click.IntRange(min=1),
        default=default,
        show_default=True,
        help="ReLU units of the MLP probe's hidden layer.",
    )


@train.command("probe", cls=_TrainCommand, scope="describes a probe of the frozen encoder")
@training_run_options
@click.option("--layers", default="2,3,4", show_default=True, help="Comma-separated 1-based layers.")
@click.option("--hidden/--no-hidden", default=True, show_default=True, help="Use block outputs.")
@click.option(
    "--vectors/--no-vectors", default=False, show_default=True, help="Use per-head context vectors."
)
@click.option("--signals/--no-signals", default=True, show_default=True, help="Use attention signals.")
@click.option(
    "--surface/--no-surface",
    default=True,
    show_default=True,
    help="Use case and punctuation flags of the original characters.",
)
@_line_breaks_option(None, "on; off with --no-surface")
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
    "--c",
    "c",
    type=FiniteFloatRange(min=0, min_open=True),
    default=0.005,
    show_default=True,
    help="Inverse L2 strength.",
)
@_hidden_units_option(128)
@click.option(
    "--members",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="MLPs fitted with seeds SEED, SEED+1, ... and averaged into one probe (an ensemble).",
)
@click.option(
    "--refit/--no-refit",
    default=False,
    show_default=True,
    help="After picking thresholds, refit on every document (held-out ones included); the thresholds "
    "still come from the first fit, which a refitted MLP may not honour.",
)
def probe(
    run: TrainingRun, layers, hidden, vectors, signals, surface, line_breaks, context, kind, c, hidden_units,
    members, refit,
):  # fmt: skip
    """Fit a probe on the features of the frozen encoder."""
    from segmenter.config import FeatureConfig
    from segmenter.extras import require_installed

    try:  # before the model and the data load: the fit is scikit-learn's
        require_installed(["sklearn"], "train", "training a probe")
    except SegmenterError as exc:
        raise click.ClickException(str(exc)) from exc
    from segmenter.training.probe import TrainConfig, train_probe

    try:
        layer_tuple = tuple(int(x) for x in layers.split(","))
    except ValueError as exc:
        raise click.UsageError(f"--layers must be comma-separated integers, got {layers!r}") from exc
    if members > 1 and kind != "mlp":
        raise click.UsageError("--members above 1 needs --kind mlp: only MLP probes can be averaged")
    line_breaks = surface if line_breaks is None else line_breaks
    with _usage_errors():
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
            window=run.window,
            conditions=run.condition_names(line_breaks),
            kind=kind,
            refit=refit,
            c=c,
            hidden_units=hidden_units,
            members=members,
            holdout=run.holdout,
            seed=run.seed,
            split_seed=run.split_seed,
            batch_size=run.batch_size,
            unmarked_share=run.unmarked_share,
        )

    def fit(encoder, docs, sources, bar):
        return train_probe(encoder, docs, config, sources, progress=bar.update)

    _train(run, max(layer_tuple), fit)


@train.command("tune", cls=_TrainCommand, scope=f"applies only with {TUNE_SWITCH}")
@training_run_options
@click.option(
    "--blocks",
    TUNE_SWITCH,
    "blocks",
    type=click.IntRange(min=1),
    required=True,
    help="Tune blocks 1..K with low-rank deltas, trained jointly with the MLP probe, which reads block "
    "K's output and the case/punctuation flags. The shipped presets are tuned.",
)
@click.option(
    "--rank",
    type=click.IntRange(min=1),
    default=16,
    show_default=True,
    help="Rank of the deltas.",
)
@click.option(
    "--epochs",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Passes over the data.",
)
@click.option(
    "--learning-rate",
    type=FiniteFloatRange(min=0, min_open=True),
    default=5e-4,
    show_default=True,
    help="Peak learning rate of the deltas.",
)
@_hidden_units_option(256)
@click.option(
    "--signals/--no-signals",
    default=False,
    show_default=True,
    help="Also read block K's attention signals.",
)
@click.option(
    "--keep-heads",
    "heads",
    type=click.IntRange(min=1),
    default=None,
    help="Narrow each tuned block to its N attention heads that add most to its output on the "
    "training text (default: keep all).",
)
@click.option(
    "--keep-units",
    "units",
    type=click.IntRange(min=1),
    default=None,
    help="Narrow each tuned block to its N feed-forward units that add most to its output "
    "(default: keep all).",
)
@_line_breaks_option(True, "on")
@click.option(
    "--teacher",
    default=None,
    metavar="PRESET|FOLDER",
    help="Distil from this probe (a shipped preset such as accurate, or a probe folder): each gap's "
    "training target mixes its gold label with the teacher's probability. A tuned probe of the same "
    "backbone, unless --teacher-model names another.",
)
@click.option(
    "--teacher-model",
    default=None,
    metavar="NAME|PATH",
    help="The teacher's backbone when it is not the student's (for example all-mpnet-base-v2): the "
    "teacher then reads each training document whole, and its probabilities are matched to the "
    "student's gaps by character offset.",
)
@click.option(
    "--teacher-weight",
    type=FiniteFloatRange(0, 1),
    default=0.5,
    show_default=True,
    help="Share of the teacher's probability in each target (with --teacher).",
)
@click.option(
    "--read-stride",
    type=click.IntRange(min=1),
    default=None,
    help="Tokens between window starts when the written probe segments text (less overlap: faster); "
    "the stride it trained at is kept in meta.json as tuned.window_stride.  [default: --stride]",
)
def tune(
    run: TrainingRun,
    blocks,
    rank,
    epochs,
    learning_rate,
    hidden_units,
    signals,
    heads,
    units,
    line_breaks,
    teacher,
    teacher_model,
    teacher_weight,
    read_stride,
):
    """Tune the encoder's blocks 1..K together with an MLP probe (how the shipped presets are made)."""
    from segmenter.training.tune import TuneConfig, tune_probe

    with _usage_errors():
        if read_stride is not None:
            WindowConfig(size=run.window.size, stride=read_stride)  # the same checks as --stride
        config = TuneConfig(
            blocks=blocks,
            rank=rank,
            epochs=epochs,
            learning_rate=learning_rate,
            hidden_units=hidden_units,
            window=run.window,
            conditions=run.condition_names(line_breaks),
            holdout=run.holdout,
            batch_size=run.batch_size,
            seed=run.seed,
            split_seed=run.split_seed,
            lines=line_breaks,
            unmarked_share=run.unmarked_share,
            signals=signals,
            heads=heads,
            units=units,
            teacher=teacher,
            teacher_weight=teacher_weight,
            teacher_model=teacher_model,
        )

    def fit(_, docs, sources, bar):
        bar.unit, bar.unit_scale = "batch", False
        probe = tune_probe(
            run.model, docs, config, sources, run.precision, progress=bar.update, start=set_total(bar)
        )
        if read_stride is not None:  # thresholds and held-out scores stay those of the training stride
            probe.meta["tuned"]["window_stride"] = probe.meta["window"]["stride"]
            probe.meta["window"]["stride"] = read_stride
        return probe

    _train(run, blocks, fit, reads_encoder=False)


def _train(run: TrainingRun, max_layer: int, fit: Callable, *, reads_encoder: bool = True) -> None:
    """Load the backbone up to `max_layer` before the data (so a bad --layers, --blocks or --model fails
    at once), read the data, `fit(encoder, docs, sources, bar)` under a progress bar, write the probe and
    say where. With `reads_encoder` false, `fit` gets None instead (it loads a trainable copy itself)."""
    from segmenter.encoder.torch.encoder import Encoder
    from segmenter.training.data import load_training_documents

    try:
        encoder = Encoder(run.model, max_layer=max_layer, precision=run.precision)
        docs, sources = load_training_documents(run.specs)
        if not reads_encoder:
            encoder = None  # free it before the trainable copy loads
        with progress_bar(0, run.progress, unit="step", log_every=60.0) as bar:
            probe = fit(encoder, docs, sources, bar)
        folder = probe.save(Path(run.out_dir))
    except SegmenterError as exc:
        raise click.ClickException(str(exc)) from exc
    scores = probe.meta["held_out_gap_scores"]
    click.echo(f"wrote {folder} (threshold {probe.meta['threshold']}, held-out gap scores {scores})")
