"""`segmenter cache`: where the int8 graphs and their entries are kept, how much they hold, and purging them.

The first int8 run of a model builds its graph (`segmenter.encoder.onnx.export`) and an entry that lets later
runs start without torch (`segmenter.encoder.onnx.compiled`), both in
`segmenter.encoder.onnx.runtime.cache_dir()`. A graph is built again whenever its model, probe or library
versions change, and the old one stays, so the folder grows across upgrades. `dir` prints the folder, `info`
counts what is in it, `purge` deletes it (the next run builds what it needs again). Only the cache's own files
are touched: nothing else in the folder, and no model or probe.
"""

from __future__ import annotations

from pathlib import Path

import click

from segmenter.encoder.onnx.runtime import cache_dir

PATTERNS = ("int8-*.onnx", "compiled-*.json", "*.part")  # graphs, entries, unfinished writes


def cached_files(folder: Path) -> list[Path]:
    """The cache's own files in `folder` (none when it does not exist), sorted."""
    return sorted({path for pattern in PATTERNS for path in folder.glob(pattern) if path.is_file()})


@click.group()
def cache() -> None:
    """The cache of int8 graphs ($SEGMENTER_CACHE, else ~/.cache/attention-segmenter)."""


@cache.command("dir")
def cache_folder() -> None:
    """Print the cache folder."""
    click.echo(str(cache_dir()))


@cache.command("info")
def cache_info() -> None:
    """Count the graphs and entries in the cache and their size."""
    folder = cache_dir()
    files = cached_files(folder)
    graphs = sum(path.name.startswith("int8-") for path in files)
    entries = sum(path.name.startswith("compiled-") for path in files)
    size = sum(path.stat().st_size for path in files)
    click.echo(f"{folder}: {graphs} int8 graphs, {entries} entries, {size / 1e6:.1f} MB")


@cache.command("purge")
def cache_purge() -> None:
    """Delete every graph and entry in the cache (the next int8 run builds its own again)."""
    folder = cache_dir()
    removed = freed = 0
    for path in cached_files(folder):
        try:
            size = path.stat().st_size
            path.unlink()
        except FileNotFoundError:  # another process removed it first
            continue
        except OSError as exc:
            raise click.ClickException(f"cannot delete {path}: {exc.strerror or exc}") from exc
        removed, freed = removed + 1, freed + size
    click.echo(f"removed {removed} files ({freed / 1e6:.1f} MB) from {folder}")
