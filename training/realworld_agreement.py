"""Agreement between the real-document corpus and an independent second annotation of a sample of it.

    python training/realworld_agreement.py SECOND.jsonl [...] --out benchmarks/data/realworld

Each SECOND file holds one object per line, `id` and `segments` (every segment of that document in
order, as in the annotation files of `training/realworld_split.py`), made without seeing the first
annotation. Writes `second_annotation.jsonl` (`id`, `boundaries`) and `AGREEMENT.md` to OUT: boundary
precision, recall and F1 of the second annotation against the first, on exact offsets as the benchmark
scores (`segmenter.bench.metrics.score`), per family and overall, before any adjudication.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from realworld_split import boundaries_of

from segmenter.bench.metrics import Counts, score
from segmenter.gold.corpus import read_realworld

FILES = ("dev.jsonl", "test.jsonl")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("second", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    first = {doc.id: doc for name in FILES for doc in read_realworld(args.out / name)}
    second = {}
    for path in args.second:
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.strip():
                case = json.loads(line)
                doc = first[case["id"]]
                second[doc.id] = boundaries_of({"id": doc.id, "text": doc.text, "segments": case["segments"]})
    by_family: dict[str, list] = {}
    for doc_id in sorted(second):
        doc = first[doc_id]
        entry = by_family.setdefault(doc.family, [Counts(), 0, 0])
        entry[0] += score(doc.text, doc.boundaries, second[doc_id])
        entry[1] += 1
        entry[2] += len(doc.boundaries)
    lines = [
        "# Agreement: an independent second annotation of a sample",
        "",
        f"{len(second)} documents drawn at random from both files (`random.Random(7).sample(docs, 7)` per",
        "family, in family-name order, over dev then test in file order), annotated again to",
        "`docs/annotation.md` v1 without the first annotation or any system's output. Boundary precision,",
        "recall and F1 of the second annotation against the first, on exact offsets, before adjudication",
        "(`training/realworld_agreement.py`; the second annotation is `second_annotation.jsonl`).",
        "",
        "The second annotators were annotator sessions of the same kind as the first, each given the",
        "guideline and the bare texts only: the figures measure how consistently the guideline is applied,",
        "and are likely higher than two people annotating independently would reach.",
        "",
        "| family | documents | first annotation's boundaries | P | R | F1 |",
        "|---|---|---|---|---|---|",
    ]
    total, docs, gold = Counts(), 0, 0
    for family, (counts, n_docs, n_gold) in sorted(by_family.items()):
        scores = f"{counts.precision:.3f} | {counts.recall:.3f} | {counts.f1:.3f}"
        lines.append(f"| {family} | {n_docs} | {n_gold} | {scores} |")
        total, docs, gold = total + counts, docs + n_docs, gold + n_gold
    lines.append(f"| all | {docs} | {gold} | {total.precision:.3f} | {total.recall:.3f} | {total.f1:.3f} |")
    (args.out / "AGREEMENT.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = [json.dumps({"id": doc_id, "boundaries": second[doc_id]}) for doc_id in sorted(second)]
    (args.out / "second_annotation.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
