"""Compare the two runs of run.sh: every (system, dataset, condition) with its F1 and exact-match value
before and after, and chars/s on EWT test clean (the single rounds of before/ and after/, then the
median of the three interleaved rounds of speed-*/). Prints markdown; exits 1 if any F1 or exact-match
value differs.

    python benchmarks/results/redesign-vnni-2026-12-07/compare.py
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def runs(folder: Path) -> dict[tuple[str, str, str], dict]:
    data = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    return {(r["system"], r["dataset"], r["condition"]): r for r in data["runs"]}


def main() -> int:
    before, after = runs(HERE / "before"), runs(HERE / "after")
    differ = []
    columns = ["system", "dataset", "condition", "F1 before", "F1 after", "exact before", "exact after"]
    columns += ["chars/s before", "chars/s after"]
    print(f"| {' | '.join(columns)} |\n|{'---|' * len(columns)}")
    for key in sorted(before.keys() | after.keys()):
        a, b = before.get(key, {}), after.get(key, {})
        same = (a.get("f1"), a.get("exact_match")) == (b.get("f1"), b.get("exact_match"))
        if not same:
            differ.append(key)
        cells = [a.get("f1"), b.get("f1"), a.get("exact_match"), b.get("exact_match")]
        speeds = [f"{r['chars_per_s']:,.0f}" if r.get("chars_per_s") else "-" for r in (a, b)]
        print(f"| {' | '.join(key)} | {' | '.join(str(c) for c in cells)} | {' | '.join(speeds)} |")
    print(
        f"\n{len(before)} runs before, {len(after)} after; F1 or exact match differ in: {differ or 'none'}\n"
    )
    columns = ["system (EWT test clean)", "chars/s before (rounds)", "median", "chars/s after (rounds)"]
    columns += ["median", "after / before"]
    print(f"| {' | '.join(columns)} |\n|{'---|' * len(columns)}")
    systems = sorted({k[0] for p in HERE.glob("speed-before-*") for k in runs(p)})
    for system in systems:
        medians = []
        cells = []
        for side in ("before", "after"):
            speeds = [
                runs(p)[(system, "ewt-test", "clean")]["chars_per_s"]
                for p in sorted(HERE.glob(f"speed-{side}-*"))
            ]
            medians.append(statistics.median(speeds))
            cells += [", ".join(f"{s:,.0f}" for s in speeds), f"{medians[-1]:,.0f}"]
        print(f"| {system} | {' | '.join(cells)} | {medians[1] / medians[0]:.3f} |")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
