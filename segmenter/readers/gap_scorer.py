"""Boundary probabilities of the gaps between tokens: tokens -> windows -> encoder -> features -> probe.

`GapScorer` is the one inference path every entry point shares (`Segmenter.segment`, `segment_stream`,
`pipe`, the CLI, the spaCy component): it tokenizes text with the surface features its probe reads,
runs a batch of windows through the encoder, turns each window's features into one probability per gap
(the trained probe, or one of the paper's unsupervised scores) and, for texts held whole, pools the
windows of many texts into shared encoder batches (`gap_scores`). Streaming feeds the same scorer a
window batch at a time (`segmenter.readers.stream`). `MeanScorer` reads each window with several probes of one
backbone (a probe's `averaged_probes`) and averages their probabilities, opening all but the first on
first use. Decoding probabilities into spans lives in `segmenter.decode.decoder`; choosing the model, probe
and thresholds in `segmenter.api`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from segmenter.config import FeatureConfig, WindowConfig
from segmenter.encoder.protocol import EncoderInterface
from segmenter.probe.features import sep_attention_score, similarity_score
from segmenter.probe.probe import Probe
from segmenter.readers.extract import run_batch
from segmenter.readers.windows import GapAverager, Window, plan
from segmenter.text.line_features import TEXT_START, LineState
from segmenter.text.surface import with_surface
from segmenter.text.tokens import Tokens


class GapScorer:
    """Per-gap boundary probabilities from `encoder` read through `features`: by `probe` when it is
    given, else by the unsupervised `strategy` ("sep-attention" or "similarity")."""

    def __init__(
        self,
        encoder: EncoderInterface,
        features: FeatureConfig,
        window: WindowConfig,
        probe: Probe | None,
        strategy: str = "probe",
    ):
        self.encoder, self.features, self.window = encoder, features, window
        self.probe, self.strategy = probe, strategy

    def tokenize(self, text: str, line_state: LineState = TEXT_START) -> Tokens:
        """`text`'s tokens with the surface features the probe reads (`line_state`: what the text
        before `text` left open, for a stream's pieces)."""
        tokens = self.encoder.tokenize(text)
        if not self.features.surface:
            return tokens
        return with_surface(tokens, text, self.features.lines, line_state)

    def score(self, tokens: list[Tokens], batch: list[Window]) -> list[np.ndarray]:
        """Per window of `batch` (run as one encoder batch; `tokens[w.text]` holds window w's tokens),
        the (len(w)-1,) boundary probabilities of its gaps."""
        if not batch:
            return []
        windows = [features for _, features in run_batch(self.encoder, tokens, batch, self.features)]
        if self.probe is None:
            score = sep_attention_score if self.strategy == "sep-attention" else similarity_score
            return [1.0 / (1.0 + np.exp(-score(features))) for features in windows]
        tokens = [f.token_matrix() for f in windows]
        return self.probe.predict_windows(tokens, self.features.context, self.encoder.precision)

    def gap_scores(self, tokens: list[Tokens], batch_size: int) -> list[np.ndarray]:
        """Per text, the (n-1,) averaged probabilities of its gaps. The windows of all texts are
        sorted by length (stably) and run `batch_size` at a time, so short texts share batches."""
        windows = [w for i, t in enumerate(tokens) for w in plan(len(t), self.window, text=i) if len(w) >= 2]
        windows.sort(key=len)
        averagers = [GapAverager(len(t)) for t in tokens]
        for start in range(0, len(windows), batch_size):
            batch = windows[start : start + batch_size]
            for window, scores in zip(batch, self.score(tokens, batch), strict=True):
                averagers[window.text].add(window, scores)
        return [averager.result() for averager in averagers]


class MeanScorer(GapScorer):
    """Several scorers of one backbone read as one: per window, the mean of their gap probabilities.

    They read the same tokens (the same surface features) and windows, each through its own encoder
    and probe (the blocks read may differ); tokenizing and window planning are the first one's. The
    others are given as functions that open them, called on the first window read: a segmenter whose
    texts never reach this scorer (a routed probe's punctuated texts) never loads their encoders."""

    def __init__(self, first: GapScorer, open_others: Sequence[Callable[[], GapScorer]]):
        super().__init__(first.encoder, first.features, first.window, first.probe, first.strategy)
        self._first, self._open_others = first, tuple(open_others)
        self._others: tuple[GapScorer, ...] | None = None

    @property
    def scorers(self) -> tuple[GapScorer, ...]:
        """Every scorer averaged, the first one first (the others opened now if they were not yet)."""
        if self._others is None:
            self._others = tuple(open_other() for open_other in self._open_others)
        return (self._first, *self._others)

    def score(self, tokens: list[Tokens], batch: list[Window]) -> list[np.ndarray]:
        if not batch:
            return []
        each = [scorer.score(tokens, batch) for scorer in self.scorers]  # per scorer, per window (n-1,)
        return [np.mean(window, axis=0, dtype=np.float32) for window in zip(*each, strict=True)]
