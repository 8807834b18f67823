"""PNG figures of the attention-head analysis, drawn from the heads.json content (and the example text).

One function per figure; each takes plain lists / arrays, writes one PNG with matplotlib's Agg backend and
returns its file name. `draw_all` writes them all and returns {figure key: file name}.
Leaves out: computing any statistic (everything drawn is already in heads.json, except the example
similarity matrices, which are recomputed from the example text's head vectors).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from segmenter.analysis.stats import Example
from segmenter.extras import require

FIGURES = {
    "sep_attention": "attention_sep.png",
    "cls_period_attention": "attention_cls_period.png",
    "similarity_examples": "similarity_examples.png",
    "distance": "distance_by_layer.png",
    "within_sentence": "within_sentence_by_layer.png",
    "anchors": "anchor_tokens.png",
    "probe_f1": "probe_f1_by_layer.png",
}


def _pyplot():
    matplotlib = require("matplotlib", "analysis", "the figures of segmenter analyze")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _array(values) -> np.ndarray:
    """Nested lists with None -> float array with NaN."""
    return np.array([[np.nan if v is None else v for v in row] for row in values], dtype=float)


def _vector(values) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _layers(n: int) -> np.ndarray:
    return np.arange(1, n + 1)


def _heatmap(ax, matrix: np.ndarray, title: str, annotate: bool = True, vmax: float | None = None):
    layers, heads = matrix.shape
    image = ax.imshow(matrix, cmap="viridis", aspect="auto", vmin=0.0, vmax=vmax)
    ax.set_xticks(range(heads), [str(h) for h in _layers(heads)])
    ax.set_yticks(range(layers), [str(layer) for layer in _layers(layers)])
    ax.set_xlabel("head")
    ax.set_ylabel("layer")
    ax.set_title(title)
    if annotate:
        top = np.nanmax(matrix) if np.isfinite(matrix).any() else 1.0
        for (row, col), value in np.ndenumerate(matrix):
            if np.isfinite(value):
                color = "black" if value > 0.6 * top else "white"
                ax.text(col, row, f"{value:.2f}", ha="center", va="center", fontsize=6, color=color)
    return image


def plot_sep_attention(heads: dict, out: Path) -> str:
    """Attention to [SEP] per layer (rows) and head (columns)."""
    plt = _pyplot()
    matrix = _array(heads["sep_attention"])
    fig, ax = plt.subplots(figsize=(1.0 + 0.55 * matrix.shape[1], 1.2 + 0.45 * matrix.shape[0]))
    image = _heatmap(ax, matrix, f"Attention to [SEP] ({heads['model']})")
    fig.colorbar(image, ax=ax, label="mean attention mass")
    return _save(fig, out, FIGURES["sep_attention"])


def plot_cls_period_attention(heads: dict, out: Path) -> str:
    """Attention to [CLS] and to periods, side by side, same layout as the [SEP] heatmap."""
    plt = _pyplot()
    cls, period = _array(heads["cls_attention"]), _array(heads["period_attention"])
    width = 2.0 + 1.1 * cls.shape[1]
    fig, axes = plt.subplots(1, 2, figsize=(width, 1.2 + 0.45 * cls.shape[0]))
    for ax, matrix, title in (
        (axes[0], cls, "Attention to [CLS]"),
        (axes[1], period, "Attention to periods"),
    ):
        image = _heatmap(ax, matrix, title)
        fig.colorbar(image, ax=ax)
    return _save(fig, out, FIGURES["cls_period_attention"])


def example_heads(heads: dict) -> dict[str, tuple[int, int]]:
    """The two heads drawn: the strongest repetition head and the strongest within-sentence head (0-based)."""
    picks = {}
    for key, name in (
        ("repetition_share", "repetition"),
        ("within_sentence_fraction_by_head", "within-sentence"),
    ):
        matrix = np.nan_to_num(_array(heads[key]), nan=-1.0)
        layer, head = np.unravel_index(int(np.argmax(matrix)), matrix.shape)
        picks[name] = (int(layer), int(head))
    return picks


def plot_similarity_examples(heads: dict, example: Example, tokens: tuple[str, ...], out: Path) -> str:
    """Raw similarity S of the example text for a repetition head and a within-sentence head.

    [CLS] is left out (as in the pair statistics); white lines mark sentence borders (after each [SEP]).
    """
    plt = _pyplot()
    picks = example_heads(heads)
    fig, axes = plt.subplots(1, len(picks), figsize=(6.5 * len(picks), 6.2))
    sentence = example.text.sentence[1:]
    borders = np.nonzero(np.diff(sentence))[0] + 0.5
    labels = list(tokens[1:])
    for ax, (name, (layer, head)) in zip(np.atleast_1d(axes), picks.items(), strict=True):
        matrix = example.similarity(layer, head)[1:, 1:]
        low, high = np.percentile(matrix, [1, 99])
        image = ax.imshow(matrix, cmap="magma", vmin=low, vmax=high)
        for border in borders:
            ax.axhline(border, color="white", linewidth=0.8)
            ax.axvline(border, color="white", linewidth=0.8)
        share_key = "repetition_share" if name == "repetition" else "within_sentence_fraction_by_head"
        share = heads[share_key][layer][head]
        label = "identical-token share" if name == "repetition" else "within-sentence share"
        ax.set_title(f"highest {label}: layer {layer + 1}, head {head + 1} ({share:.2f})")
        if len(labels) <= 80:
            ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=5)
            ax.set_yticks(range(len(labels)), labels, fontsize=5)
        fig.colorbar(image, ax=ax, fraction=0.046, label="S = C C^T")
    fig.suptitle(
        f"Context similarity on example text {example.text.doc_id[:40]} "
        "([CLS] left out; white lines: sentence borders)"
    )
    return _save(fig, out, FIGURES["similarity_examples"])


def plot_distance(heads: dict, out: Path) -> str:
    """Left: distribution of pair distances per layer; right: mean distance per layer vs chance."""
    plt = _pyplot()
    counts = np.asarray(heads["distance_histogram"]["counts"], dtype=float)  # (L, D)
    layers = counts.shape[0]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    colors = plt.cm.viridis(np.linspace(0, 1, layers))
    edges = _distance_bins(counts.shape[1])
    for layer in range(layers):
        binned = np.add.reduceat(counts[layer], edges[:-1]) if counts.shape[1] > 1 else np.zeros(1)
        total = binned.sum()
        if total > 0:
            density = binned / total / np.diff(edges)
            left.step(edges[:-1], density, where="post", color=colors[layer], label=f"layer {layer + 1}")
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("token distance |i - j|")
    left.set_ylabel("share of pairs per token of distance")
    left.set_title("Distance of high-similarity pairs")
    left.legend(fontsize=7, ncol=2)
    _per_layer(
        right,
        {
            "raw scalar product": heads["mean_pair_distance"],
            "cosine": heads.get("cosine", {}).get("mean_pair_distance"),
        },
        heads.get("chance", {}).get("mean_pair_distance"),
        "mean distance (tokens)",
        f"Mean pair distance (last/first {_fmt(heads['distance_ratio_last_first'])})",
    )
    return _save(fig, out, FIGURES["distance"])


def _distance_bins(length: int) -> np.ndarray:
    """Bin edges from distance 1: single distances up to 8, then geometric widths (about 40 bins)."""
    if length <= 2:
        return np.array([1, 2])
    edges = np.unique(np.concatenate([np.arange(1, min(length, 9)), np.geomspace(8, length, 32).astype(int)]))
    edges = edges[edges < length]
    return np.append(edges, length)


def plot_within_sentence(heads: dict, out: Path) -> str:
    """Within-sentence share of high-similarity pairs per layer (raw and cosine) vs chance."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    _per_layer(
        ax,
        {
            "raw scalar product": heads["within_sentence_fraction"],
            "cosine": heads.get("cosine", {}).get("within_sentence_fraction"),
        },
        heads.get("chance", {}).get("within_sentence_fraction"),
        "share of pairs within one sentence",
        "Within-sentence share of high-similarity pairs",
    )
    ax.set_ylim(0, 1)
    return _save(fig, out, FIGURES["within_sentence"])


def _per_layer(ax, series: dict, chance, ylabel: str, title: str) -> None:
    for label, values in series.items():
        if values:
            values = _vector(values)
            ax.plot(_layers(len(values)), values, marker="o", label=label)
    if chance is not None:
        ax.axhline(chance, color="grey", linestyle="--", label="random pairs")
    ax.set_xlabel("layer")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)


def plot_anchors(heads: dict, out: Path) -> str:
    """Anchor token of every head, coloured by its share of pair ends; per-layer uniqueness on the right."""
    plt = _pyplot()
    share = _array(heads["anchor_share"])
    tokens = heads["anchor_tokens"]
    layers, n_heads = share.shape
    fig, ax = plt.subplots(figsize=(1.5 + 0.85 * n_heads, 1.2 + 0.5 * layers))
    image = ax.imshow(share, cmap="Blues", aspect="auto", vmin=0.0, vmax=max(0.5, float(np.nanmax(share))))
    for (row, col), token in np.ndenumerate(np.array(tokens, dtype=object)):
        unique = sum(t == token for t in tokens[row]) == 1
        ax.text(
            col,
            row,
            str(token),
            ha="center",
            va="center",
            fontsize=7,
            fontweight="bold" if unique else "normal",
            color="black",
        )
    ax.set_xticks(range(n_heads), [str(h) for h in _layers(n_heads)])
    uniqueness = heads["anchor_uniqueness"]
    labels = [f"{layer} (u={_fmt(u, 2)})" for layer, u in zip(_layers(layers), uniqueness, strict=True)]
    ax.set_yticks(range(layers), labels)
    ax.set_xlabel("head")
    ax.set_ylabel("layer (uniqueness)")
    ax.set_title("Anchor token per head (bold: unique in its layer)")
    fig.colorbar(image, ax=ax, label="anchor's share of pair ends")
    return _save(fig, out, FIGURES["anchors"])


def plot_probe_f1(heads: dict, out: Path) -> str:
    """Boundary-probe F1 per layer, one line per condition."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    precision = heads.get("probe_average_precision_by_layer", {})
    for number, (condition, scores) in enumerate(heads.get("probe_f1_by_layer", {}).items()):
        values = _vector(scores)
        color = f"C{number}"
        ax.plot(_layers(len(values)), values, marker="o", color=color, label=f"{condition}: F1")
        if precision.get(condition):
            values = _vector(precision[condition])
            ax.plot(
                _layers(len(values)),
                values,
                linestyle="--",
                marker=".",
                color=color,
                label=f"{condition}: average precision",
            )
    ax.set_xlabel("layer")
    ax.set_ylabel("score on held-out documents")
    ax.set_ylim(0, 1)
    ax.set_title("Boundary information per layer (logistic probe)")
    ax.grid(alpha=0.3)
    if heads.get("probe_f1_by_layer"):
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "probe not run", ha="center", va="center", transform=ax.transAxes)
    return _save(fig, out, FIGURES["probe_f1"])


def draw_all(heads: dict, example: Example | None, tokens: tuple[str, ...], out: Path) -> dict[str, str]:
    """Every figure into `out`; returns {figure key: file name} (no similarity figure without an example)."""
    out.mkdir(parents=True, exist_ok=True)
    drawn = {
        "sep_attention": plot_sep_attention(heads, out),
        "cls_period_attention": plot_cls_period_attention(heads, out),
    }
    if example is not None:
        drawn["similarity_examples"] = plot_similarity_examples(heads, example, tokens, out)
    drawn["distance"] = plot_distance(heads, out)
    drawn["within_sentence"] = plot_within_sentence(heads, out)
    drawn["anchors"] = plot_anchors(heads, out)
    if heads.get("probe_f1_by_layer"):
        drawn["probe_f1"] = plot_probe_f1(heads, out)
    return drawn


def _fmt(value, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _save(fig, out: Path, name: str) -> str:
    fig.tight_layout()
    fig.savefig(out / name, dpi=110, metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return name
