"""Check the segmenter on an accelerator (`--device cuda`) against the CPU: same sentences, odd input, speed.

    python training/device_check.py --device cuda [--docs N] [--random 300] [--out device_check.json]

Three parts, every preset (nothing is chosen from it; it reports):

1. agreement: UD English-EWT test (the copy in benchmarks/data), clean and unpunctuated, segmented on
   the CPU and on `--device`, both in float32 and in each side's automatic precision (bfloat16 where
   the hardware has it natively); counts the documents whose offsets differ and gives each side's
   boundary F1 against the gold sentences;
2. odd input on `--device`: the hand-picked texts of ODD_TEXTS plus `--random` texts mixed from odd
   pieces (seeded); every call must return ordered, stripped spans that cover each non-space
   character exactly once (the invariant of tests/invariants.py);
3. throughput on `--device` in its automatic precision: chars/s over the EWT test clean texts at
   several batch sizes, after one warm-up pass (the device is synchronised before each clock read),
   beside the CPU at the default batch size with every core this process may use.

Prints a markdown report and, with --out, writes every number to a JSON file. Exits 1 if any odd
input breaks the invariant; disagreements are reported, not judged (float32 sums differ between
devices, so a boundary near a threshold can move).
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path

import click
import torch

from segmenter import Segmenter
from segmenter.bench.datasets import evaluation_items, load_dataset
from segmenter.bench.metrics import Counts, score
from segmenter.config import PRESETS
from segmenter.encoder.backend import choose_backend

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from invariants import assert_invariants  # noqa: E402  (the tests' own statement of the invariant)

CONDITIONS = {"clean": "clean", "unpunctuated": "corrupt"}  # report name -> benchmark condition
BATCH_SIZES = (16, 64, 256)
ODD_TEXTS = [
    "",
    " \n\t\r\n ",
    "x",
    "a" * 5000,
    "word" * 12_500,  # 50,000 characters and no space
    "\x00\x1b\x7f\ufeff\u200d",
    "🎉👍🏽👨‍👩‍👧🇫🇷 " * 300,
    "עברית היא שפה. العربية لغة. 中文句子。日本語です。",
    "\n" * 1000,
    "Hi Sarah,\n\nthe meeting moved to 3 p.m. See you there.\n\n-- \nTom",
    "one. two. three. " * 2000,
    "no punctuation at all just words running on " * 400,
    "\u0301\u0308 combining marks first. Then text.",
    "1. First item\n2. Second item\n3. Third item\nAnd a sentence after the list.",
]
PIECES = [
    "The bus was late again.",
    "nobody seemed surprised",
    "Zoë",
    "Москва",
    "中文",
    "🙂",
    "...",
    "?!",
    "3.14",
    "e.g.",
    "\u2028",
    "\r\n",
    "\n\n",
    "\t",
    " ",
    "  ",
    "\x0c",
    "\u00a0",
    "x" * 150,
]


def invariant_error(text: str, spans) -> str | None:
    """Why `spans` break the span invariant on `text` (tests/invariants.py), or None."""
    try:
        assert_invariants(text, spans)
    except AssertionError as exc:
        return str(exc) or "a span is not the slice its offsets name"
    return None


def random_texts(count: int, seed: int = 0) -> list[str]:
    """`count` texts of 1-60 odd pieces each, reproducible from `seed`."""
    rng = random.Random(seed)
    return ["".join(rng.choices(PIECES, k=rng.randint(1, 60))) for _ in range(count)]


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def offsets(segmenter: Segmenter, texts: list[str]) -> list[list[int]]:
    return [[span.start for span in spans] for spans in segmenter.pipe(texts)]


def f1(items, predicted: list[list[int]]) -> float:
    pairs = zip(items, predicted, strict=True)
    return sum((score(item.text, item.gold, found) for item, found in pairs), Counts()).f1


def agreement(preset: str, device: str, items_by_condition: dict) -> list[dict]:
    """One row per (precision, condition): documents differing between CPU and `device`, each side's F1."""
    rows = []
    for precision in ("float32", "auto"):
        cpu = Segmenter(preset=preset, device="cpu", precision=precision)
        other = Segmenter(preset=preset, device=device, precision=precision)
        for name, items in items_by_condition.items():
            texts = [item.text for item in items]
            on_cpu, on_device = offsets(cpu, texts), offsets(other, texts)
            rows.append(
                {
                    "preset": preset,
                    "precision": f"{cpu.encoder.precision} / {other.encoder.precision}",
                    "condition": name,
                    "documents": len(texts),
                    "differing": sum(a != b for a, b in zip(on_cpu, on_device, strict=True)),
                    "boundaries_differing": sum(
                        len(set(a) ^ set(b)) for a, b in zip(on_cpu, on_device, strict=True)
                    ),
                    "f1_cpu": f1(items, on_cpu),
                    "f1_device": f1(items, on_device),
                }
            )
    return rows


def odd_input(preset: str, device: str, texts: list[str]) -> list[str]:
    """Invariant failures on `device` for `texts`, segmented one by one and through `pipe` in batches."""
    segmenter = Segmenter(preset=preset, device=device)
    failures = []
    for index, text in enumerate(texts):
        problem = invariant_error(text, segmenter.segment(text))
        if problem:
            failures.append(f"{preset} segment text {index}: {problem}")
    for index, (text, spans) in enumerate(zip(texts, segmenter.pipe(texts), strict=True)):
        problem = invariant_error(text, spans)
        if problem:
            failures.append(f"{preset} pipe text {index}: {problem}")
    return failures


def throughput(preset: str, device: str, texts: list[str], batch_size: int) -> float:
    """chars/s of `Segmenter.pipe` over `texts` on `device`, after one warm-up pass."""
    segmenter = Segmenter(preset=preset, device=device, batch_size=batch_size)
    for _ in segmenter.pipe(texts):
        pass
    synchronize(device)
    start = time.perf_counter()
    for _ in segmenter.pipe(texts):
        pass
    synchronize(device)
    return sum(map(len, texts)) / (time.perf_counter() - start)


def speed_row(preset: str, device: str, batch_size: int, chars_s: float) -> dict:
    return {"preset": preset, "device": device, "batch": batch_size, "chars_s": chars_s}


@click.command()
@click.option("--device", default="cuda", show_default=True, help="torch device to check against the CPU.")
@click.option("--random", "random_count", type=click.IntRange(min=0), default=300, show_default=True)
@click.option("--docs", type=click.IntRange(min=1), default=None, help="Only the first N documents.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="JSON report.")
def main(device: str, random_count: int, docs: int | None, out: Path | None) -> None:
    dataset = load_dataset("ewt-test")
    items = {name: evaluation_items(dataset, condition)[:docs] for name, condition in CONDITIONS.items()}
    report: dict = {
        "device": device,
        "device_name": torch.cuda.get_device_name(0) if device.startswith("cuda") else device,
        "torch": torch.__version__,
        "cpu_threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "device_precision": choose_backend("auto", torch.device(device)).precision,
        "agreement": [],
        "odd_input_failures": [],
        "throughput": [],
    }
    odd = ODD_TEXTS + random_texts(random_count)
    clean_texts = [item.text for item in items["clean"]]
    for preset in PRESETS:
        report["agreement"] += agreement(preset, device, items)
        report["odd_input_failures"] += odd_input(preset, device, odd)
        for batch_size in BATCH_SIZES:
            speed = throughput(preset, device, clean_texts, batch_size)
            report["throughput"].append(speed_row(preset, device, batch_size, speed))
        speed = throughput(preset, "cpu", clean_texts, 16)
        report["throughput"].append(speed_row(preset, "cpu", 16, speed))
        click.echo(f"{preset}: done", err=True)
    click.echo(markdown(report, len(odd)))
    if out is not None:
        out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if report["odd_input_failures"]:
        raise SystemExit(1)


def markdown(report: dict, odd_count: int) -> str:
    lines = [
        f"device {report['device']} ({report['device_name']}), torch {report['torch']}, "
        f"CPU threads {report['cpu_threads']} of {report['cpu_count']} cores",
        "",
        "| preset | precision (CPU / device) | condition | documents differing | boundaries differing "
        "| F1 CPU | F1 device |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in report["agreement"]:
        lines.append(
            f"| {row['preset']} | {row['precision']} | {row['condition']} | {row['differing']} of "
            f"{row['documents']} | {row['boundaries_differing']} | {row['f1_cpu']:.4f} "
            f"| {row['f1_device']:.4f} |"
        )
    failures = report["odd_input_failures"]
    lines += ["", f"odd input: {odd_count} texts per preset, {len(failures)} invariant failures"]
    lines += [f"- {failure}" for failure in failures[:20]]
    lines += ["", "| preset | device | batch | chars/s (EWT test clean) |", "|---|---|---|---|"]
    for row in report["throughput"]:
        lines.append(f"| {row['preset']} | {row['device']} | {row['batch']} | {row['chars_s']:,.0f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
