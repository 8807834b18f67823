"""Speed of presets at int8 with the ONNX Runtime fusions `DISABLED_FUSIONS` leaves out, and with them.

    python training/int8_fusions.py accurate fast [--rounds 3]

For each preset two segmenters at int8 are loaded: one as shipped (`segmenter.encoder.onnx.runtime.
DISABLED_FUSIONS` disabled when its session opens) and one with every fusion ONNX Runtime applies.
Then, as in `training/preset_speed.py`, each round runs one pass of `Segmenter.pipe` over EWT test
clean per segmenter, in turn, and a row is the median over rounds; one thread. Run it alone on the
machine. The evidence for the selection rule "int8 without ONNX Runtime's SkipLayerNormalization
fusion" in models/README.md. A development tool: nothing in `segmenter` imports it.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch or onnxruntime loads

import click  # noqa: E402
from dev_scores import load  # noqa: E402
from preset_speed import alternated_rounds, ewt_test_texts  # noqa: E402

from segmenter.encoder.onnx.runtime import DISABLED_FUSIONS, Int8Session  # noqa: E402


def int8_session(segmenter) -> Int8Session:
    """The `Int8Session` of a segmenter at int8: the cached encoder's, or the torch encoder's."""
    encoder = segmenter.scorer.encoder
    blocks = getattr(encoder, "_blocks", None)  # segmenter.encoder.onnx.compiled.CompiledEncoder
    return blocks if blocks is not None else encoder._int8.session  # segmenter.encoder.torch.encoder.Encoder


@click.command()
@click.argument("presets", nargs=-1, required=True)
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True)
def main(presets: tuple[str, ...], rounds: int) -> None:
    """Print one markdown row per preset and setting: median chars/s and the seconds of each round."""
    settings = {f"without {', '.join(DISABLED_FUSIONS)}": DISABLED_FUSIONS, "every fusion": ()}
    segmenters = {}
    for preset in presets:
        for label, disabled in settings.items():
            segmenter = load(f"{preset}@int8")
            int8_session(segmenter).disabled_fusions = disabled  # before the session opens
            segmenters[f"{preset} | {label}"] = segmenter
    cells = alternated_rounds(segmenters, ewt_test_texts(), rounds)
    click.echo("| preset | int8 session | chars/s (1 thread, median) | s per round |\n|---|---|---|---|")
    for label, row in cells.items():
        click.echo(f"| {label} | {row} |")


if __name__ == "__main__":
    main()
