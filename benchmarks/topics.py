"""`segmenter bench-topics`: topic segmentation on real documents, Choi (2000) set 1 and UD concatenations.

    segmenter bench-topics --data ../shared/data --out benchmarks/results/topics

Every system in one run, on the same inputs. Choi documents come as sentences (one per line), so
systems read those sentences and are scored over them. The other tasks are raw text: the topic corpus's
test file (`data/topics/`: research articles, book chapters, meetings; `--split dev` for its dev file)
and the UD test concatenations (`topic_data.ud_concatenations`). Our sentence segmenter cuts each raw
text once (timed), every system reads those sentences, and each is scored over the text's
whitespace-separated words, so sentence errors count; a raw task's chars/s adds the sentence step to
each system's own time. Pk and WindowDiff come from NLTK (`topic_metrics`), one value
per document, averaged per subset.

Systems: `attention` (ours, `TopicSegmenter` at its default sensitivity) and `attention:known` (told
the true number of sections), NLTK's TextTiling (sentences as its paragraphs, stopwords from
scikit-learn, NLTK's stopword corpus needs a download), `c99` / `c99:known` (`segmenter.bench.c99`),
`even:known` (the true number of sections, evenly spaced) and `none` (one section).
Writes results.json, results.md and similarity_curve.png under --out.
"""

from __future__ import annotations

import bisect
import json
import platform
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import click
import numpy as np

from segmenter.bench.c99 import c99
from segmenter.bench.topic_data import (
    CHOI_SUBSETS,
    TOPIC_GENRES,
    RawDocument,
    data_dir,
    read_choi,
    read_topic_corpus,
    topic_corpus_file,
    ud_concatenations,
)
from segmenter.bench.topic_metrics import scores
from segmenter.errors import MissingExtraError
from segmenter.extras import require, require_installed

SYSTEMS = ("attention", "attention:known", "texttiling", "c99", "c99:known", "even:known", "none")
UD_TASK = "ud-test"
COMPUTE_NOTHING = ("even:known", "none")


@dataclass
class Case:
    """What a system reads: sentences, the number of sections when it is told, and the text length."""

    id: str
    sentences: list[str]
    sections: int
    chars: int


def even(n: int, sections: int) -> list[int]:
    """Starts of `sections` evenly spaced sections over `n` units."""
    return sorted({round(i * n / sections) for i in range(1, sections)} - {0, n})


def texttiling_starts(sentences: Sequence[str]) -> tuple[list[int], bool]:
    """NLTK TextTiling's section starts over `sentences` (each one of its paragraphs), and whether it
    ran (it refuses texts shorter than its windows: then one section)."""
    from nltk.tokenize.texttiling import TextTilingTokenizer
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    text = "\n\n".join(sentences)
    try:
        pieces = TextTilingTokenizer(stopwords=sorted(ENGLISH_STOP_WORDS)).tokenize(text)
    except ValueError:
        return [], False
    offsets = np.cumsum([0, *(len(s) + 2 for s in sentences)])[:-1]  # (S,) where each sentence starts
    starts, position = [], 0
    for piece in pieces[:-1]:  # the pieces are slices of `text`, in order, cut at paragraph breaks
        position += len(piece)
        index = int(np.searchsorted(offsets, position, side="left"))  # the first sentence not before the cut
        if 0 < index < len(sentences):
            starts.append(index)
    return sorted(set(starts)), True


def make_systems(topics) -> dict[str, Callable[[Case], list[int]]]:
    """name -> function(case) -> section starts (sentence indices)."""
    fallbacks = {"texttiling": 0}

    def tiling(case: Case) -> list[int]:
        starts, ran = texttiling_starts(case.sentences)
        fallbacks["texttiling"] += not ran
        return starts

    systems = {
        "attention": lambda c: topics.boundaries(topics.vectors(c.sentences)),
        "attention:known": lambda c: topics.boundaries(topics.vectors(c.sentences), n_topics=c.sections),
        "texttiling": tiling,
        "c99": lambda c: c99(c.sentences),
        "c99:known": lambda c: c99(c.sentences, c.sections),
        "even:known": lambda c: even(len(c.sentences), c.sections),
        "none": lambda c: [],
    }
    return systems, fallbacks


def word_index(text: str) -> Callable[[int], int]:
    """Maps a character offset of `text` to the index of the whitespace-separated word holding it."""
    starts = [m.start() for m in re.finditer(r"\S+", text)]
    return lambda offset: max(0, bisect.bisect_right(starts, offset) - 1), len(starts)


def raw_tasks(data: Path, samples: int, split: str) -> dict[str, list[RawDocument]]:
    """The raw-text tasks: the UD test concatenations, and the topic corpus's `split` file per genre."""
    tasks = {UD_TASK: ud_concatenations(data, samples=samples)}
    corpus = read_topic_corpus(topic_corpus_file(split))
    for genre in TOPIC_GENRES:
        tasks[f"{genre}-{split}"] = [doc for doc in corpus if doc.genre == genre]
    return tasks


def run(data: Path, out: Path, systems: Sequence[str], limit: int | None, samples: int, split: str) -> dict:
    from tqdm import tqdm

    from segmenter.topics.segmenter import TopicSegmenter

    topics = TopicSegmenter()
    functions, fallbacks = make_systems(topics)
    tasks: dict[str, list] = {}
    for subset in CHOI_SUBSETS:
        docs = read_choi(subset, data)[:limit]
        tasks[f"choi-{subset}"] = [
            (Case(d.id, list(d.sentences), len(d.starts) + 1, len(" ".join(d.sentences))), d.starts)
            for d in docs
        ]
    raw = {task: docs[:limit] for task, docs in raw_tasks(data, samples, split).items()}
    topics.segmenter.segment(raw[UD_TASK][0].text)  # warm-up: first calls are slow
    sentence_seconds: dict[str, float] = {}
    for task, docs in raw.items():
        started = time.perf_counter()
        sentence_spans = [topics.segmenter.segment(doc.text) for doc in tqdm(docs, desc=f"{task} sentences")]
        sentence_seconds[task] = time.perf_counter() - started
        tasks[task] = [
            (Case(doc.id, [s.text for s in spans], len(doc.starts) + 1, len(doc.text)), (doc, spans))
            for doc, spans in zip(docs, sentence_spans, strict=True)
        ]
    topics.boundaries(topics.vectors(tasks["choi-3-5"][0][0].sentences))  # warm-up: first calls are slow
    results: dict[str, dict] = {}
    predictions: dict[str, dict[str, list[int]]] = {}
    for name in systems:
        results[name] = {}
        for task, items in tasks.items():
            pks, wds, counts, seconds = [], [], [], 0.0
            for case, gold in tqdm(items, desc=f"{name} {task}", leave=False):
                started = time.perf_counter()
                starts = functions[name](case)
                seconds += time.perf_counter() - started
                counts.append(len(starts) + 1)
                if task in raw:
                    doc, spans = gold
                    to_word, n_words = word_index(doc.text)
                    hyp = sorted({to_word(spans[i].start) for i in starts} - {0})
                    ref = sorted({to_word(offset) for offset in doc.starts} - {0})
                    pk, wd = scores(ref, hyp, n_words)
                    predictions.setdefault(name, {})[case.id] = [spans[i].start for i in starts]
                else:
                    pk, wd = scores(gold, starts, len(case.sentences))
                pks.append(pk)
                wds.append(wd)
            chars = sum(case.chars for case, _ in items)
            seconds += sentence_seconds.get(task, 0.0)
            results[name][task] = {
                "pk": float(np.mean(pks)),
                "windowdiff": float(np.mean(wds)),
                "n_docs": len(items),
                "mean_sections": float(np.mean(counts)),
                "gold_sections": float(np.mean([case.sections for case, _ in items])),
                "seconds": seconds,
                "chars_per_s": chars / seconds if seconds > 0 else None,
            }
    record = {
        "command": f"segmenter bench-topics --split {split} --out {out}",
        "environment": {"python": platform.python_version(), "machine": platform.machine()},
        "tasks": {task: len(items) for task, items in tasks.items()},
        "raw_tasks": list(raw),
        "sentence_seconds": sentence_seconds,
        "texttiling_fallbacks": fallbacks["texttiling"],
        "results": results,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    (out / "results.md").write_text(markdown(record), encoding="utf-8")
    if "attention" in systems:
        plot_curve(topics, tasks[UD_TASK][0], predictions["attention"], out / "similarity_curve.png",
                   "ten UD test excerpts joined (Choi's construction)")  # fmt: skip
        book = f"book-{split}"
        if tasks.get(book):
            plot_curve(topics, tasks[book][0], predictions["attention"], out / "similarity_curve_book.png",
                       "a chapter of the Rust book, its pages as sections")  # fmt: skip
    return record


def markdown(record: dict) -> str:
    """Two tables: Pk / WindowDiff and sections per document on the real documents; Pk / WindowDiff
    and chars/s on Choi and the UD concatenations."""
    results = record["results"]
    real = [t for t in record["raw_tasks"] if t != UD_TASK]
    synthetic = [t for t in record["tasks"] if t not in real]
    first = next(iter(results.values()))
    lines = [
        "| system | " + " | ".join(f"{t} Pk / WD" for t in real) + " | sections per document |",
        "|---" * (len(real) + 2) + "|",
    ]
    for name, by_task in results.items():
        cells = [f"{by_task[t]['pk']:.3f} / {by_task[t]['windowdiff']:.3f}" for t in real]
        sections = " / ".join(f"{by_task[t]['mean_sections']:.1f}" for t in real)
        lines.append(f"| {name} | {' | '.join(cells)} | {sections} |")
    gold = " / ".join(f"{first[t]['gold_sections']:.1f}" for t in real)
    lines += [f"| (gold) | {' | '.join('-' for _ in real)} | {gold} |", ""]
    lines += [
        "| system | "
        + " | ".join(f"{t} Pk / WD" for t in synthetic)
        + f" | chars/s (Choi) | chars/s ({UD_TASK}, with sentences) |",
        "|---" * (len(synthetic) + 3) + "|",
    ]
    for name, by_task in results.items():
        cells = [f"{by_task[t]['pk']:.3f} / {by_task[t]['windowdiff']:.3f}" for t in synthetic]
        if name in COMPUTE_NOTHING:  # their chars/s measure a loop, not a method
            lines.append(f"| {name} | {' | '.join(cells)} | - | - |")
            continue
        choi = [by_task[t] for t in synthetic if t.startswith("choi")]
        choi_rate = sum(r["chars_per_s"] * r["seconds"] for r in choi) / sum(r["seconds"] for r in choi)
        ud = by_task[UD_TASK]["chars_per_s"]
        lines.append(f"| {name} | {' | '.join(cells)} | {choi_rate:,.0f} | {ud:,.0f} |")
    return "\n".join(lines) + "\n"


def plot_curve(topics, item, predicted: dict[str, list[int]], path: Path, title: str) -> None:
    """Similarity across each sentence gap of one raw-text document, with gold and predicted topic starts."""
    matplotlib = require("matplotlib", "bench", "the similarity figure of segmenter bench-topics")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from segmenter.topics.partition import gap_similarity

    case, (doc, spans) = item
    curve = gap_similarity(topics.vectors(case.sentences), window=3)  # (S-1,): gap g before sentence g+1
    starts = [s.start for s in spans]
    fig, ax = plt.subplots(figsize=(10, 3.2))
    ax.plot(np.arange(1, len(starts)), curve, color="0.3", lw=1.2, label="similarity across the gap")
    for i, offset in enumerate(doc.starts):
        gold = bisect.bisect_left(starts, offset)
        ax.axvline(
            gold - 0.1, color="tab:green", lw=2, alpha=0.7, label="gold topic start" if i == 0 else None
        )
    for i, offset in enumerate(predicted.get(case.id, [])):
        ax.axvline(starts.index(offset) + 0.1, color="tab:red", ls="--", lw=1.5,
                   label="predicted (attention)" if i == 0 else None)  # fmt: skip
    ax.set_xlabel("sentence")
    ax.set_ylabel("cosine, 3 sentences each side")
    ax.set_title(f"{case.id}: {title}")
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


@click.command("bench-topics")
@click.option("--data", default=None, help="gold data folder [default: $SEGMENTER_DATA or ../shared/data]")
@click.option("--out", type=click.Path(file_okay=False), required=True, help="folder for the results")
@click.option(
    "--system", "systems", multiple=True, type=click.Choice(SYSTEMS), help="repeatable [default: all]"
)
@click.option("--limit-docs", type=click.IntRange(min=1), default=None, help="first N documents per task")
@click.option("--ud-samples", type=click.IntRange(min=1), default=100, show_default=True)
@click.option(
    "--split", type=click.Choice(["test", "dev"]), default="test", show_default=True,
    help="which file of the topic corpus of real documents",
)  # fmt: skip
def bench_topics(data, out, systems, limit_docs, ud_samples, split) -> None:
    """Topic segmentation: Pk and WindowDiff on real documents, Choi (2000) set 1 and UD concatenations."""
    try:  # found, not imported: the systems are timed in this process
        require_installed(("nltk", "sklearn", "matplotlib"), "bench", "segmenter bench-topics")
    except MissingExtraError as exc:
        raise click.ClickException(str(exc)) from exc
    root = data_dir(data)
    if not (root / "choi2000").is_dir():
        raise click.ClickException(f"no choi2000 folder in {root}; pass --data or set SEGMENTER_DATA")
    record = run(root, Path(out), systems or SYSTEMS, limit_docs, ud_samples, split)
    click.echo(markdown(record), nl=False)


if __name__ == "__main__":
    bench_topics()
