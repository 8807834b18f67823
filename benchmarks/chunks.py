"""`segmenter bench-chunks`: retrieval over each chunker's chunks, scored as Smith and Troynikov (2024).

    segmenter bench-chunks --data ../shared/data/chunking --out benchmarks/results/chunks

Every corpus of the folder (`chunk_data.read_chunking`) is cut by a chunker into character ranges;
every chunk of every corpus and every question is embedded with the packaged all-MiniLM-L6-v2
(`SentenceVectors`: mean-pooled, unit length, 256 tokens, as sentence-transformers uses it), and each
question retrieves its k nearest chunks among all corpora together by exact cosine. The scores
(`chunk_metrics`) are means over questions at k = 5, k = 10 and k = "min" (the number of chunks that
touch the question's excerpts), in %, with 95% bootstrap intervals over questions for k = 5.

Budgets are counted in the backbone's wordpieces. Chunkers, each at every `--max-tokens`:
- `fixed`: windows of max_tokens wordpieces, each starting `max_tokens - overlap` pieces after the last
  (`--overlap`, in pieces);
- `sentences`: the default `Segmenter`'s sentences packed in order, a chunk closed before the sentence
  that would take it over the budget (a longer sentence is a chunk of its own);
- `partition`: the same sentences cut by exact dynamic programming into chunks within the budget with
  the least within-chunk squared distance of their sentence vectors to the chunk's mean, each chunk
  costing `--penalty` times the text's spread (the topic segmenter's partition, with the budget as the
  constraint): a low penalty gives small chunks that hold one topic, a high one the fewest chunks the
  budget allows, cut where the topic changes most.
A candidate for `Segmenter.chunk`, measured here before it is built into the library.
Writes results.json and results.md under --out.
"""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import click
import numpy as np

from segmenter.bench.chunk_data import ChunkingData, read_chunking
from segmenter.bench.chunk_metrics import Range, precision_omega, retrieval_scores, touching

CHUNKERS = ("fixed", "sentences", "partition")
KS = (5, 10)
BOOTSTRAP = 1000


def fixed_windows(offsets: np.ndarray, size: int, overlap: int) -> list[Range]:
    """Character ranges of windows of `size` tokens (offsets (T, 2)), each `size - overlap` after the last."""
    step = max(1, size - overlap)
    ranges = []
    for first in range(0, len(offsets), step):
        last = min(first + size, len(offsets)) - 1
        ranges.append((int(offsets[first, 0]), int(offsets[last, 1])))
        if last == len(offsets) - 1:
            break
    return ranges


def packed(pieces: Sequence[Range], tokens: Sequence[int], size: int) -> list[Range]:
    """Consecutive `pieces` (ranges with their token counts) joined while the total stays within `size`."""
    ranges: list[Range] = []
    start, end, used = None, None, 0
    for (piece_start, piece_end), count in zip(pieces, tokens, strict=True):
        if start is not None and used + count > size:
            ranges.append((start, end))
            start, used = None, 0
        if start is None:
            start = piece_start
        end, used = piece_end, used + count
    if start is not None:
        ranges.append((start, end))
    return ranges


def partitioned(
    pieces: Sequence[Range], tokens: Sequence[int], vectors: np.ndarray, size: int, penalty: float
) -> list[Range]:
    """Consecutive `pieces` cut into chunks of at most `size` tokens (a piece over it alone) with the
    least within-chunk squared distance of the pieces' vectors (n, D) to their chunk's mean, each chunk
    costing `penalty` times the text's mean squared distance to its mean: exact dynamic programming."""
    from segmenter.topics.partition import _Costs

    n = len(pieces)
    if n == 0:
        return []
    costs = _Costs(vectors)
    spread = max((costs.norms[n] - costs.squares[n] / n) / n, 1e-12)
    cumulative = np.concatenate([[0], np.cumsum(tokens)])  # (n+1,)
    best = np.full(n + 1, np.inf)
    best[0] = 0.0
    back = np.zeros(n + 1, dtype=np.int64)
    for end in range(1, n + 1):
        first = int(
            np.searchsorted(cumulative, cumulative[end] - size, side="left")
        )  # widest start in budget
        first = min(first, end - 1)  # a piece over the budget is a chunk of its own
        total = best[first:end] + costs.ending_at(end, first, end - 1) + penalty * spread
        pick = int(np.argmin(total))
        best[end], back[end] = total[pick], first + pick
    cuts, end = [], n
    while end > 0:
        cuts.append(end)
        end = int(back[end])
    edges = [0, *sorted(cuts)]
    return [(pieces[a][0], pieces[b - 1][1]) for a, b in zip(edges, edges[1:], strict=False)]


def make_chunker(
    name: str, size: int, overlap: int, tokenize, segmenter, vectors=None, penalty: float = 1.0
) -> Callable[[str], list[Range]]:
    """function(text) -> chunk ranges, for one chunker at one budget."""
    if name == "fixed":
        return lambda text: fixed_windows(tokenize(text).offsets, size, overlap)
    if name == "partition":

        def partition(text: str) -> list[Range]:
            spans = segmenter.segment(text)
            pieces, counts = [(s.start, s.end) for s in spans], [len(tokenize(s.text)) for s in spans]
            return partitioned(pieces, counts, vectors([s.text for s in spans]), size, penalty)

        return partition

    def sentences(text: str) -> list[Range]:
        spans = segmenter.segment(text)
        return packed([(s.start, s.end) for s in spans], [len(tokenize(s.text)) for s in spans], size)

    return sentences


def bootstrap(values: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """95% interval of the mean of `values` over BOOTSTRAP resamples."""
    draws = rng.integers(0, len(values), size=(BOOTSTRAP, len(values)))
    means = values[draws].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def evaluate(data: ChunkingData, chunks: dict[str, list[Range]], vectors, count_tokens) -> dict:
    """Scores of one chunking of every corpus (`chunks`: corpus -> ranges)."""
    owners = [name for name, ranges in chunks.items() for _ in ranges]  # (M,)
    ranges = [r for name in chunks for r in chunks[name]]  # (M,)
    texts = [data.corpora[name][start:end] for name, (start, end) in zip(owners, ranges, strict=True)]
    chunk_vectors = vectors(texts)  # (M, D) unit rows
    question_vectors = vectors([q.text for q in data.questions])  # (Q, D)
    similarity = question_vectors @ chunk_vectors.T  # (Q, M)
    order = np.argsort(-similarity, axis=1, kind="stable")  # (Q, M) nearest first
    rows: dict[str, list[float]] = {}
    for q, question in enumerate(data.questions):
        near = touching(question.references, chunks[question.corpus])
        for label, k in (*((str(k), k) for k in KS), ("min", max(1, len(near)))):
            picked = order[q, :k]
            scores = retrieval_scores(
                question.references, [(owners[i] == question.corpus, ranges[i]) for i in picked]
            )
            for metric in ("recall", "precision", "iou"):
                rows.setdefault(f"{metric}@{label}", []).append(100 * getattr(scores, metric))
        rows.setdefault("precision_omega", []).append(100 * precision_omega(question.references, near))
    rng = np.random.default_rng(0)
    result = {name: float(np.mean(values)) for name, values in rows.items()}
    for name in ("recall@5", "iou@5"):
        result[f"{name} interval"] = bootstrap(np.asarray(rows[name]), rng)
    result["chunks"] = len(ranges)
    result["mean_tokens"] = float(np.mean([count_tokens(t) for t in texts]))
    return result


def run(
    data_folder: Path,
    out: Path,
    chunkers: Sequence[str],
    budgets: Sequence[int],
    overlap: int,
    penalties: Sequence[float] = (1.0,),
) -> dict:
    from segmenter.api import Segmenter
    from segmenter.topics.sentence_vectors import SentenceVectors

    data = read_chunking(data_folder)
    vectors = SentenceVectors()
    tokenize = vectors.encoder.tokenize
    segmenter = Segmenter() if set(chunkers) & {"sentences", "partition"} else None
    results = []
    settings = [
        (name, size, penalty)
        for name in chunkers
        for size in budgets
        for penalty in (penalties if name == "partition" else (None,))
    ]
    for name, size, penalty in settings:
        chunker = make_chunker(
            name, size, overlap if name == "fixed" else 0, tokenize, segmenter, vectors, penalty or 0.0
        )
        started = time.perf_counter()
        chunks = {corpus: chunker(text) for corpus, text in data.corpora.items()}
        seconds = time.perf_counter() - started
        scores = evaluate(data, chunks, vectors, lambda t: len(tokenize(t)))
        label = f"{name} {size}" + (f"/{overlap}" if name == "fixed" and overlap else "")
        label += f" penalty {penalty}" if penalty is not None else ""
        results.append({"chunker": label, "seconds": seconds, **scores})
        click.echo(f"{label}: recall@5 {scores['recall@5']:.1f}, IoU@5 {scores['iou@5']:.1f}", err=True)
    record = {
        "command": f"segmenter bench-chunks --data {data_folder} --out {out}",
        "environment": {"python": platform.python_version(), "machine": platform.machine()},
        "questions": len(data.questions),
        "corpora": {name: len(text) for name, text in data.corpora.items()},
        "results": results,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    (out / "results.md").write_text(markdown(record), encoding="utf-8")
    return record


COLUMNS = (
    "chunker", "chunks", "mean tokens", "recall@5", "precision@5", "precision_Ω", "IoU@5", "recall@10",
    "IoU@10", "recall@min", "IoU@min", "chunking s",
)  # fmt: skip


def markdown(record: dict) -> str:
    """One row per chunker and budget: k = 5 with intervals, precision_Omega, k = 10 and k = min."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|---" * len(COLUMNS) + "|"]
    for r in record["results"]:
        low, high = r["recall@5 interval"]
        iou_low, iou_high = r["iou@5 interval"]
        cells = [
            r["chunker"], f"{r['chunks']:,}", f"{r['mean_tokens']:.0f}",
            f"{r['recall@5']:.1f} [{low:.1f}, {high:.1f}]", f"{r['precision@5']:.1f}",
            f"{r['precision_omega']:.1f}", f"{r['iou@5']:.1f} [{iou_low:.1f}, {iou_high:.1f}]",
            f"{r['recall@10']:.1f}", f"{r['iou@10']:.1f}", f"{r['recall@min']:.1f}", f"{r['iou@min']:.1f}",
            f"{r['seconds']:.1f}",
        ]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


@click.command("bench-chunks")
@click.option(
    "--data", type=click.Path(file_okay=False), default=None,
    help="folder of corpora/*.md and questions.csv [default: ../shared/data/chunking]",
)  # fmt: skip
@click.option("--out", type=click.Path(file_okay=False), required=True, help="folder for the results")
@click.option(
    "--chunker", "chunkers", multiple=True, type=click.Choice(CHUNKERS), help="repeatable [default: all]"
)
@click.option("--max-tokens", "budgets", multiple=True, type=click.IntRange(min=8),
              help="budget in wordpieces, repeatable [default: 200 and 250]")  # fmt: skip
@click.option(
    "--overlap", type=click.IntRange(min=0), default=0, show_default=True, help="fixed windows only"
)
@click.option("--penalty", "penalties", multiple=True, type=click.FloatRange(min=0),
              help="partition only, repeatable [default: 1]")  # fmt: skip
def bench_chunks(data, out, chunkers, budgets, overlap, penalties) -> None:
    """Chunking for retrieval: recall, precision and IoU of each chunker's top chunks per question."""
    from segmenter.bench.topic_data import data_dir

    folder = Path(data) if data else data_dir(None) / "chunking"
    if not (folder / "questions.csv").is_file():
        raise click.ClickException(f"no questions.csv in {folder}; pass --data")
    if overlap and any(overlap >= size for size in budgets or (200, 250)):
        raise click.ClickException("--overlap must be smaller than every --max-tokens")
    record = run(folder, Path(out), chunkers or CHUNKERS, budgets or (200, 250), overlap, penalties or (1.0,))
    click.echo(markdown(record), nl=False)


if __name__ == "__main__":
    bench_chunks()
