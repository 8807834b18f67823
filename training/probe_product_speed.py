"""How long the probe's first product takes in numpy float32 and as an int8 ONNX Runtime product.

    python training/probe_product_speed.py accurate [--windows 447] [--tokens 128] [--rounds 5]

A timing of one step of a preset at int8, for deciding whether that step is worth moving into int8: the first
dense layer of the preset's probe, folded as `segmenter.probe.probe.Probe._fold` folds it (F inputs per token,
slots x hidden units out), is run on --windows random (tokens, F) float32 matrices (seed 0), one window at a
time as the int8 encoder runs them: once with numpy (one BLAS thread, as `Probe._numpy_logits` runs it) and
once through a one-node graph (MatMul) quantised by ONNX Runtime's `quantize_dynamic` (int8 weights per output
channel, as `segmenter.encoder.onnx.export` quantises the encoder) in a one-thread session. Prints seconds per
pass (median of --rounds) and the ratio. Accuracy is not measured here: the product's inputs would be
quantised with one scale per window. Run it alone on the machine. A development tool: nothing in `segmenter`
imports it.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import click  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from dev_scores import load  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnxruntime.quantization import QuantType, quantize_dynamic  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402


def int8_product(weights: np.ndarray) -> ort.InferenceSession:
    """A one-thread session of x (T, F) -> x @ weights, the weights quantised to int8 per column."""
    rows, columns = weights.shape
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "probe_product",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["tokens", rows])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["tokens", columns])],
        [numpy_helper.from_array(weights, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with tempfile.TemporaryDirectory() as folder:
        plain, quantised = Path(folder) / "plain.onnx", Path(folder) / "int8.onnx"
        onnx.save(model, str(plain))
        quantize_dynamic(str(plain), str(quantised), per_channel=True, weight_type=QuantType.QInt8)
        options = ort.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        return ort.InferenceSession(str(quantised), options, providers=["CPUExecutionProvider"])


@click.command()
@click.argument("preset")
@click.option("--windows", type=click.IntRange(min=1), default=447, show_default=True)
@click.option("--tokens", type=click.IntRange(min=1), default=128, show_default=True)
@click.option("--rounds", type=click.IntRange(min=1), default=5, show_default=True)
def main(preset: str, windows: int, tokens: int, rounds: int) -> None:
    """Print a markdown table: seconds per pass of PRESET's probe product, float32 and int8."""
    probe = load(f"{preset}@int8").probe
    slots = 2 * int(probe.meta.get("context", 1))
    by_slot, _ = probe._fold(slots)  # (F, slots * H0)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((tokens, by_slot.shape[0]), dtype=np.float32) for _ in range(windows)]
    session = int8_product(by_slot)

    def numpy_pass() -> None:
        with threadpool_limits(limits=1, user_api="blas"):
            for x in inputs:
                x @ by_slot

    def int8_pass() -> None:
        for x in inputs:
            session.run(None, {"x": x})

    seconds = {}
    for label, run in (("numpy float32", numpy_pass), ("ONNX Runtime int8", int8_pass)):
        run()  # warm-up
        passes = []
        for _ in range(rounds):
            start = time.perf_counter()
            run()
            passes.append(time.perf_counter() - start)
        seconds[label] = statistics.median(passes)
    shape = tuple(by_slot.shape)
    click.echo(f"{preset}: {windows} windows of {tokens} tokens, (F, out) = {shape}, one thread")
    click.echo("| product | s per pass (median) | vs float32 |\n|---|---|---|")
    for label, value in seconds.items():
        click.echo(f"| {label} | {value:.3f} | {seconds['numpy float32'] / value:.2f}x |")


if __name__ == "__main__":
    main()
