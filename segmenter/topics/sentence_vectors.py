"""Sentence vectors from an encoder: the mean of its last block's outputs over a sentence's tokens.

This is how all-MiniLM-L6-v2 (the packaged backbone) was trained to be used (sentence-transformers:
mean pooling over the real tokens, then unit length), so the vectors of two sentences compare by their
dot product. `SentenceVectors` runs the whole model, untouched: a segmenter's encoder keeps only the
blocks its probe reads, with the probe's weight deltas merged in, so the topic segmenter loads the
backbone a second time, once, for this. Sentences are truncated at `max_tokens` tokens (256, the
backbone's training length); a longer sentence is represented by its start.

Text in, (S, D) float32 arrays out; nothing here knows about topics or spans.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from segmenter.encoder.torch.encoder import Encoder

MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length in sentence-transformers
WIDTH_STEP = 8  # batches padded to a multiple of this: each new shape costs kernels and memory kept for it


class SentenceVectors:
    """Unit-length mean-pooled sentence vectors of an encoder (the packaged backbone by default).

    >>> vectors = SentenceVectors()
    >>> vectors(["It rained.", "We stayed in."]).shape
    (2, 384)
    """

    def __init__(
        self,
        model: str | None = None,
        device: str = "cpu",
        precision: str = "auto",
        batch_size: int = 32,
        max_tokens: int = MAX_TOKENS,
        encoder: Encoder | None = None,
    ):
        """encoder: an `Encoder` with every block and no deltas to use as is (else one is loaded).
        precision "int8" reads the vectors in float32: they are pooled in torch, which the int8 graph
        does not serve, so no graph is built for them."""
        float_precision = "float32" if precision == "int8" else precision
        self.encoder = encoder or Encoder(model, device=device, precision=float_precision)
        self.batch_size = batch_size
        self.max_tokens = min(max_tokens, self.encoder.max_positions)

    @property
    def dimension(self) -> int:
        return self.encoder.hidden_size

    @torch.inference_mode()
    def __call__(self, sentences: Sequence[str]) -> np.ndarray:
        """(S, D) float32 unit vectors of `sentences`, in order (a sentence without tokens: zeros)."""
        out = np.zeros((len(sentences), self.dimension), dtype=np.float32)
        if not sentences:
            return out
        encoder, keep = self.encoder, self.max_tokens - 2  # room for [CLS] and [SEP]
        ids = [[encoder.cls_id, *encoder.tokenize(s).ids[:keep].tolist(), encoder.sep_id] for s in sentences]
        order = np.argsort([len(i) for i in ids], kind="stable")  # batch similar lengths: less padding
        model, device = self.encoder.model, self.encoder.device
        for first in range(0, len(order), self.batch_size):
            rows = order[first : first + self.batch_size]
            longest = max(len(ids[r]) for r in rows)
            width = min(-(-longest // WIDTH_STEP) * WIDTH_STEP, self.max_tokens)  # few distinct shapes
            batch = np.full((len(rows), width), self.encoder.pad_id, dtype=np.int64)  # (B, T)
            mask = np.zeros((len(rows), width), dtype=np.int64)  # (B, T)
            for b, r in enumerate(rows):
                batch[b, : len(ids[r])] = ids[r]
                mask[b, : len(ids[r])] = 1
            mask_t = torch.as_tensor(mask, device=device)
            ids_t = torch.as_tensor(batch, device=device)
            hidden = model(input_ids=ids_t, attention_mask=mask_t).last_hidden_state  # (B, T, D)
            weights = mask_t[..., None].to(hidden.dtype)  # (B, T, 1)
            pooled = (hidden * weights).sum(1).float() / weights.sum(1).float().clamp(min=1)  # (B, D)
            pooled = torch.nn.functional.normalize(pooled, dim=-1)
            out[rows] = pooled.cpu().numpy()
        return out


def backbone_of(segmenter) -> str | None:
    """The model argument that loads `segmenter`'s backbone again (None: the packaged default)."""
    from segmenter.encoder.torch.encoder import DEFAULT_MODEL_NAME

    name = segmenter.encoder.name
    return None if name == DEFAULT_MODEL_NAME else name
