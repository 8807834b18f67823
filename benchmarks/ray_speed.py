"""Ray engine benchmark: chars/s of local `segmenter segment` and of `--engine ray` with 1 and 2 actors.

It writes FILES text files of EWT dev paragraphs (`segmenter.bench.scale.write_text`, MB/FILES million
characters each) and a tiny one-sentence file to a temporary folder, then times each command once, as
a fresh child process (start-up and model loading included), on the big input and on the tiny one:

    local:     segmenter segment FILES... --format jsonl -o OUT.jsonl
    ray-1:     segmenter segment --engine ray --actors 1 FILES... -o OUT_DIR   (1 CPU per actor)
    ray-2:     segmenter segment --engine ray --actors 2 FILES... -o OUT_DIR

The tiny input's seconds are each command's fixed cost (Python, Ray start-up, actors loading the
model); chars/s is the big input's characters over its seconds. It also counts the segments each
wrote and whether the Ray runs' spans equal the local run's (local batches small files through
`Segmenter.pipe`, which can move a span; the Ray engine segments each document alone).

What it does not do: repeat runs or report variance, run on more than this machine, or measure memory.

    python -m segmenter.bench.ray_speed --mb 3 --files 6 --out benchmarks/results/ray
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click

from segmenter.bench.scale import ewt_paragraphs, write_text

SEGMENTER = [sys.executable, "-m", "segmenter.cli.main"]
SYSTEMS = {
    "local": [],
    "ray-1": ["--engine", "ray", "--actors", "1"],
    "ray-2": ["--engine", "ray", "--actors", "2"],
}


def command(system: str, files: list[Path], out: Path) -> list[str]:
    args = ["segment", "--no-progress", "--format", "jsonl", "-o", str(out), *map(str, files)]
    return [*SEGMENTER, *args, *SYSTEMS[system]]


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise click.ClickException(f"{' '.join(cmd)} failed: {tail}")
    return seconds


def spans(out: Path) -> list[tuple]:
    """(document, start, end) of every segment a run wrote (a JSONL file or a Ray output folder)."""
    if out.is_file():
        lines = out.read_text(encoding="utf-8").splitlines()
        return [(r["file"], r["start"], r["end"]) for r in map(json.loads, lines)]
    manifest = json.loads((out / "manifest.json").read_text())
    rows = []
    for shard in manifest["shards"]:
        rows += [json.loads(line) for line in (out / shard).read_text(encoding="utf-8").splitlines()]
    return [(r["id"], r["start"], r["end"]) for r in rows]


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--mb", type=float, default=3.0, show_default=True, help="Million characters in all.")
@click.option("--files", "n_files", type=int, default=6, show_default=True, help="Files to split them into.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True)
def main(mb: float, n_files: int, out: Path) -> None:
    paragraphs = ewt_paragraphs()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        big = [tmp / f"part{i}.txt" for i in range(n_files)]
        chars = 0
        for i, path in enumerate(big):  # each file starts at another paragraph
            chars += write_text(path, int(mb * 1e6 / n_files), paragraphs[i * 37 :] + paragraphs[: i * 37])
        tiny = [tmp / "tiny.txt"]
        tiny[0].write_text("It rained all day. We stayed in.\n", encoding="utf-8")
        rows, reference = [], None
        for system in SYSTEMS:
            fixed = timed(command(system, tiny, tmp / f"{system}-tiny{'.jsonl' * (system == 'local')}"))
            target = tmp / f"{system}-big{'.jsonl' * (system == 'local')}"
            seconds = timed(command(system, big, target))
            found = spans(target)
            reference = found if reference is None else reference
            rows.append(
                {
                    "system": system,
                    "characters": chars,
                    "seconds": round(seconds, 1),
                    "chars_per_s": round(chars / seconds),
                    "tiny_input_seconds": round(fixed, 1),
                    "segments": len(found),
                    "spans_equal_local": found == reference,
                }
            )
            click.echo(json.dumps(rows[-1]), err=True)
    out.mkdir(parents=True, exist_ok=True)
    environment = {"cpus": os.cpu_count(), "python": sys.version.split()[0], "files": n_files, "mb": mb}
    (out / "results.json").write_text(json.dumps({"environment": environment, "runs": rows}, indent=2) + "\n")
    header = "| system | characters | seconds | chars/s | tiny input (s) | segments | spans = local |"
    lines = [header, "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['system']} | {r['characters']:,} | {r['seconds']} | {r['chars_per_s']:,} | "
            f"{r['tiny_input_seconds']} | {r['segments']:,} | {'yes' if r['spans_equal_local'] else 'no'} |"
        )
    (out / "results.md").write_text("\n".join(lines) + "\n")
    click.echo("\n".join(lines))


if __name__ == "__main__":
    main()
