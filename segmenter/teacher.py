"""A tuned probe as the teacher of another: its boundary probabilities at every gap of training windows.

Distillation (`segmenter train tune --teacher accurate`) trains a student (fewer blocks, or no line
features) on a mix of the gold labels and what a larger tuned probe predicts. `Teacher` runs the
teacher as the segmenter would: its backbone cut at the block its head reads, its deltas merged, at
the inference precision, then its MLP on the two tokens around each gap. The student's training code
calls it once per training window before the first epoch (the teacher does not change).

Left out: teachers that read attention signals, per-head vectors or more than one token on each side
of a gap (`Teacher` says so in one line); no shipped tuned preset needs them.
"""

from __future__ import annotations

import numpy as np
import torch

from segmenter.encoder import Encoder
from segmenter.errors import ConfigError
from segmenter.probe import Probe
from segmenter.probe_meta import ProbeMeta


class Teacher:
    """p(boundary) at each position of a batch of windows, from a tuned probe and its backbone."""

    def __init__(self, model: str | None, probe: Probe, precision: str = "auto"):
        """model: the backbone (None: the packaged default), which must be the one `probe` was tuned on."""
        meta = ProbeMeta.from_json(probe.meta, "the teacher's meta")
        features = meta.features
        if not probe.deltas or not features.hidden or len(features.layers) != 1:
            raise ConfigError("the teacher must be a tuned probe (segmenter train tune)")
        if features.signals or features.vectors or features.context != 1:
            raise ConfigError("a teacher that reads attention signals or head vectors is not supported")
        self.lines = features.lines  # whether its surface features include the line features
        self.blocks = features.layers[0]
        self.encoder = Encoder(
            model, max_layer=self.blocks, precision=precision, deltas=probe.deltas, pruning=probe.pruning
        )
        if meta.backbone is not None and meta.backbone != self.encoder.name:
            raise ConfigError(f"the teacher was tuned on {meta.backbone!r}, not on {self.encoder.name!r}")
        self.probe = probe

    def probabilities(self, ids: torch.Tensor, mask: torch.Tensor, surface: torch.Tensor) -> np.ndarray:
        """(B, T) float32 probability of a boundary in the gap before each position, from ids and mask
        (B, T) and the teacher's surface flags (B, T, F); meaningless where no gap is (padding, specials).
        The probe reads each row as the segmenter reads a window (`Probe.predict_windows`)."""
        with torch.inference_mode():
            output = self.encoder.model(input_ids=ids, attention_mask=mask)
            hidden = output.last_hidden_state.float()  # (B, T, D)
            tokens = torch.cat([hidden, surface], dim=-1).numpy()  # (B, T, D + F)
        probs = np.zeros(ids.shape, dtype=np.float32)  # (B, T); position 0 has no gap before it
        probs[:, 1:] = np.stack(self.probe.predict_windows(list(tokens), context=1))  # (B, T - 1)
        return probs
