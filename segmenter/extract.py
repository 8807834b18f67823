"""Run the windows of many texts through the encoder and yield each window's gap features.

Shared by inference (`Segmenter`) and training (`segmenter.train`): windows from all texts are sorted by
length (to limit padding), batched, run once, and handed back with their features. Scoring, averaging
and decoding happen in the callers.
"""

from __future__ import annotations

from collections.abc import Iterator

from segmenter.config import FeatureConfig, WindowConfig
from segmenter.encoder import Encoder, Tokens
from segmenter.features import WindowFeatures, needs_attention, window_features
from segmenter.windows import Window, batch_inputs, plan


def window_stream(
    encoder: Encoder,
    tokens: list[Tokens],
    window: WindowConfig,
    features: FeatureConfig,
    batch_size: int,
) -> Iterator[tuple[Window, WindowFeatures]]:
    """(window, features) for every window of every text with at least two tokens (any order)."""
    windows = [w for i, t in enumerate(tokens) for w in plan(len(t), window, text=i) if len(w) >= 2]
    windows.sort(key=len)
    attention_layers = features.layers if needs_attention(features) else ()
    for start in range(0, len(windows), batch_size):
        batch = windows[start : start + batch_size]
        ids, mask = batch_inputs(
            [t.ids for t in tokens], batch, encoder.cls_id, encoder.sep_id, encoder.pad_id
        )
        capture = encoder.forward(
            ids, mask, layers=features.layers, attention_layers=attention_layers, hidden=features.hidden
        )
        for row, win in enumerate(batch):
            surface = tokens[win.text].surface
            flags = None if surface is None else surface[win.start : win.end]
            yield win, window_features(capture, row, len(win), features, flags)
