"""The similarity-contrast signal of `segmenter.probe.features`, computed in torch over whole batches.

For the gap after a text token, per layer and head: the mean cosine similarity of the head's context
vectors inside the `span` tokens left of it and inside the `span` tokens right of it, minus the mean
similarity across it (TextTiling on head vectors). `batch_contrast` reads numpy captures for
inference; `contrast` takes tensors and is differentiable, for tuning (`segmenter.training.tune`). Kept apart
from `segmenter.probe.features` so that reading block outputs alone never imports torch.
"""

from __future__ import annotations

import numpy as np
import torch


@torch.inference_mode()
def batch_contrast(contexts: np.ndarray, lengths: np.ndarray, span: int) -> np.ndarray:
    """(L, B, H, N) similarity contrast at the gap after each text token of every row of a batch.

    contexts: (L, B, T, H, d) per-head context vectors, [CLS] at position 0 and text tokens from 1.
    lengths:  (B,) text tokens per row (n_b <= N = T - 2); a row's last token and its padding get 0.
    The numbers are `contrast`'s, laid out per head.
    """
    n_layers, batch, width, n_heads, _ = contexts.shape
    n_max = width - 2
    out = np.zeros((n_layers, batch, n_heads, max(n_max, 0)), dtype=np.float32)
    if n_max < 2:
        return out
    found = contrast(torch.from_numpy(contexts[:, :, 1 : n_max + 1]), torch.as_tensor(lengths), span)
    out[:, :, :, : n_max - 1] = found.permute(0, 1, 3, 2).numpy()
    return out


def contrast(text: torch.Tensor, lengths: torch.Tensor, span: int) -> torch.Tensor:
    """(L, B, N-1, H) similarity contrast at the gap after each of the first N-1 text tokens.

    text:    (L, B, N, H, d) per-head context vectors of the text tokens (N >= 2), padding after a row's
             own n_b = lengths[b] tokens.
    For the gap after text token g-1 (prefix index g), with left block [g - span, g) and right block
    [g, min(g + span, n_b)): mean cosine similarity inside each block, self-pairs included, minus the
    mean similarity across them. The mean similarity of m unit vectors is |sum|^2 / m^2, and across two
    blocks <sum_left, sum_right> / (m_left m_right); each block sum is one sliding-window sum of
    `span` unit vectors (zeros outside a row's text), so every gap costs O(span * d). Gaps past a row's
    text get 0. Differentiable (training reads it from a tuned encoder, `segmenter.training.tune`).
    """
    n_max = text.shape[2]
    real = torch.arange(n_max, device=text.device)[None, :] < lengths[:, None]  # (B, N): text tokens
    scale = real[None, :, :, None] / torch.linalg.vector_norm(text, dim=-1).clamp(min=1e-6)  # (L, B, N, H)
    unit = text * scale[..., None]  # unit vectors on text tokens, zeros on padding
    padded = torch.nn.functional.pad(unit, (0, 0, 0, 0, span, span))  # (L, B, N + 2 span, H, d)
    # sums[j] = unit vectors j - span .. j - 1 (text positions), for j = 0 .. N + span
    sums = padded[:, :, : n_max + span + 1].clone()
    for shift in range(1, span):
        sums = sums + padded[:, :, shift : shift + n_max + span + 1]
    gap = torch.arange(1, n_max, device=text.device)  # (N-1,) prefix index of the gap after token g-1
    left = sums[:, :, 1:n_max]  # (L, B, N-1, H, d): sum over [g - span, g)
    right = sums[:, :, 1 + span : n_max + span]  # sum over [g, g + span), zeros past the text
    m_left = gap.clamp(max=span).float()[None, None, :, None]  # (1, 1, N-1, 1)
    ends = torch.minimum(gap[None, :] + span, lengths[:, None])  # (B, N-1)
    m_right = (ends - gap[None, :]).clamp(min=1).float()[None, :, :, None]  # (1, B, N-1, 1)
    dot = torch.linalg.vecdot
    within = 0.5 * (dot(left, left) / m_left**2 + dot(right, right) / m_right**2)
    across = dot(left, right) / (m_left * m_right)
    return (within - across) * real[None, :, 1:, None]  # (L, B, N-1, H)
