"""`segmenter segment --engine ray`: connect to (or start) Ray, segment INPUTS, write OUT_DIR.

`ENGINE_OPTIONS` adds the engine's options to the `segment` command; `run` does the work: it lists and checks
the inputs and the output folder before Ray starts, starts a local Ray instance sized to the machine when no
`--address` is given (all its CPUs, an object store of `OBJECT_STORE_BYTES`, no dashboard) or joins the
cluster at ADDRESS, and writes through `segmenter.integrations.ray.output.StagedFolder`, so OUT_DIR appears
complete or not at all; a rerun into an existing OUT_DIR is refused. Rows keep document order. The defaults
give one actor per `--cpus-per-actor` CPUs (or `--gpus-per-actor` GPUs) of the instance. Segmenting lives in
`segmenter.integrations.ray.engine`, reading in `segmenter.integrations.ray.inputs`.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # pragma: no cover
    from segmenter.config import SegmenterConfig

OBJECT_STORE_BYTES = 256 << 20  # a local instance's shared memory for blocks in flight (spills beyond)
RAY_ONLY = ("address", "text_column", "id_column", "actors", "cpus_per_actor", "gpus_per_actor")

ENGINE_OPTIONS = [
    click.option(
        "--engine",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help="local: this process; ray: a pool of Ray actors, writing sharded files to -o OUT_DIR.",
    ),
    click.option(
        "--address", default=None, help="Ray cluster to join (--engine ray; default: start one here)."
    ),
    click.option("--text-column", default="text", show_default=True, help="JSONL/Parquet text field (ray)."),
    click.option(
        "--id-column", default=None, help="JSONL/Parquet id field (ray; default: PATH:LINE / PATH:ROW)."
    ),
    click.option("--actors", type=click.IntRange(min=1), default=None, help="Actors in the pool (ray)."),
    click.option(
        "--cpus-per-actor",
        type=click.FloatRange(min=0, min_open=True),
        default=1.0,
        show_default=True,
        help="CPUs (torch threads) per actor (ray).",
    ),
    click.option(
        "--gpus-per-actor",
        type=click.FloatRange(min=0),
        default=0.0,
        show_default=True,
        help="GPUs per actor (ray; with --device cuda).",
    ),
]


def engine_options(func):
    """The `segment` command's engine options, as one decorator."""
    for option in reversed(ENGINE_OPTIONS):
        func = option(func)
    return func


def refuse_ray_only(ctx: click.Context) -> None:
    """A usage error for a Ray-only option given without --engine ray."""
    from click.core import ParameterSource

    for name in RAY_ONLY:
        if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE:
            raise click.UsageError(f"--{name.replace('_', '-')} needs --engine ray")


def run(files, fmt, output, config: SegmenterConfig, encoding, errors, progress, options: dict) -> None:
    """Segment `files` on Ray into the folder `output`, each actor with a segmenter built from `config`;
    one-line errors (exit 1) for runtime failures."""
    from click.core import ParameterSource

    from segmenter.errors import MissingExtraError, SegmenterError
    from segmenter.extras import require

    try:
        for module in ("ray", "pyarrow"):  # before segmenter.integrations.ray.output, which imports pyarrow
            require(module, "ray", "--engine ray")
    except MissingExtraError as exc:
        raise click.ClickException(str(exc)) from exc
    from segmenter.integrations.ray.output import FORMATS, StagedFolder

    if click.get_current_context().get_parameter_source("fmt") is not ParameterSource.COMMANDLINE:
        fmt = "jsonl"  # the engine's default: the local default, lines, has no ids or offsets
    if fmt not in FORMATS:
        raise click.UsageError(f"--engine ray writes --format {' or '.join(FORMATS)}, not {fmt}")
    if output == "-" or not files:
        raise click.UsageError("--engine ray needs INPUTS and -o OUT_DIR (it writes a folder of shards)")
    from segmenter.integrations.ray.inputs import expand_inputs

    try:
        paths = expand_inputs(list(files))
        folder = StagedFolder(output)
        folder.check()
        "".encode(encoding)
    except LookupError as exc:
        raise click.ClickException(f"unknown encoding {encoding!r}") from exc
    except SegmenterError as exc:
        raise click.ClickException(str(exc)) from exc
    started = _connect(options["address"])
    try:
        manifest = _segment(paths, folder, fmt, config, encoding, errors, progress, options)
    except SegmenterError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        if started:
            import ray

            ray.shutdown()
    click.echo(
        f"wrote {output}: {manifest['segments']} segments of {manifest['documents_segmented']} documents "
        f"in {len(manifest['shards'])} shard(s), {manifest['errors']} error(s) in errors.jsonl",
        err=True,
    )


def _connect(address: str | None) -> bool:
    """Join the cluster at `address`, or start a local instance; whether one was started."""
    import ray

    if ray.is_initialized():
        return False
    quiet = {"logging_level": logging.WARNING, "log_to_driver": True}
    if address is not None:
        try:
            ray.init(address=address, **quiet)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise click.ClickException(f"cannot join the Ray cluster at {address}: {exc}") from exc
        return True
    ray.init(
        num_cpus=os.cpu_count(),
        object_store_memory=OBJECT_STORE_BYTES,
        include_dashboard=False,
        **quiet,
    )
    return True


def _segment(paths, folder, fmt, config, encoding, errors, progress, options) -> dict:
    import ray
    import ray.data
    from tqdm import tqdm

    from segmenter.integrations.ray.engine import segment_dataset
    from segmenter.integrations.ray.inputs import documents_dataset
    from segmenter.integrations.ray.output import write_rows

    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True  # output in document order, the same every run
    context.enable_progress_bars = False  # one bar of ours instead of Ray's per operator
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    cpus, gpus = options["cpus_per_actor"], options["gpus_per_actor"]
    documents = documents_dataset(paths, options["text_column"], options["id_column"], encoding, errors)
    actors = options["actors"] or _pool_size(ray.cluster_resources(), cpus, gpus)
    rows = segment_dataset(
        documents, "text", "id", config, encoding=encoding, errors=errors,
        concurrency=actors, num_cpus=cpus, num_gpus=gpus,
    )  # fmt: skip
    total = sum(os.path.getsize(path) for path in paths)
    bar = tqdm(
        total=total, unit="char", unit_scale=True, file=sys.stderr, leave=False,
        disable=not (progress and sys.stderr.isatty()),
    )  # fmt: skip
    with bar, folder as staging:
        return write_rows(
            rows.iter_batches(batch_format="pyarrow", batch_size=None), staging, fmt, bar.update
        )


def _pool_size(resources: dict, cpus: float, gpus: float) -> int:
    """Actors that fit the instance at once: by GPUs when each takes some, else by CPUs."""
    if gpus > 0:
        return max(1, int(resources.get("GPU", 0) // gpus))
    return max(1, int(resources.get("CPU", 1) // cpus))
