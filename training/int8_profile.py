"""Where a preset's int8 graph spends its time: ONNX Runtime's profiler, summed by operator type.

    python training/int8_profile.py accurate [--runs 200] [--tokens 100] [--every-fusion]

Loads the preset at int8 (building its graph if the cache lacks it), opens its graph in a session as
`segmenter.encoder.onnx.runtime.Int8Session` does (one thread; without `DISABLED_FUSIONS` unless
--every-fusion), runs it --runs times on --tokens random token ids (seed 0) and prints one markdown
row per operator type: total milliseconds, share and nodes per run, then the mean wall time of a run.
The profile of models/README.md's section "int8 without ONNX Runtime's SkipLayerNormalization
fusion" and docs/benchmarks.md. Run it alone on the machine. A development tool: nothing in
`segmenter` imports it.
"""

from __future__ import annotations

import collections
import json
import os
import tempfile

import click
import numpy as np
import onnxruntime as ort
from dev_scores import load
from int8_fusions import int8_session

from segmenter.encoder.onnx.runtime import DISABLED_FUSIONS


@click.command()
@click.argument("preset")
@click.option("--runs", type=click.IntRange(min=1), default=200, show_default=True)
@click.option("--tokens", type=click.IntRange(min=3, max=512), default=100, show_default=True)
@click.option("--every-fusion", is_flag=True, help="Keep the fusions the shipped sessions leave out.")
def main(preset: str, runs: int, tokens: int, every_fusion: bool) -> None:
    """Print the operator types of PRESET's int8 graph by the time they take."""
    graph = int8_session(load(f"{preset}@int8")).graph
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.enable_profiling = True
    with tempfile.TemporaryDirectory() as folder:
        options.profile_file_prefix = os.path.join(folder, "int8")
        disabled = [] if every_fusion else list(DISABLED_FUSIONS)
        session = ort.InferenceSession(graph, options, ["CPUExecutionProvider"], disabled_optimizers=disabled)
        ids = np.random.default_rng(0).integers(1000, 20000, size=(1, tokens)).astype(np.int64)
        for _ in range(runs):
            session.run(None, {"input_ids": ids, "mask": np.ones_like(ids)})
        with open(session.end_profiling(), encoding="utf-8") as handle:
            events = json.load(handle)
    micros, nodes = collections.Counter(), collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            micros[event["args"]["op_name"]] += event["dur"]
            nodes[event["args"]["op_name"]] += 1
    total = sum(micros.values())
    click.echo("| operator | ms | share | nodes per run |\n|---|---|---|---|")
    for name, spent in micros.most_common():
        click.echo(f"| {name} | {spent / 1e3:.1f} | {spent / total:.1%} | {nodes[name] // runs} |")
    wall = [event["dur"] for event in events if event.get("name") == "model_run"]
    click.echo(f"\nmean run: {np.mean(wall) / 1e3:.2f} ms; operators: {total / runs / 1e3:.2f} ms")


if __name__ == "__main__":
    main()
