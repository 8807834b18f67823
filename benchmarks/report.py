"""Benchmark output: the markdown table, `results.json` and the F1-versus-speed plot.

Skipped rows stay in the table and the JSON (with their reason) and are left out of the plot.
This module formats and writes; it runs nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from segmenter.bench.runner import Run
from segmenter.extras import require

COLUMNS = (
    "system", "dataset", "condition", "P", "R", "F1", "R unmarked", "exact", "chars/s", "threads",
    "docs", "gold", "unmarked", "note",
)  # fmt: skip
ROUND = 4
MARKERS = {"clean": "o", "corrupt": "x", "lines": "^", "wrapped": "v"}


def markdown_table(runs: Sequence[Run]) -> str:
    """One row per run; metrics with three decimals, `-` where a metric does not apply or was skipped.

    "R unmarked" is the recall at the gold boundaries without sentence-final punctuation before them
    ("unmarked" of the "gold" boundaries); in the unpunctuated condition that is nearly all of them.
    """
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for run in runs:
        note = f"skipped: {run.skipped}" if run.skipped else run.note
        cells = (
            run.system,
            run.dataset,
            run.condition,
            _number(run.precision),
            _number(run.recall),
            _number(run.f1),
            _number(run.unmarked_recall),
            _number(run.exact_match),
            f"{run.chars_per_s:,.0f}" if run.chars_per_s is not None else "-",
            _resources(run),
            str(run.n_docs),
            str(run.n_gold_boundaries),
            str(run.n_unmarked),
            note.replace("|", "\\|"),
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def family_table(runs: Sequence[Run]) -> str:
    """For runs on real documents: one row per system and dataset, boundary F1 and (in brackets) the
    share of documents segmented exactly, per family and overall; "" when no run has families."""
    rows = [run for run in runs if run.families]
    if not rows:
        return ""
    families = list(dict.fromkeys(family for run in rows for family in run.families))
    header = ["system", "dataset", *families]
    lines = ["| " + " | ".join([*header, "overall"]) + " |", "|" + "---|" * (len(header) + 1)]
    for run in rows:
        cells = [run.system, run.dataset]
        for family in families:
            entry = run.families.get(family)
            cells.append("-" if entry is None else f"{_number(entry['f1'])} ({_number(entry['exact'])})")
        cells.append(f"{_number(run.f1)} ({_number(run.exact_match)})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _resources(run: Run) -> str:
    """`1`, or `1 + 1 busy` when busy companion processes ran beside it; `-` when left to the libraries;
    `2 passive` when several threads waited passively (OpenMP), which is slower on a quiet machine."""
    threads = "-" if run.threads is None else str(run.threads)
    if run.wait_policy and run.wait_policy.upper() == "PASSIVE" and run.threads != 1:
        threads += " passive"
    return f"{threads} + {run.busy} busy" if run.busy else threads


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def results_json(runs: Sequence[Run], env: dict, config: dict | None = None) -> dict:
    """`{"runs": [...], "env": {...}, "config": {...}}` with metrics rounded to four decimals."""
    return {"runs": [_rounded(run.to_dict()) for run in runs], "env": env, "config": config or {}}


def _rounded(row: dict) -> dict:
    if row.get("families"):
        row = {**row, "families": {f: _rounded(e) for f, e in row["families"].items()}}
    return {key: round(value, ROUND) if isinstance(value, float) else value for key, value in row.items()}


def plot_f1_vs_speed(runs: Sequence[Run], path: Path) -> None:
    """F1 against characters per second (log x): one panel per dataset, one point per system and condition.

    Colour marks the system (legend), the marker the condition (MARKERS: o clean, x corrupt, ...); clean
    points are also labelled, the others (corrupt ones often pile up at F1 0) are not.
    """
    matplotlib = require("matplotlib", "bench", "the F1/speed figure of segmenter bench")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    scored = [run for run in runs if run.skipped is None and run.f1 is not None and run.chars_per_s]
    datasets = list(dict.fromkeys(run.dataset for run in runs)) or ["(none)"]
    systems = list(dict.fromkeys(run.system for run in scored))
    palette = [plt.cm.tab20(i) for i in (*range(0, 20, 2), *range(1, 20, 2))]  # strong colours first
    colors = {system: palette[i % 20] for i, system in enumerate(systems)}
    fig, axes = plt.subplots(1, len(datasets), figsize=(6 * len(datasets) + 1.8, 5), squeeze=False)
    for ax, dataset in zip(axes[0], datasets, strict=True):
        for run in (r for r in scored if r.dataset == dataset):
            marker = MARKERS.get(run.condition, "s")
            ax.scatter(run.chars_per_s, run.f1, marker=marker, color=colors[run.system], s=36)
            if run.condition == "clean":
                ax.annotate(run.system, (run.chars_per_s, run.f1), fontsize=7, xytext=(4, 3),
                            textcoords="offset points")  # fmt: skip
        ax.set_xscale("log")
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("characters per second (log)")
        ax.set_ylabel("boundary F1")
        ax.set_title(dataset)
        ax.grid(True, which="both", alpha=0.3)
    handles = [Line2D([], [], color=colors[s], marker="o", linestyle="", label=s) for s in systems]
    handles += [Line2D([], [], color="grey", marker=m, linestyle="", label=c) for c, m in MARKERS.items()]
    fig.legend(handles=handles, loc="center right", fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1 - 1.7 / fig.get_figwidth(), 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_outputs(out: Path, runs: Sequence[Run], env: dict, config: dict | None = None) -> list[Path]:
    """Write results.json, results.md and f1_vs_speed.png into `out` (created if missing)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "results.json", out / "results.md", out / "f1_vs_speed.png"]
    paths[0].write_text(json.dumps(results_json(runs, env, config), indent=2) + "\n", encoding="utf-8")
    families = family_table(runs)
    paths[1].write_text(
        markdown_table(runs) + (f"\nBy family: F1 (exact)\n\n{families}" if families else ""),
        encoding="utf-8",
    )
    plot_f1_vs_speed(runs, paths[2])
    return paths
