"""Run encoder windows through the model and hand back each window's gap features.

Shared by inference (`segmenter.readers.gap_scorer.GapScorer`) and training (`segmenter.training.probe`,
`segmenter.training.tune`): `run_batch` runs one batch, whose inputs `window_inputs` builds;
`window_stream` sorts the windows of many texts by length (to limit padding), batches them and runs
each batch once, for training's feature extraction. Scoring, averaging and decoding happen in the callers.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from segmenter.config import FeatureConfig, WindowConfig
from segmenter.encoder.protocol import EncoderInterface
from segmenter.probe.features import WindowFeatures, needs_attention, window_features
from segmenter.readers.windows import Window, batch_inputs, plan
from segmenter.text.tokens import Tokens

PAD_MULTIPLE = 16  # batch widths are rounded up to this, so shapes (and compiled kernels) repeat


def window_stream(
    encoder: EncoderInterface,
    tokens: list[Tokens],
    window: WindowConfig,
    features: FeatureConfig,
    batch_size: int,
) -> Iterator[tuple[Window, WindowFeatures]]:
    """(window, features) for every window of every text with at least two tokens (any order)."""
    for batch in batch_stream(encoder, tokens, window, features, batch_size):
        yield from batch


def batch_stream(
    encoder: EncoderInterface,
    tokens: list[Tokens],
    window: WindowConfig,
    features: FeatureConfig,
    batch_size: int,
) -> Iterator[list[tuple[Window, WindowFeatures]]]:
    """The (window, features) pairs of `window_stream`, one list per encoder batch (the batches
    `GapScorer.gap_scores` runs for the same texts)."""
    windows = [w for i, t in enumerate(tokens) for w in plan(len(t), window, text=i) if len(w) >= 2]
    windows.sort(key=len)
    for start in range(0, len(windows), batch_size):
        yield run_batch(encoder, tokens, windows[start : start + batch_size], features)


def window_inputs(
    encoder: EncoderInterface, tokens: list[Tokens], batch: list[Window]
) -> tuple[np.ndarray, np.ndarray]:
    """input_ids and attention_mask (B, T) of `batch` for `encoder`: [CLS] and [SEP] around each window,
    padded to a multiple of PAD_MULTIPLE (at most the model's positions); `tokens[w.text]` holds the
    tokens of window w."""
    return batch_inputs(
        [t.ids for t in tokens],
        batch,
        encoder.cls_id,
        encoder.sep_id,
        encoder.pad_id,
        multiple=PAD_MULTIPLE,
        max_width=encoder.max_positions,
    )


def run_batch(
    encoder: EncoderInterface, tokens: list[Tokens], batch: list[Window], features: FeatureConfig
) -> list[tuple[Window, WindowFeatures]]:
    """(window, features) for each window of `batch`, run through the encoder as one batch;
    `tokens[w.text]` holds the tokens of window w."""
    summary_layers = features.layers if needs_attention(features) else ()
    ids, mask = window_inputs(encoder, tokens, batch)
    capture = encoder.forward(
        ids,
        mask,
        layers=features.layers,
        summary_layers=summary_layers,
        hidden=features.hidden,
        contexts=features.vectors or features.signals,  # per-head vectors: read by these alone
    )
    contrast = None
    if features.signals:
        lengths = np.asarray([len(w) for w in batch])
        from segmenter.probe.contrast import batch_contrast  # torch: only where the signals are read

        contrast = batch_contrast(capture.contexts, lengths, features.span)  # (L, B, H, N)
    out = []
    for row, win in enumerate(batch):
        surface = tokens[win.text].surface
        flags = None if surface is None else surface[win.start : win.end]
        row_contrast = None if contrast is None else contrast[:, row]
        out.append((win, window_features(capture, row, len(win), features, flags, row_contrast)))
    return out
