"""Choose the chunker's weights by the rule written before the runs (`results/chunks-selection/rule.md`).

    python -m segmenter.bench.chunk_selection --out benchmarks/results/chunks-selection

Every setting of `GRID` (PENALTY and PARAGRAPH of `segmenter.chunking.plan`) chunks the four corpora of
the shared chunking folder at each budget of `BUDGETS` (cl100k tokens), topics on, and is scored by
`segmenter bench-chunks`' metric (`chunks.evaluate`: all-MiniLM-L6-v2 in float32, exact cosine, k = 5).
The sentences of each corpus and the vector of each sentence are computed once and replayed for every
setting (`_Replayed`, `_Remembered`), and a chunk that recurs is embedded once: only the plan differs
between settings. Writes selection.json and
selection.md. Only the shared chunking folder is read.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import numpy as np

from segmenter.bench.chunk_baselines import cl100k
from segmenter.bench.chunk_data import read_chunking
from segmenter.bench.chunks import evaluate
from segmenter.bench.topic_data import data_dir

GRID = tuple((penalty, paragraph) for paragraph in (0.0, 1.0, 3.0) for penalty in (1.0, 2.0, 4.0, 16.0))
BUDGETS = (128, 256)
PUBLISHED = {"recall@5": 82.4, "iou@5": 7.2}  # the best published all-MiniLM-L6-v2 figures, k = 5
NEAR = 0.01
FILL = 0.7  # round 2: a default's mean chunk length is at least this share of max_tokens at every budget


class _ReplayedStream:
    def __init__(self, owner):
        self.owner, self.pieces = owner, []

    def feed(self, piece: str):
        self.pieces.append(piece)
        return iter(())

    def close(self):
        return iter(self.owner.spans("".join(self.pieces)))


class _Replayed:
    """A `Segmenter` whose streams give each text's spans from one real segmentation, remembered."""

    def __init__(self, segmenter):
        self.segmenter, self.known = segmenter, {}
        self.encoder, self.config = segmenter.encoder, segmenter.config
        self.gap_probabilities = segmenter.gap_probabilities

    def spans(self, text: str):
        if text not in self.known:
            self.known[text] = self.segmenter.segment(text)
        return self.known[text]

    def stream(self):
        return _ReplayedStream(self)


class _Remembered:
    """Vectors computed once per text (sentences for the topics, chunks for retrieval)."""

    def __init__(self, vectors):
        self.vectors, self.known = vectors, {}
        self.encoder, self.max_tokens = vectors.encoder, vectors.max_tokens

    def __call__(self, sentences):
        missing = sorted({s for s in sentences if s not in self.known})
        if missing:
            self.known.update(zip(missing, self.vectors(missing), strict=True))
        return np.stack([self.known[s] for s in sentences]) if sentences else self.vectors([])


def objective(scores_by_budget: list[dict]) -> float:
    """Mean over budgets of recall@5 / 82.4 + IoU@5 / 7.2."""
    return float(np.mean([sum(s[m] / PUBLISHED[m] for m in PUBLISHED) for s in scores_by_budget]))


def choose(rows: list[dict], fill: float = 0.0) -> dict:
    """The rule: among the settings whose mean chunk length is at least `fill` x max_tokens at every
    budget (round 2: FILL; round 1: any), the highest objective; within NEAR of it, PARAGRAPH 0 first,
    then the higher PENALTY."""
    rows = [r for r in rows if all(b["mean_tokens"] >= fill * b["max_tokens"] for b in r["budgets"])]
    best = max(r["objective"] for r in rows)
    near = [r for r in rows if r["objective"] >= best - NEAR]
    return min(near, key=lambda r: (r["paragraph"] != 0, -r["penalty"], -r["objective"]))


def run(folder: Path) -> dict:
    from segmenter.api import Segmenter
    from segmenter.chunking import plan
    from segmenter.chunking.chunker import Chunker
    from segmenter.topics.sentence_vectors import SentenceVectors

    data = read_chunking(folder)
    embedder = _Remembered(SentenceVectors(precision="float32"))  # a chunk found again is not embedded again
    counting = cl100k()
    segmenter, topic_vectors = _Replayed(Segmenter()), _Remembered(SentenceVectors())
    read_tokens = embedder.max_tokens - 2
    rows = []
    for penalty, paragraph in GRID:
        plan.PENALTY, plan.PARAGRAPH = penalty, paragraph
        per_budget = []
        for size in BUDGETS:
            chunker = Chunker(segmenter, max_tokens=size, tokenizer=counting.encoding, vectors=topic_vectors)
            chunks = {
                corpus: [(c.start, c.end) for c in chunker.chunk(text)]
                for corpus, text in data.corpora.items()
            }
            scores = evaluate(data, chunks, embedder, counting.count, read_tokens)
            per_budget.append({"max_tokens": size, **scores})
            click.echo(
                f"penalty {penalty} paragraph {paragraph} budget {size}: recall@5 {scores['recall@5']:.1f} "
                f"IoU@5 {scores['iou@5']:.1f} mean {scores['mean_tokens']:.0f}",
                err=True,
            )
        rows.append({"penalty": penalty, "paragraph": paragraph, "objective": objective(per_budget),
                     "budgets": per_budget})  # fmt: skip
    return {"rows": rows, "round1": choose(rows), "chosen": choose(rows, FILL)}


def markdown(record: dict) -> str:
    head = "| PENALTY | PARAGRAPH | objective | " + " | ".join(
        f"{b}: recall@5 | {b}: IoU@5 | {b}: precision_Ω | {b}: mean tokens | {b}: chunks" for b in BUDGETS
    )
    lines = [head + " |", "|---" * (3 + 5 * len(BUDGETS)) + "|"]
    chosen = record["chosen"]
    for r in record["rows"]:
        mark = "**" if (r["penalty"], r["paragraph"]) == (chosen["penalty"], chosen["paragraph"]) else ""
        cells = [f"{mark}{r['penalty']:g}{mark}", f"{mark}{r['paragraph']:g}{mark}", f"{r['objective']:.3f}"]
        for s in r["budgets"]:
            low, high = s["recall@5 interval"]
            iou_low, iou_high = s["iou@5 interval"]
            cells += [
                f"{s['recall@5']:.1f} [{low:.1f}, {high:.1f}]",
                f"{s['iou@5']:.1f} [{iou_low:.1f}, {iou_high:.1f}]",
                f"{s['precision_omega']:.1f}", f"{s['mean_tokens']:.0f}", f"{s['chunks']:,}",
            ]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    first = record["round1"]
    lines.append(
        f"\nRound 1 of the rule (rule.md) chose PENALTY {first['penalty']:g}, PARAGRAPH "
        f"{first['paragraph']:g} (objective {first['objective']:.3f}); round 2 (mean chunk length at least "
        f"{FILL:.0%} of max_tokens at both budgets) chose PENALTY {chosen['penalty']:g}, PARAGRAPH "
        f"{chosen['paragraph']:g} (objective {chosen['objective']:.3f}), in bold.\n"
    )
    return "\n".join(lines)


@click.command()
@click.option(
    "--data", default=None, help="folder of corpora/*.md and questions.csv [default: ../shared/data/chunking]"
)
@click.option("--out", type=click.Path(file_okay=False), required=True)
def main(data, out) -> None:
    folder = Path(data) if data else data_dir(None) / "chunking"
    record = {"command": f"python -m segmenter.bench.chunk_selection --out {out}", **run(folder)}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "selection.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    (out / "selection.md").write_text(markdown(record), encoding="utf-8")
    click.echo(markdown(record), nl=False)


if __name__ == "__main__":
    main()
