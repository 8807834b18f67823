"""A segmenter as the teacher of a probe being tuned: its boundary probabilities at the student's gaps.

Distillation (`segmenter train tune --teacher accurate`) trains a student (fewer blocks, or no line
features) on a mix of the gold labels and what a larger probe predicts. Two kinds of teacher:

- `Teacher`, a tuned probe of the student's own backbone, reads the student's training windows as the
  segmenter would (its backbone cut at the block its head reads, its deltas merged, at the inference
  precision, then its MLP on the two tokens around each gap); called once per training window.
- `DocumentTeacher`, any probe of any backbone (`--teacher-model`: a 12-layer encoder teaching the
  6-layer default), reads each training document whole through `Segmenter.gap_probabilities`; its
  probabilities are matched to the student's gaps by the character offset of the token after the gap
  (`matched_targets`). A student gap the teacher does not score (its tokenizer split the text
  elsewhere) keeps its gold label.

Both run once before the first epoch (the teacher does not change). Left out: same-backbone teachers
that read attention signals, per-head vectors or more than one token on each side of a gap (`Teacher`
says so in one line; `DocumentTeacher` runs them). `Teacher` reads with the probe itself, never with the
punctuated or averaged probes its meta may name (`accurate` teaches as its own three-block probe).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from segmenter.encoder.torch.encoder import Encoder
from segmenter.errors import ConfigError
from segmenter.probe.meta import ProbeMeta
from segmenter.probe.probe import Probe


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


class DocumentTeacher:
    """p(boundary) at each word-start gap of whole documents, from a segmenter on any backbone."""

    def __init__(self, model: str, probe: str, precision: str = "auto"):
        """model: the teacher's backbone; probe: a shipped preset of it (`accurate`) or a probe folder."""
        from segmenter.api import Segmenter  # here: it imports far more than training needs

        where = {"probe": probe} if Path(probe).is_dir() else {"preset": probe}
        self.segmenter = Segmenter(model=model, precision=precision, **where)

    def targets(self, texts: list[str], tokens: list, labels: list[np.ndarray]) -> list[np.ndarray]:
        """Per text, (N,) float32 over the student's N tokens: the teacher's probability of a boundary in
        the gap before each token (`matched_targets`); `tokens` and `labels` are the student's."""
        gaps = self.segmenter.gap_probabilities(texts)
        return [
            matched_targets(t.offsets[:, 0], t.word_start, gold, g.offsets, g.probs)
            for t, gold, g in zip(tokens, labels, gaps, strict=True)
        ]


def matched_targets(
    starts: np.ndarray, word_start: np.ndarray, gold: np.ndarray, offsets: np.ndarray, probs: np.ndarray
) -> np.ndarray:
    """(N,) float32 targets for the gaps before a student's N tokens: the teacher's probability where it
    scores a gap at the same character offset (`offsets` (G,) ascending, `probs` (G,)), else the gold
    label (`gold` (N,); its IGNORE positions are never read). `starts` (N,): each token's first
    character; `word_start` (N,) bool: the tokens with a candidate gap before them.

    >>> matched_targets(np.array([0, 4, 6, 9]), np.array([True, True, False, True]), np.array([-1, 0, -1, 1]),
    ...                 np.array([4, 8]), np.array([0.25, 0.75], np.float32)).tolist()
    [-1.0, 0.25, -1.0, 1.0]
    """
    target = gold.astype(np.float32)  # (N,)
    if len(offsets) == 0:
        return target
    where = np.minimum(np.searchsorted(offsets, starts), len(offsets) - 1)  # (N,)
    same = word_start & (offsets[where] == starts)  # (N,) the teacher scores this very gap
    target[same] = probs[where[same]]
    return target
