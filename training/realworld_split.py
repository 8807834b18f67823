"""Build the real-document corpus's dev and test files from per-family annotation files.

    python training/realworld_split.py ANNOTATIONS_DIR benchmarks/data/realworld

Each `FAMILY.jsonl` in ANNOTATIONS_DIR holds one annotated document per line: `id`, `family`, `source`,
`licence`, `group` (the source a document comes from), `text`, `segments` (every segment in order, each
an exact substring of `text`, only whitespace between them) and `annotators`. This script turns segments
into boundary offsets (docs/annotation.md, section 1), checks them, and draws the split by source group:
per family (those with fewest groups first), the groups in a seeded random order, each group to the file
with fewer documents of that family so far (dev on a tie; text written for the corpus balanced on its
own, so that neither file has more of it than the other), so that no source is in both files; where one
repository gave groups to several families, all its groups go where its first one went. Written to OUT:
`dev.jsonl` and `test.jsonl` in the format of docs/annotation.md, and `SPLIT.md` (documents, boundaries
and groups per family and file)."""

from __future__ import annotations

import json
import random
import re
import sys
from collections import defaultdict
from pathlib import Path

SEED = 20261207
FAMILIES = ("email", "markdown", "chat", "transcript", "pdf", "technical", "legal")
_REPOSITORY = re.compile(r"github\.com/([^/\s]+/[^/\s@#]+)")


def source_key(group: str, docs: list[dict]) -> str:
    """The repository a group's documents come from (owner/name), else the group's name."""
    found = _REPOSITORY.search(docs[0]["source"])
    return found[1].lower().removesuffix(".git") if found else f"group:{group}"


def boundaries_of(doc: dict) -> list[int]:
    """Start offsets of every segment after the first; ValueError where a segment is not found in order."""
    text, position, starts = doc["text"], 0, []
    for segment in doc["segments"]:
        found = text.find(segment, position)
        if not segment or segment != segment.strip() or found < 0 or text[position:found].strip():
            raise ValueError(f"{doc['id']}: segment not found in order: {segment[:60]!r}")
        starts.append(found)
        position = found + len(segment)
    if text[position:].strip():
        raise ValueError(f"{doc['id']}: text after the last segment")
    return starts[1:]


def main(source: Path, out: Path) -> None:
    rng = random.Random(SEED)
    files: dict[str, list[dict]] = {"dev": [], "test": []}
    rows = []
    placed: dict[str, str] = {}  # repository -> the file its first group went to
    by_family: dict[str, dict[str, list[dict]]] = {}
    for family in FAMILIES:
        path = source / f"{family}.jsonl"
        groups: dict[str, list[dict]] = defaultdict(list)
        for line in path.read_text(encoding="utf-8").split("\n"):
            if line.strip():
                doc = json.loads(line)
                groups[doc["group"]].append(doc)
        by_family[family] = groups
    families_of: dict[str, set[str]] = defaultdict(set)
    for family, groups in by_family.items():
        for group, docs in groups.items():
            families_of[source_key(group, docs)].add(family)
    # families with fewest sources first: they have least room to balance a repository placed for them
    for family, groups in sorted(by_family.items(), key=lambda item: len(item[1])):
        order = sorted(groups)
        rng.shuffle(order)
        counts = {(name, written): 0 for name in files for written in (False, True)}
        stats = {name: {"docs": 0, "boundaries": 0, "groups": 0} for name in files}
        for group in order:
            key = source_key(group, groups[group])
            shared = len(families_of[key]) > 1
            written = groups[group][0]["source"] == "written"
            balanced = "dev" if counts["dev", written] <= counts["test", written] else "test"
            name = (shared and placed.get(key)) or balanced
            if shared:
                placed.setdefault(key, name)
            counts[name, written] += len(groups[group])
            stats[name]["groups"] += 1
            for doc in groups[group]:
                boundaries = boundaries_of(doc)
                stats[name]["docs"] += 1
                stats[name]["boundaries"] += len(boundaries)
                files[name].append(
                    {
                        "id": doc["id"],
                        "family": family,
                        "source": doc["source"],
                        "licence": doc["licence"],
                        "text": doc["text"],
                        "boundaries": boundaries,
                        "pre_annotated": None,
                        "annotators": doc["annotators"],
                    }
                )
        rows.append((family, stats))
    out.mkdir(parents=True, exist_ok=True)
    for name, docs in files.items():
        lines = [json.dumps(doc, ensure_ascii=False) for doc in docs]
        (out / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    table = [
        "| family | dev docs | dev boundaries | dev sources | test docs | test boundaries | test sources |"
    ]
    table.append("|---|---|---|---|---|---|---|")
    for family, stats in sorted(rows, key=lambda row: FAMILIES.index(row[0])):
        dev, test = stats["dev"], stats["test"]
        table.append(
            f"| {family} | {dev['docs']} | {dev['boundaries']} | {dev['groups']} "
            f"| {test['docs']} | {test['boundaries']} | {test['groups']} |"
        )
    totals = {name: (len(docs), sum(len(d["boundaries"]) for d in docs)) for name, docs in files.items()}
    table.append(
        f"| all | {totals['dev'][0]} | {totals['dev'][1]} | | {totals['test'][0]} | {totals['test'][1]} | |"
    )
    (out / "SPLIT.md").write_text(
        f"# The split (seed {SEED}, drawn by `training/realworld_split.py`)\n\n" + "\n".join(table) + "\n",
        encoding="utf-8",
    )
    print("\n".join(table))


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
