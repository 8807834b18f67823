"""Speed of presets at int8 with the ONNX Runtime fusions `DISABLED_FUSIONS` leaves out, and with them.

    python training/int8_fusions.py accurate fast [--rounds 3]

For each preset two segmenters at int8 are loaded: one as shipped (`segmenter.int8_runtime.
DISABLED_FUSIONS` disabled when its session opens) and one with every fusion ONNX Runtime applies.
Then, as in `training/preset_speed.py`, each round runs one pass of `Segmenter.pipe` over EWT test
clean per segmenter, in turn, and a row is the median over rounds; one thread. Run it alone on the
machine. The evidence for the selection rule "int8 without ONNX Runtime's SkipLayerNormalization
fusion" in segmenter/models/README.md. A development tool: nothing in `segmenter` imports it.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch or onnxruntime loads

import statistics  # noqa: E402
import time  # noqa: E402

import click  # noqa: E402
from dev_scores import load  # noqa: E402

from segmenter.bench.datasets import evaluation_items, load_dataset  # noqa: E402
from segmenter.int8_runtime import DISABLED_FUSIONS, Int8Session  # noqa: E402


def int8_session(segmenter) -> Int8Session:
    """The `Int8Session` of a segmenter at int8: the cached encoder's, or the torch encoder's."""
    encoder = segmenter.scorer.encoder
    blocks = getattr(encoder, "_blocks", None)  # segmenter.compiled.CompiledEncoder
    return blocks if blocks is not None else encoder._int8.session  # segmenter.encoder.Encoder


@click.command()
@click.argument("presets", nargs=-1, required=True)
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True)
def main(presets: tuple[str, ...], rounds: int) -> None:
    """Print one markdown row per preset and setting: median chars/s and the seconds of each round."""
    texts = [item.text for item in evaluation_items(load_dataset("ewt-test"), "clean")]
    chars = sum(map(len, texts))
    settings = ((f"without {', '.join(DISABLED_FUSIONS)}", DISABLED_FUSIONS), ("every fusion", ()))
    runs = {}
    for preset in presets:
        for label, disabled in settings:
            segmenter = load(f"{preset}@int8")
            int8_session(segmenter).disabled_fusions = disabled  # before the session opens
            list(segmenter.pipe(texts[:2]))  # warm-up; pipe is lazy: list() runs it
            runs[(preset, label)] = (segmenter, [])
    for _ in range(rounds):
        for segmenter, seconds in runs.values():
            start = time.perf_counter()
            list(segmenter.pipe(texts))
            seconds.append(time.perf_counter() - start)
    click.echo("| preset | int8 session | chars/s (1 thread, median) | s per round |\n|---|---|---|---|")
    for (preset, label), (_, seconds) in runs.items():
        rounds_text = ", ".join(f"{s:.2f}" for s in seconds)
        click.echo(f"| {preset} | {label} | {chars / statistics.median(seconds):,.0f} | {rounds_text} |")


if __name__ == "__main__":
    main()
