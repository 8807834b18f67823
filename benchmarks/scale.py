"""Scale benchmark: does `segmenter segment` take linear time and flat memory as inputs grow?

For each size N (in MB, where 1 MB = 10^6 characters) it writes a deterministic N MB text file to a
temporary folder: the `# text` sentences of the built-in EWT dev data, joined by one space within a
document, documents separated by a blank line, cycled until the size is reached and cut at a word
boundary. It then runs `segmenter segment FILE -o OUT --no-progress` once per size as a child process and
measures that child alone: wall seconds and its own peak RSS (`os.wait4`), plus the segments written.

Checks (printed as PASS/FAIL; they do not change the exit code):
  time:   seconds(largest) / seconds(smallest) <= 20 x (largest / smallest) / 16, i.e. at most 20 for 1 and
          16 MB: at most 25% worse than linear;
  memory: peak RSS of the largest input < 1.5 GB (10^9 bytes).
A child that fails stops the run; its stderr's last line is printed and the script exits 1.

What it does not do: repeat runs or report variance, subtract start-up and model loading (both are in
the seconds, so small sizes look slower per character and the time ratio errs on the lenient side),
check the segmentation's quality, or measure anything but the one child process (no grandchildren).

    python -m segmenter.bench.scale --sizes 1,4,16 --out benchmarks/results/scale
    python -m segmenter.bench.scale --sizes 0.05,0.1 --segment-args "--batch-size 32"
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from itertools import cycle
from pathlib import Path

import click

CHARS_PER_MB = 1_000_000
RSS_LIMIT_BYTES = 1_500_000_000
TIME_RATIO_LIMIT = 20.0  # for a 16x size ratio; scaled linearly to other size ratios
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "scale"
SEGMENT_COMMAND = (sys.executable, "-m", "segmenter.cli.main", "segment")


@dataclass(frozen=True)
class Measurement:
    """One child process: wall seconds, its own peak resident set size, exit code and last stderr line."""

    seconds: float
    peak_rss_bytes: int
    returncode: int
    stderr_tail: str = ""


@dataclass(frozen=True)
class SizeResult:
    """One row of the table: a successful `segmenter segment` run on `chars` characters."""

    size_mb: float
    chars: int
    seconds: float
    peak_rss_bytes: int
    segments: int

    @property
    def chars_per_s(self) -> float:
        return self.chars / self.seconds

    @property
    def peak_rss_mb(self) -> float:
        return self.peak_rss_bytes / 1e6


@dataclass(frozen=True)
class Check:
    """A pass/fail verdict; `passed` is None when it cannot be judged (e.g. a time ratio from one size)."""

    name: str
    value: float
    limit: float
    passed: bool | None


# --- input -----------------------------------------------------------------------------------------


def ewt_paragraphs() -> list[str]:
    """Each EWT dev document's sentences joined by one space."""
    from segmenter.bench.datasets import load_dataset

    return [doc.text for doc in load_dataset("ewt-dev").documents if doc.sentences]


def write_text(path: Path, n_chars: int, paragraphs: Sequence[str]) -> int:
    """Write the paragraphs, cycled, separated by a blank line, up to `n_chars` characters; return the count.

    The text is the longest prefix of that endless stream, of at most `n_chars` characters, that ends just
    before a space or a paragraph break, so no word is cut. Written piece by piece, never held whole.
    """
    paragraphs = [p for p in paragraphs if p]
    if not paragraphs:
        raise ValueError("no non-empty paragraph to write")
    written, separator = 0, ""
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for paragraph in cycle(paragraphs):
            room = n_chars - written - len(separator)
            if len(paragraph) > room:
                cut = paragraph.rfind(" ", 0, room + 1)  # paragraph[:cut] fits and is followed by a space
                if cut > 0:
                    out.write(separator + paragraph[:cut])
                    written += len(separator) + cut
                return written
            out.write(separator + paragraph)
            written += len(separator) + len(paragraph)
            separator = "\n\n"
    raise AssertionError("unreachable")  # pragma: no cover


# --- measurement -------------------------------------------------------------------------------------


def measure(command: Sequence[str]) -> Measurement:
    """Run `command` as a child and measure its wall time and its own peak RSS (`ru_maxrss` from wait4)."""
    with tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        stderr.seek(0)
        lines = stderr.read().decode("utf-8", errors="replace").strip().splitlines()
    scale = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return Measurement(seconds, usage.ru_maxrss * scale, proc.returncode, lines[-1] if lines else "")


def count_lines(path: Path) -> int:
    with path.open("rb") as file:
        return sum(block.count(b"\n") for block in iter(lambda: file.read(1 << 20), b""))


# --- report ------------------------------------------------------------------------------------------


def checks(results: Sequence[SizeResult]) -> list[Check]:
    """The time-ratio and memory checks over successful runs (at least one), smallest vs largest size."""
    small = min(results, key=lambda r: r.chars)
    large = max(results, key=lambda r: r.chars)
    size_ratio = large.chars / small.chars
    time_limit = TIME_RATIO_LIMIT * size_ratio / 16
    time_ratio = large.seconds / small.seconds
    rss_passed = large.peak_rss_bytes < RSS_LIMIT_BYTES
    return [
        Check(
            "time ratio largest/smallest",
            time_ratio,
            time_limit,
            None if large is small else time_ratio <= time_limit,
        ),
        Check("peak RSS MB of the largest input", large.peak_rss_mb, RSS_LIMIT_BYTES / 1e6, rss_passed),
    ]


def verdict(check: Check) -> str:
    return {True: "PASS", False: "FAIL", None: "SKIP"}[check.passed]


def markdown(results: Sequence[SizeResult], check_list: Iterable[Check]) -> str:
    lines = [
        "| size MB | chars | seconds | chars/s | peak RSS MB | segments |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in sorted(results, key=lambda r: r.chars):
        lines.append(
            f"| {r.size_mb:g} | {r.chars} | {r.seconds:.2f} | {r.chars_per_s:,.0f} "
            f"| {r.peak_rss_mb:,.0f} | {r.segments} |"
        )
    lines.append("")
    for check in check_list:
        lines.append(f"- {verdict(check)}: {check.name} {check.value:,.2f} (limit {check.limit:,.2f})")
    return "\n".join(lines) + "\n"


def write_results(
    out: Path, results: Sequence[SizeResult], check_list: Sequence[Check], env: dict, failure: str | None
) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    payload = {
        "environment": env,
        "failure": failure,
        "results": [asdict(r) | {"chars_per_s": r.chars_per_s} for r in results],
        "checks": [asdict(c) | {"verdict": verdict(c)} for c in check_list],
    }
    json_path, md_path = out / "results.json", out / "results.md"
    json_path.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    body = markdown(results, check_list) if results else ""
    md_path.write_text(body + (f"\nFAILED: {failure}\n" if failure else ""), encoding="utf-8")
    return [json_path, md_path]


def environment(command: Sequence[str]) -> dict:
    from segmenter.bench.runner import environment as base

    return base() | {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "argv": [sys.executable, *sys.argv],
        "segment_command": list(command),
        "mb": "10^6 characters",
    }


# --- command -----------------------------------------------------------------------------------------


def parse_sizes(value: str) -> list[float]:
    try:
        sizes = sorted({float(part) for part in value.split(",") if part.strip()})
    except ValueError as exc:
        raise click.BadParameter(f"{value!r}: use comma-separated numbers of MB, e.g. 1,4,16") from exc
    if not sizes or sizes[0] <= 0:
        raise click.BadParameter(f"{value!r}: sizes must be positive")
    return sizes


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--sizes", default="1,4,16", show_default=True, help="Comma-separated input sizes in MB.")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_OUT,
    show_default=True,
    help="Folder for results.json and results.md.",
)
@click.option(
    "--keep-inputs", is_flag=True, help="Keep the generated inputs and outputs; print their folder."
)
@click.option(
    "--segment-args",
    default="",
    metavar="ARGS",
    help='Extra `segmenter segment` options, e.g. "--batch-size 32".',
)
def main(sizes: str, out: Path, keep_inputs: bool, segment_args: str) -> None:
    """Time and peak memory of `segmenter segment` on growing generated inputs (1 MB = 10^6 characters)."""
    size_list = parse_sizes(sizes)
    extra = shlex.split(segment_args)
    work = Path(tempfile.mkdtemp(prefix="segmenter-scale-"))
    try:
        results, failure = run_sizes(size_list, work, extra, keep_inputs)
    finally:
        if keep_inputs:
            click.echo(f"inputs and outputs kept in {work}", err=True)
        else:
            shutil.rmtree(work, ignore_errors=True)
    check_list = checks(results) if results else []
    if results:
        click.echo(markdown(results, check_list), nl=False)
    paths = write_results(out, results, check_list, environment([*SEGMENT_COMMAND, *extra]), failure)
    click.echo(f"wrote {', '.join(map(str, paths))}", err=True)
    if failure:
        click.echo(f"FAILED: {failure}", err=True)
        sys.exit(1)


def run_sizes(
    sizes: Sequence[float], work: Path, extra: Sequence[str], keep_inputs: bool
) -> tuple[list[SizeResult], str | None]:
    """Generate and segment each size in turn; stop at the first failing child (its reason is returned)."""
    paragraphs = ewt_paragraphs()
    results: list[SizeResult] = []
    for size in sizes:
        source, target = work / f"input-{size:g}MB.txt", work / f"output-{size:g}MB.txt"
        chars = write_text(source, round(size * CHARS_PER_MB), paragraphs)
        if chars == 0:
            raise click.BadParameter(f"{size:g} MB is too small to hold a word", param_hint="--sizes")
        command = [*SEGMENT_COMMAND, str(source), "-o", str(target), "--no-progress", *extra]
        click.echo(f"{size:g} MB ({chars} chars): running {shlex.join(command)}", err=True)
        m = measure(command)
        if m.returncode != 0:
            return results, f"{size:g} MB: exit {m.returncode}: {m.stderr_tail or '(no stderr)'}"
        results.append(SizeResult(size, chars, m.seconds, m.peak_rss_bytes, count_lines(target)))
        if not keep_inputs:
            source.unlink()
            target.unlink()
    return results, None


if __name__ == "__main__":  # pragma: no cover
    main()
