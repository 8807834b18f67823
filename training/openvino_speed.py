"""The default's punctuated-text encoder in torch (bfloat16, weights reordered once) against OpenVINO.

    pip install openvino==2026.4.1
    python training/openvino_speed.py [--preset accurate] [--rounds 3]

Records the encoder batches one `Segmenter.pipe` pass over EWT test (clean) really runs, then times
the tuned blocks on exactly those batches: the segmenter's own bfloat16 model, and the same blocks
(float32 weights, deltas merged) converted with `openvino.convert_model` and compiled for the CPU with
bfloat16 inference precision, both on one thread, in alternated rounds (median). It prints the
largest difference of the last block's output from float32 torch for each. Only the encoder is
timed: tokenizing, the probe and decoding are the same for both. Run it alone on the machine. A
development tool: nothing in `segmenter` imports it, and OpenVINO is not a dependency.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import click  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from preset_speed import ewt_test_texts  # noqa: E402

from segmenter import Segmenter  # noqa: E402
from segmenter.encoder.torch.encoder import Encoder  # noqa: E402


class LastBlocks(torch.nn.Module):
    """The embeddings and loaded blocks of a `segmenter.encoder.torch.bert.BertModel`: (B, T) ids, (B, T) mask
    -> the last block's output (B, T, D)."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, attention_mask=mask).last_hidden_state


def recorded_batches(segmenter: Segmenter, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (ids, mask) batches, (B, T) int64 each, that the clean-text encoder of `segmenter` runs
    in one pipe pass over `texts`."""
    encoder = segmenter.scorers["clean"].encoder
    batches: list[tuple[np.ndarray, np.ndarray]] = []
    forward = encoder.forward

    def recording(ids, mask, *args, **kwargs):
        batches.append((ids.copy(), mask.copy()))
        return forward(ids, mask, *args, **kwargs)

    encoder.forward = recording
    try:
        list(segmenter.pipe(texts))
    finally:
        del encoder.forward
    return batches


def openvino_blocks(encoder: Encoder, example: tuple[np.ndarray, np.ndarray]):
    """`encoder`'s blocks compiled by OpenVINO for one CPU thread at bfloat16: a callable (ids, mask)
    -> (B, T, D) float32."""
    import openvino as ov

    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on data-dependent branches
        graph = ov.convert_model(
            LastBlocks(encoder.model).eval(), example_input=tuple(map(torch.as_tensor, example))
        )
    compiled = ov.Core().compile_model(
        graph, "CPU", {"INFERENCE_PRECISION_HINT": "bf16", "INFERENCE_NUM_THREADS": 1, "NUM_STREAMS": 1}
    )
    request = compiled.create_infer_request()
    return lambda ids, mask: request.infer({0: ids, 1: mask})[0]


def torch_blocks(encoder: Encoder):
    """`encoder`'s own model as a callable (ids, mask) -> (B, T, D) float32."""

    def run(ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            hidden = encoder.model(input_ids=torch.as_tensor(ids), attention_mask=torch.as_tensor(mask))
        return hidden.last_hidden_state.float().numpy()

    return run


@click.command()
@click.option("--preset", default="accurate", show_default=True)
@click.option("--rounds", type=click.IntRange(min=1), default=3, show_default=True)
def main(preset: str, rounds: int) -> None:
    torch.set_num_threads(1)
    texts = ewt_test_texts("clean")
    reference = Segmenter(preset=preset, precision="float32")
    batches = recorded_batches(reference, texts)
    float32 = reference.scorers["clean"].encoder
    # traced on a batch with padding, so that the graph keeps the attention mask
    padded = next(batch for batch in batches if not batch[1].all())
    bfloat16 = Segmenter(preset=preset, precision="bfloat16").scorers["clean"].encoder
    runners = {
        "torch bfloat16 (reordered weights)": torch_blocks(bfloat16),
        "OpenVINO bfloat16": openvino_blocks(float32, padded),
    }
    exact = torch_blocks(float32)
    seconds: dict[str, list[float]] = {label: [] for label in runners}
    for run in runners.values():
        run(*batches[0])  # first-call costs outside the timing
    for _ in range(rounds):
        for label, run in runners.items():
            start = time.perf_counter()
            for ids, mask in batches:
                run(ids, mask)
            seconds[label].append(time.perf_counter() - start)
    tokens = sum(int(mask.sum()) for _, mask in batches)
    print(f"{preset}, EWT test clean: {len(batches)} batches, {tokens:,} real tokens, one thread")
    print("| encoder | seconds (median) | seconds per round | largest difference from float32 |")
    print("|---|---|---|---|")
    sample = batches[:: max(1, len(batches) // 20)]
    expected_outputs = [exact(ids, mask) for ids, mask in sample]  # float32 outputs, once for every runner
    for label, run in runners.items():
        gap = max(
            float(np.abs((run(ids, mask) - expected)[mask.astype(bool)]).max())
            for (ids, mask), expected in zip(sample, expected_outputs, strict=True)
        )
        rounds_text = ", ".join(f"{s:.3f}" for s in seconds[label])
        print(f"| {label} | {statistics.median(seconds[label]):.3f} | {rounds_text} | {gap:.4f} |")


if __name__ == "__main__":
    main()
