"""recall_iou.png of `segmenter bench-chunks`: recall@5 and IoU@5 against the mean chunk length.

One line per chunker through its budgets (in the order of their mean length), a chunker without a budget
as one point; ours (`ours`, `ours-no-topics`) drawn thick, in front, with the 95% bootstrap intervals of
their points, the others thin. Smaller chunks raise IoU by themselves, so chunkers compare at equal x.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from segmenter.extras import require

OURS = {"ours": "black", "ours-no-topics": "tab:red"}
PANELS = (("recall@5", "recall@5 (%)"), ("iou@5", "IoU@5 (%)"))
MARKERS = "s^vDPX*h<>p"  # the others' markers, in turn (ours: circles)


def plot_recall_iou(results: Sequence[dict], path: Path, unit: str = "cl100k tokens") -> None:
    """Two panels from `results` (rows of results.json: name, mean_tokens, recall@5, iou@5 and their
    intervals), written to `path`."""
    matplotlib = require("matplotlib", "bench", "the recall/IoU figure of segmenter bench-chunks")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(r.get("name", r["chunker"]) for r in results))
    others = [n for n in names if n not in OURS]
    palette = [plt.cm.tab20(i) for i in (0, 2, 4, 8, 10, 12, 14, 16, 18, 1, 5, 9)]  # no red: ours-no-topics'
    colors = {name: palette[i % len(palette)] for i, name in enumerate(others)} | OURS
    markers = {name: MARKERS[i % len(MARKERS)] for i, name in enumerate(others)} | dict.fromkeys(OURS, "o")
    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    for ax, (metric, label) in zip(axes, PANELS, strict=True):
        for name in names:
            rows = sorted(
                (r for r in results if r.get("name", r["chunker"]) == name), key=lambda r: r["mean_tokens"]
            )
            x, y = [r["mean_tokens"] for r in rows], [r[metric] for r in rows]
            ours = name in OURS
            style = {
                "color": colors[name],
                "marker": markers[name],
                "label": name,
                "zorder": 3 if ours else 2,
            }
            ax.plot(
                x,
                y,
                linewidth=2.5 if ours else 1.0,
                markersize=7 if ours else 4,
                alpha=1 if ours else 0.8,
                **style,
            )
            if ours and all(f"{metric} interval" in r for r in rows):
                low = [r[metric] - r[f"{metric} interval"][0] for r in rows]
                high = [r[f"{metric} interval"][1] - r[metric] for r in rows]
                ax.errorbar(x, y, yerr=[low, high], fmt="none", ecolor=colors[name], capsize=3, zorder=3)
        ax.set_xlabel(f"mean chunk length ({unit})")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[1].legend(fontsize=8, loc="best")
    fig.suptitle("retrieval at k = 5 against chunk length, one line per chunker through its budgets")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
