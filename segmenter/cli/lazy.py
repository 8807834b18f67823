"""Commands of the `segmenter` group that are listed by name and imported only when click needs them.

`optional_commands` gives the library's own optional commands (analyze, topics, chunk, models, cache, in
LIBRARY_COMMANDS) and those of the `segmenter.commands` entry-point group: the benchmark harness's
`bench`, `bench-topics` and `bench-chunks` (registered in pyproject.toml; another installed
distribution may add its own), each as a `LazyCommand`. Running a command imports that command's module
alone; `--help` imports every listed command's module for its one-line help, and none of them imports
torch, transformers or an extra's library at module level. A command that cannot be loaded is listed
with the reason, and running it is a one-line error (exit 1). Leaves out: the commands themselves, and
the group (`segmenter.cli.main`).
"""

from __future__ import annotations

from collections.abc import Container, Iterator
from importlib.metadata import EntryPoint, entry_points

import click

from segmenter.errors import SegmenterError

ENTRY_POINT_GROUP = "segmenter.commands"
LIBRARY_COMMANDS = {
    "analyze": "segmenter.cli.analyze:analyze",
    "topics": "segmenter.cli.topics:topics",
    "chunk": "segmenter.cli.chunk:chunk",
    "models": "segmenter.cli.models:models",
    "cache": "segmenter.cli.cache:cache",
}


class LazyCommand(click.Command):
    """A stand-in for the click command that `entry_point` names, loaded on first use and cached.

    It answers what a group asks of a subcommand (its one-line help, a context to run it in, its
    description for `to_info_dict`) by loading the real command; the context it makes belongs to the
    real command, so click runs that one.
    """

    def __init__(self, entry_point: EntryPoint) -> None:
        super().__init__(entry_point.name)
        self.entry_point = entry_point
        self._loaded: click.Command | None = None

    def load(self) -> click.Command:
        """The real command; `click.ClickException` (one line, exit 1) when it cannot be imported."""
        if self._loaded is None:
            try:
                command = self.entry_point.load()
            except SegmenterError as exc:  # e.g. an extra the command needs is not installed
                raise click.ClickException(str(exc)) from exc
            except ImportError as exc:
                raise click.ClickException(
                    f"cannot load the {self.name} command ({self.entry_point.value}): {exc}"
                ) from exc
            if not isinstance(command, click.Command):
                raise click.ClickException(
                    f"{self.entry_point.value} (command {self.name}) is not a click command"
                )
            self._loaded = command
        return self._loaded

    def get_short_help_str(self, limit: int = 45) -> str:
        try:
            return self.load().get_short_help_str(limit)
        except click.ClickException as exc:  # still listed, with the reason it cannot run
            text = f"(unavailable: {exc.message})"
            return text if len(text) <= limit else text[: limit - 3] + "..."

    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        return self.load().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: click.Context):
        return self.load().invoke(ctx)

    def to_info_dict(self, ctx: click.Context) -> dict:
        return self.load().to_info_dict(ctx)

    def get_help(self, ctx: click.Context) -> str:
        return self.load().get_help(ctx)

    def get_usage(self, ctx: click.Context) -> str:
        return self.load().get_usage(ctx)

    def main(self, *args, **kwargs):
        return self.load().main(*args, **kwargs)


def optional_commands(taken: Container[str] = ()) -> Iterator[LazyCommand]:
    """LIBRARY_COMMANDS, then the `segmenter.commands` entry points, each name once and none in `taken`
    (the group's own commands win over a plugin's of the same name)."""
    seen = set()
    library = (EntryPoint(name, value, ENTRY_POINT_GROUP) for name, value in LIBRARY_COMMANDS.items())
    for entry_point in (*library, *entry_points(group=ENTRY_POINT_GROUP)):
        if entry_point.name in taken or entry_point.name in seen:
            continue
        seen.add(entry_point.name)
        yield LazyCommand(entry_point)
