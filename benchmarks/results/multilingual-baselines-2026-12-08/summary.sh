#!/bin/bash
# Boundary F1 per language, system and split from dev/, test/ and probe-dev/ results.json (after run.sh
# and run-probe.sh); writes summary.md beside this script. F1 only: speeds were measured on a shared
# machine and are not reported.
cd "$(dirname "$0")"
../../../.venv/bin/python - <<'PY'
import json
from pathlib import Path

SHORT = {"pysbd": "pySBD", "spacy-sentencizer": "spaCy sent.", "punkt": "Punkt",
         "attention@multilingual-e5-small:sep-attention": "e5 sep-attn", "attention@multilingual-e5-small:similarity": "e5 similarity",
         "attention@multilingual-e5-small": "e5 probe"}
cells, datasets, systems = {}, [], []
for split in ("dev", "test", "probe-dev"):
    path = Path(split) / "results.json"
    if not path.is_file():
        continue
    for run in json.loads(path.read_text())["runs"]:
        name = run["dataset"].replace("-ud-dev", "").replace("-ud-test", "")
        part = "test" if "-ud-test" in run["dataset"] else "dev"
        if name not in datasets:
            datasets.append(name)
        if run["system"] not in systems:
            systems.append(run["system"])
        f1 = "skipped" if run["skipped"] else f"{run['f1']:.3f}"
        cells[(name, run["system"], part)] = (f1, run["n_gold_boundaries"], run["n_docs"])
lines = ["# Multilingual baselines: boundary F1, clean condition (dev / test)", "",
         "| treebank | dev docs / gold | test docs / gold | " + " | ".join(SHORT.get(s, s) for s in systems) + " |",
         "|---|---|---|" + "---|" * len(systems)]
for name in datasets:
    def facts(part):
        for s in systems:
            if (name, s, part) in cells:
                return "{2} / {1}".format(*cells[(name, s, part)])
        return "-"
    row = [name, facts("dev"), facts("test")]
    for s in systems:
        row.append(" / ".join(cells.get((name, s, part), ("-",))[0] for part in ("dev", "test")))
    lines.append("| " + " | ".join(row) + " |")
lines += ["", "e5 probe: dev only (run-probe.sh); trained on tr, el, mr, fr-Sequoia, it-ParTUT, hu, vi train files."]
Path("summary.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
PY
