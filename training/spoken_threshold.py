"""Choose each shipped preset's threshold for spoken text, by the rule in
benchmarks/results/spoken-threshold/rule.md (written before the runs).

    python training/spoken_threshold.py [--ud ../shared/data/ud] [--out benchmarks/results/spoken-threshold]
                                        [--write]

For each preset and each precision it ships thresholds for, the texts are read once (gap probabilities)
and decoded at every candidate threshold; only the texts judged spoken (`segmenter.text.conditions`)
take the candidate, every other text keeps its own condition's threshold. Scores: pooled boundary F1
of every family of the realworld dev file (the objective is its transcripts) and the six UD English dev
unpunctuated cells (`training/dev_scores.py`). Writes `selection.md` and `selection.json` to --out;
`--write` records each winner in its preset's meta.json (`thresholds["spoken"]`, per precision). A
development tool: nothing in `segmenter` imports it; it reads dev files only.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import click
import numpy as np

from segmenter import Segmenter
from segmenter.bench.datasets import evaluation_items, load_dataset
from segmenter.bench.metrics import Counts, score
from segmenter.decode.decoder import decode
from segmenter.encoder.backbones import DEFAULT_MODEL_NAME
from segmenter.probe.shipped import probe_dir_for
from segmenter.text.conditions import SPOKEN, condition_for

PRESETS = ("accurate", "fast", "fastest")
CANDIDATES = tuple(round(0.35 + 0.05 * i, 2) for i in range(12))  # 0.35 .. 0.90
UD_DEV = ("EWT", "GUM", "LinES", "ParTUT", "ESLSpok", "Atis")
MAX_UD_DROP = 0.003
OBJECTIVE = "transcript"
SOURCE = "the realworld dev transcripts, UD dev unpunctuated text held (training/spoken_threshold.py)"


def cells(ud: Path) -> dict[str, list]:
    """Cell name -> evaluation items: each realworld dev family, and each UD dev unpunctuated file."""
    found: dict[str, list] = {}
    for item in evaluation_items(load_dataset("realworld-dev"), "clean"):
        found.setdefault(f"realworld {item.family}", []).append(item)
    for name in UD_DEV:
        spec = f"conllu:{ud}/UD_English-{name}/en_{name.lower()}-ud-dev.conllu"
        found[f"UD {name} unpunctuated"] = evaluation_items(load_dataset(spec), "corrupt")
    return found


def sweep(segmenter: Segmenter, items_by_cell: dict[str, list]) -> dict[str, dict[str, float]]:
    """Candidate ("none" or a threshold) -> cell -> pooled F1."""
    decodings = segmenter.reading.decodings
    counts: dict[str, dict[str, Counts]] = {}
    for cell, items in items_by_cell.items():
        texts = [item.text for item in items]
        judged = [condition_for(text) for text in texts]
        gaps = segmenter.reading.gap_probabilities(texts, segmenter.batch_size, judged)
        for item, condition, found in zip(items, judged, gaps, strict=True):
            for candidate in ("none", *CANDIDATES):
                decoding = decodings[condition]
                if condition == SPOKEN:
                    base = decodings["corrupt"]
                    decoding = base if candidate == "none" else replace(base, threshold=candidate)
                spans = decode(item.text, found.offsets, found.probs, decoding)
                offsets = [span.start for span in spans]
                per = counts.setdefault(str(candidate), {})
                per[cell] = per.get(cell, Counts()) + score(item.text, item.gold, offsets)
    return {candidate: {cell: c.f1 for cell, c in per.items()} for candidate, per in counts.items()}


def choose(f1: dict[str, dict[str, float]]) -> str:
    """The rule: the highest transcript F1 among candidates that keep the UD unpunctuated mean within
    MAX_UD_DROP and no other realworld family lower; ties to the lower threshold ("none" first)."""
    base = f1["none"]

    def ud_mean(per: dict[str, float]) -> float:
        return float(np.mean([v for cell, v in per.items() if cell.startswith("UD ")]))

    def admissible(per: dict[str, float]) -> bool:
        others = [c for c in per if c.startswith("realworld ") and c != f"realworld {OBJECTIVE}"]
        return ud_mean(per) >= ud_mean(base) - MAX_UD_DROP and all(per[c] >= base[c] for c in others)

    best = "none"
    for candidate in [str(c) for c in CANDIDATES]:
        if (
            admissible(f1[candidate])
            and f1[candidate][f"realworld {OBJECTIVE}"] > f1[best][f"realworld {OBJECTIVE}"]
        ):
            best = candidate
    return best


def precisions(preset: str) -> list[str]:
    """The precisions `preset` ships thresholds for: int8 (where it has them) and its meta's own."""
    meta = json.loads((probe_dir_for(DEFAULT_MODEL_NAME, preset) / "meta.json").read_text())
    return [meta["precision"], *meta.get("thresholds_by_precision", {})]


def write_threshold(preset: str, precision: str, threshold: float) -> None:
    """Record `threshold` as `preset`'s spoken threshold at `precision` in its meta.json (where the
    preset names a partner, in the thresholds of the pair)."""
    path = probe_dir_for(DEFAULT_MODEL_NAME, preset) / "meta.json"
    meta = json.loads(path.read_text())
    if precision == meta["precision"]:
        meta.setdefault("thresholds", {})[SPOKEN] = threshold
    else:
        meta["thresholds_by_precision"][precision]["thresholds"][SPOKEN] = threshold
    meta["spoken_thresholds_from"] = SOURCE
    path.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")


@click.command()
@click.option(
    "--ud", type=click.Path(exists=True, file_okay=False, path_type=Path), default="../shared/data/ud"
)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("spoken-threshold"))
@click.option("--write", is_flag=True, help="Record each winner in its preset's meta.json.")
def main(ud: Path, out: Path, write: bool) -> None:
    items_by_cell = cells(ud)
    results, lines = [], []
    for preset in PRESETS:
        for precision in precisions(preset):
            segmenter = Segmenter(preset=preset, precision=precision)
            f1 = sweep(segmenter, items_by_cell)
            winner = choose(f1)
            results.append({"preset": preset, "precision": precision, "winner": winner, "f1": f1})
            click.echo(f"{preset}@{precision}: {winner}", err=True)
            columns = sorted(f1["none"])
            lines += [f"\n## {preset} at {precision}: winner {winner}\n"]
            lines += ["| spoken threshold | UD unpunct. mean | " + " | ".join(columns) + " |"]
            lines += ["|---" * (len(columns) + 2) + "|"]
            for candidate, per in f1.items():
                mean = np.mean([v for c, v in per.items() if c.startswith("UD ")])
                row = [candidate, f"{mean:.4f}", *(f"{per[c]:.3f}" for c in columns)]
                lines.append("| " + " | ".join(row) + " |")
            if write and winner != "none":
                write_threshold(preset, precision, float(winner))
    out.mkdir(parents=True, exist_ok=True)
    (out / "selection.json").write_text(json.dumps(results, indent=2) + "\n")
    (out / "selection.md").write_text(
        "# Spoken threshold per preset and precision (rule.md)\n" + "\n".join(lines) + "\n"
    )


if __name__ == "__main__":
    main()
