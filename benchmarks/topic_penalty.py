"""Choose how the topic segmenter estimates the number of sections, by the rule written beforehand.

    python -m segmenter.bench.topic_penalty --data ../shared/data --out benchmarks/results/topics-penalty

The rule (`benchmarks/results/topics-penalty/rule.md`): six ways of sizing the least-dispersion
partition (a flat penalty per section; one growing with the square root of the length, with the length,
or with its 0.75th power; a target section length; the larger of the flat penalty and one growing with
the length; round 2 added the last two), each over a grid, scored by Pk on the topic corpus's dev file (three
genres, end to end from raw text, over words) with Choi 3-5 and 6-8 as a constraint. Sentence vectors are
computed once per document and every setting partitions the same vectors. Writes selection.json and
selection.md. Only the dev file and the two Choi subsets are read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import click
import numpy as np
from tqdm import tqdm

from segmenter.bench.topic_data import (
    TOPIC_GENRES,
    data_dir,
    read_choi,
    read_topic_corpus,
    topic_corpus_file,
)
from segmenter.bench.topic_metrics import scores
from segmenter.bench.topics import even, word_index
from segmenter.topics.partition import optimal_partition

CHOICE_SUBSETS = ("3-5", "6-8")
GRIDS = {
    "A": (1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32),
    "B": (0.5, 0.75, 1, 1.5, 2, 3, 4, 6, 8, 12),
    "C": (0.5, 0.75, 1, 1.5, 2, 3, 4, 6, 8, 12),
    "D": (8, 12, 16, 24, 32, 48, 64, 96),
    "E": (0.5, 0.75, 1, 1.25, 1.5, 2, 3),
    "F": (1, 1.25, 1.5, 2),
}
FORMS = {
    "A": "flat penalty c x spread",
    "B": "penalty c x spread x sqrt(n / 50)",
    "C": "penalty c x spread x n / 50",
    "D": "max(1, round(n / L)) sections",
    "E": "penalty spread x max(1.5, x n / 50)",
    "F": "penalty c x spread x (n / 50)^0.75",
}
TODAY = ("A", 1.5)
CHOI_SLACK = 0.010
TIE = 0.003


def starts_for(option: str, value: float) -> Callable[[np.ndarray], list[int]]:
    """function(vectors (S, D)) -> section starts, for one setting of one option."""
    if option == "D":
        return lambda v: optimal_partition(v, n_sections=max(1, round(len(v) / value)))
    if option == "E":
        return lambda v: optimal_partition(v, penalty=max(1.5, value * len(v) / 50))
    exponent = {"A": 0.0, "B": 0.5, "C": 1.0, "F": 0.75}[option]
    return lambda v: optimal_partition(v, penalty=value * (len(v) / 50) ** exponent)


def prepare(data: Path):
    """Vectors and scoring of every dev document and Choi choice document, computed once."""
    from segmenter.topics.segmenter import TopicSegmenter

    topics = TopicSegmenter()
    cases = []  # (task, vectors (S, D), score(starts) -> (pk, wd), gold section count)
    for doc in tqdm(read_topic_corpus(topic_corpus_file("dev")), desc="dev documents"):
        spans = topics.segmenter.segment(doc.text)
        to_word, n_words = word_index(doc.text)
        reference = sorted({to_word(offset) for offset in doc.starts} - {0})

        def score(starts, spans=spans, to_word=to_word, n_words=n_words, reference=reference):
            hypothesis = sorted({to_word(spans[i].start) for i in starts} - {0})
            return scores(reference, hypothesis, n_words)

        cases.append((doc.genre, topics.vectors([s.text for s in spans]), score, len(doc.starts) + 1))
    for subset in CHOICE_SUBSETS:
        for doc in tqdm(read_choi(subset, data), desc=f"Choi {subset}"):

            def score(starts, doc=doc):
                return scores(doc.starts, starts, len(doc.sentences))

            cases.append((f"choi-{subset}", topics.vectors(list(doc.sentences)), score, len(doc.starts) + 1))
    return cases


def evaluate(cases, function) -> dict[str, dict[str, float]]:
    """Per task: mean Pk, mean WindowDiff and mean number of sections of `function`'s starts."""
    by_task: dict[str, list[tuple[float, float, int]]] = {}
    for task, vectors, score, sections in cases:
        starts = function(vectors, sections)
        by_task.setdefault(task, []).append((*score(starts), len(starts) + 1))
    return {
        task: {
            "pk": float(np.mean([r[0] for r in rows])),
            "windowdiff": float(np.mean([r[1] for r in rows])),
            "sections": float(np.mean([r[2] for r in rows])),
            "documents": len(rows),
        }
        for task, rows in by_task.items()
    }


def objective(result: dict[str, dict[str, float]]) -> float:
    return float(np.mean([result[genre]["pk"] for genre in TOPIC_GENRES]))


def choose(results: dict[tuple[str, float], dict]) -> tuple[str, float]:
    """The rule: admissible by Choi, lowest objective, ties (within TIE) to the earlier option and the
    setting nearest the middle of its grid."""
    today = results[TODAY]
    admissible = {
        key: result
        for key, result in results.items()
        if all(result[f"choi-{s}"]["pk"] <= today[f"choi-{s}"]["pk"] + CHOI_SLACK for s in CHOICE_SUBSETS)
    }
    best = min(objective(r) for r in admissible.values())
    close = [key for key, r in admissible.items() if objective(r) <= best + TIE]

    def preference(key):
        option, value = key
        grid = GRIDS[option]
        return (option, abs(grid.index(value) - (len(grid) - 1) / 2), objective(admissible[key]))

    return min(close, key=preference)


def markdown(results, baselines, chosen) -> str:
    tasks = [*TOPIC_GENRES, *(f"choi-{s}" for s in CHOICE_SUBSETS)]
    lines = [
        "| option | setting | objective | " + " | ".join(f"{t} Pk / WD / sections" for t in tasks) + " |",
        "|---" * (len(tasks) + 3) + "|",
    ]

    def row(label, setting, result, mark=""):
        cells = [
            f"{result[t]['pk']:.3f} / {result[t]['windowdiff']:.3f} / {result[t]['sections']:.1f}"
            for t in tasks
        ]
        return f"| {mark}{label}{mark} | {setting} | {objective(result):.3f} | " + " | ".join(cells) + " |"

    for (option, value), result in results.items():
        mark = "**" if (option, value) == chosen else ""
        lines.append(row(f"{option}: {FORMS[option]}", value, result, mark))
    for name, result in baselines.items():
        lines.append(row(name, "-", result))
    gold = {t: results[TODAY][t] for t in tasks}
    lines.append("")
    lines.append(f"Chosen: {chosen[0]} ({FORMS[chosen[0]]}) at {chosen[1]}. Gold sections per document: ")
    lines[-1] += ", ".join(f"{t} {baselines['even:known'][t]['sections']:.1f}" for t in gold) + "."
    return "\n".join(lines) + "\n"


@click.command()
@click.option("--data", default=None, help="gold data folder with choi2000/ [default: ../shared/data]")
@click.option("--out", type=click.Path(file_okay=False), required=True)
def main(data, out) -> None:
    """Run every setting of the rule on dev and Choi 3-5 / 6-8; write the table and the choice."""
    cases = prepare(data_dir(data))
    results = {}
    for option, grid in GRIDS.items():
        for value in grid:
            function = starts_for(option, value)
            results[(option, value)] = evaluate(cases, lambda v, _, f=function: f(v))
    baselines = {
        "none (one section)": evaluate(cases, lambda v, _: []),
        "even:known": evaluate(cases, lambda v, sections: even(len(v), sections)),
    }
    chosen = choose(results)
    out_path = Path(out)
    out_path.mkdir(parents=True, exist_ok=True)
    record = {
        "command": f"python -m segmenter.bench.topic_penalty --out {out}",
        "chosen": {"option": chosen[0], "form": FORMS[chosen[0]], "value": chosen[1]},
        "results": [
            {"option": o, "value": v, "objective": objective(r), "tasks": r} for (o, v), r in results.items()
        ],
        "baselines": baselines,
    }
    (out_path / "selection.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    table = markdown(results, baselines, chosen)
    (out_path / "selection.md").write_text(table, encoding="utf-8")
    click.echo(table, nl=False)


if __name__ == "__main__":
    main()
