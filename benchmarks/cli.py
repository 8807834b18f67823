"""`segmenter bench`: accuracy and speed of our segmenter and rule-based splitters, side by side.

A click command, the `bench` entry point of the `segmenter.commands` group (pyproject.toml), which
`segmenter.cli.main` lists and loads when it runs. It resolves the datasets, runs every system in each
condition, prints the markdown table and, with `--out`, writes results.json, results.md and
f1_vs_speed.png. The work is done in `datasets`, `runner` and `report`;
this module only turns options into calls and errors into click exceptions.

Examples:
    segmenter bench --dataset ewt-test --dataset golden-rules --out runs/bench
    segmenter bench --dataset conllu:my.conllu --system pysbd --system attention:similarity --limit-docs 20
"""

from __future__ import annotations

from pathlib import Path

import click

from segmenter.bench.datasets import BUILTIN, CONDITIONS, load_dataset
from segmenter.bench.report import family_table, markdown_table, write_outputs
from segmenter.bench.runner import environment, make_tasks, run_benchmark
from segmenter.bench.systems import DEFAULT_SYSTEMS, SystemOptions, check_name, libraries
from segmenter.errors import MissingExtraError, SegmenterError
from segmenter.extras import require_installed

DEFAULT_DATASETS = ("ewt-test", "golden-rules")


@click.command("bench")
@click.option(
    "--dataset",
    "datasets",
    multiple=True,
    metavar="SPEC",
    help=f"{', '.join(BUILTIN)}, conllu:PATH, golden:PATH or realworld:PATH; repeatable "
    f"[default: {', '.join(DEFAULT_DATASETS)}]",
)
@click.option(
    "--system",
    "systems",
    multiple=True,
    metavar="NAME",
    help="repeatable; ours also as NAME@MODEL[:STRATEGY], another backbone in the same run "
    f"[default: all: {', '.join(DEFAULT_SYSTEMS)}]",
)
@click.option(
    "--condition",
    type=click.Choice([*CONDITIONS, "both", "all"]),
    default="all",
    show_default=True,
    help="corrupt: lowercased, punctuation deleted, whitespace collapsed; lines: clean, each paragraph "
    "on a line of its own; wrapped: lines hard-wrapped at 72 characters (lines and wrapped: datasets "
    "with paragraph markers only); both: clean and corrupt; all: every condition",
)
@click.option("--model", default=None, help="backbone for the attention systems (HF id or local path)")
@click.option("--device", default="cpu", show_default=True, help="torch device for the attention systems")
@click.option(
    "--batch-size", type=click.IntRange(min=1), default=None, help="windows per forward pass (ours)"
)
@click.option(
    "--limit-docs",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="only the first N documents of each dataset",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="directory for results.json, results.md and f1_vs_speed.png",
)
@click.option(
    "--isolate/--same-process",
    default=True,
    show_default=True,
    help="run each system in a fresh process, so no system is timed after another in the same process",
)
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="threads every system runs on (torch, OpenMP, BLAS), so speeds compare at equal resources",
)
@click.option(
    "--busy",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    metavar="K",
    help="keep K other processes busy (one core each) while the systems run: speed on a busy machine",
)
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="N",
    help="run every system N times (fresh processes, all systems per round); chars/s is the median "
    "over the rounds, each round's in results.json",
)
@click.option(
    "--no-progress", is_flag=True, help="no progress bar (it is off anyway when stderr is not a tty)"
)
def bench(
    datasets, systems, condition, model, device, batch_size, limit_docs, out, isolate, threads, busy,
    repeats, no_progress,
) -> None:  # fmt: skip
    """Benchmark sentence splitters: boundary precision/recall/F1 and characters per second."""
    systems = tuple(dict.fromkeys(systems or DEFAULT_SYSTEMS))
    for name in systems:
        try:
            check_name(name)
        except SegmenterError as exc:
            raise click.BadParameter(str(exc), param_hint="--system") from exc
    try:  # found, not imported: the systems load in their own processes, and are timed there
        for name in systems:
            require_installed(libraries(name), "bench", f"segmenter bench (system {name})")
        if out is not None:
            require_installed(("matplotlib",), "bench", "segmenter bench --out (its F1/speed figure)")
    except MissingExtraError as exc:
        raise click.ClickException(str(exc)) from exc
    loaded = []
    for spec in dict.fromkeys(datasets or DEFAULT_DATASETS):
        try:
            loaded.append(load_dataset(spec).head(limit_docs))
        except SegmenterError as exc:
            raise click.BadParameter(str(exc), param_hint="--dataset") from exc
    conditions = {"all": CONDITIONS, "both": CONDITIONS[:2]}.get(condition, (condition,))
    options = SystemOptions(model=model, device=device, batch_size=batch_size)
    try:
        tasks = make_tasks(loaded, conditions)
    except SegmenterError as exc:
        raise click.ClickException(str(exc)) from exc
    if not tasks:  # only layout conditions, and no dataset has paragraphs to lay out
        raise click.BadParameter(
            f"no dataset given has paragraph markers, which the {'/'.join(conditions)} condition needs",
            param_hint="--condition",
        )
    runs = run_benchmark(
        systems,
        tasks,
        options,
        progress=not no_progress,
        isolate=isolate,
        threads=threads,
        busy=busy,
        repeats=repeats,
    )
    click.echo(markdown_table(runs), nl=False)
    families = family_table(runs)
    if families:
        click.echo(f"\nBy family: F1 (exact)\n\n{families}", nl=False)
    if out is not None:
        config = {
            "systems": list(systems),
            "datasets": [ds.name for ds in loaded],
            "conditions": list(conditions),
            "limit_docs": limit_docs,
            "isolate": isolate,
            "threads": threads,
            "busy": busy,
            "repeats": repeats,
            "model": model,
            "device": device,
            "batch_size": batch_size,
        }
        try:
            paths = write_outputs(out, runs, environment(), config)
        except OSError as exc:
            raise click.ClickException(f"cannot write results to {out}: {exc}") from exc
        click.echo(f"wrote {', '.join(str(p) for p in paths)}", err=True)
