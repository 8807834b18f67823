"""Tables from `segmenter bench` results.json files: the README's results table, and two runs compared.

    python training/bench_tables.py readme RESULTS_JSON
    python training/bench_tables.py compare BEFORE_JSON AFTER_JSON

`readme` prints the README's markdown table (EWT test and golden rules, clean and unpunctuated, EWT
test in lines where the run has it, and the clean EWT chars/s) for the systems it lists. `compare`
prints, per (system, dataset, condition), both runs' F1, exact match and chars/s, and exits 1 if any
F1 or exact-match value of a row in both runs differs (rows in one run only are listed and not
counted). Reads only the given files.
"""

from __future__ import annotations

import argparse
import json
import sys

README_SYSTEMS = {
    "attention": "**attention** (`accurate`, default)",
    "attention-bfloat16": "attention in bfloat16 (`--precision bfloat16`)",
    "attention-float32": "attention in float32 (`--precision float32`)",
    "attention-fast": "attention `fast`",
    "attention-fastest": "attention `fastest`",
    "attention-signals": "attention `signals`",
    "spacy-attention": "attention as a spaCy component",
    "attention@all-mpnet-base-v2": "attention on all-mpnet-base-v2 (12 layers, frozen)",
    "spacy-parser": "spaCy parser (en_core_web_sm)",
    "pysbd": "pySBD",
    "punkt": "NLTK Punkt (trained on EWT dev)",
    "sentencex": "sentencex",
    "blingfire": "Bling Fire",
}


def load_runs(path: str) -> dict[tuple[str, str, str], dict]:
    with open(path, encoding="utf-8") as f:
        runs = json.load(f)["runs"]
    return {(r["system"], r["dataset"], r["condition"]): r for r in runs}


def readme_table(runs: dict) -> str:
    lines = [
        "| system | EWT clean F1 | EWT unpunctuated F1 | EWT lines F1 | golden rules exact (clean) | "
        "golden rules exact (unpunctuated) | chars/s (EWT clean, 1 thread) | vs spaCy parser |",
        "|---|---|---|---|---|---|---|---|",
    ]
    parser = runs.get(("spacy-parser", "ewt-test", "clean"))
    for system, label in README_SYSTEMS.items():
        cells = [runs.get((system, "ewt-test", c)) for c in ("clean", "corrupt")]
        golden = [runs.get((system, "golden-rules", c)) for c in ("clean", "corrupt")]
        if None in cells or None in golden:
            continue
        exact = [f"{round(g['exact_match'] * g['n_docs'])}/{g['n_docs']}" for g in golden]
        ratio = "-" if parser is None else f"{cells[0]['chars_per_s'] / parser['chars_per_s']:.2f}x"
        in_lines = runs.get((system, "ewt-test", "lines"))
        lines_f1 = "-" if in_lines is None else f"{in_lines['f1']:.3f}"
        lines.append(
            f"| {label} | {cells[0]['f1']:.3f} | {cells[1]['f1']:.3f} | {lines_f1} | {exact[0]} | "
            f"{exact[1]} | {cells[0]['chars_per_s']:,.0f} | {ratio} |"
        )
    return "\n".join(lines)


def compare(before: dict, after: dict) -> bool:
    """Print both runs side by side; True when every F1 and exact-match value in both is equal."""
    same = True
    print(
        "| system | dataset | condition | F1 before / after | exact before / after | chars/s before / after |"
    )
    print("|---|---|---|---|---|---|")
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key), after.get(key)
        if a is None or b is None:
            print(f"| {' | '.join(key)} | only in {'after' if a is None else 'before'} | | |")
            continue
        equal = a["f1"] == b["f1"] and a["exact_match"] == b["exact_match"]
        same &= equal
        exact = "-" if a["exact_match"] is None else f"{a['exact_match']:.3f} / {b['exact_match']:.3f}"
        mark = "" if equal else " **differs**"
        print(
            f"| {' | '.join(key)} | {a['f1']:.4f} / {b['f1']:.4f}{mark} | {exact} | "
            f"{a['chars_per_s']:,.0f} / {b['chars_per_s']:,.0f} |"
        )
    return same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("readme").add_argument("results")
    both = sub.add_parser("compare")
    both.add_argument("before")
    both.add_argument("after")
    args = parser.parse_args()
    if args.command == "readme":
        print(readme_table(load_runs(args.results)))
    else:
        sys.exit(0 if compare(load_runs(args.before), load_runs(args.after)) else 1)


if __name__ == "__main__":
    main()
