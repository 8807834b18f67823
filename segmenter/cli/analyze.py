"""`segmenter analyze`: the click command that runs the attention-head analysis and writes the report.

Listed by the main group and imported when it runs (`segmenter.cli.lazy`). Library errors become
one-line messages (`click.ClickException`, exit 1); bad option values are usage errors (exit 2).
Leaves out: the analysis.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from segmenter.analysis.params import AnalysisParams
from segmenter.errors import ConfigError, SegmenterError
from segmenter.extras import require

DEFAULT_DATASET = "ewt-dev"
DEFAULT_RESAMPLES = AnalysisParams.bootstrap_resamples


def load_documents(spec: str, max_docs: int | None):
    """(dataset name, documents) of a `segmenter bench` dataset spec, cut to the first `max_docs`."""
    from segmenter.gold.specs import load_dataset

    dataset = load_dataset(spec).head(max_docs)
    return dataset.name, list(dataset.documents)


def command_line(model, dataset, max_docs, top_percent, out, probe, resamples=DEFAULT_RESAMPLES) -> str:
    """The shell command that reproduces a run, recorded in heads.json and report.md."""
    parts = ["segmenter", "analyze"]
    if model is not None:
        parts += ["--model", model]
    parts += ["--dataset", dataset]
    if max_docs is not None:
        parts += ["--max-docs", str(max_docs)]
    parts += ["--top-percent", f"{top_percent:g}"]
    if resamples != DEFAULT_RESAMPLES:
        parts += ["--resamples", str(resamples)]
    if not probe:
        parts.append("--no-probe")
    parts += ["--out", str(out)]
    return shlex.join(parts)


@click.command("analyze")
@click.option(
    "--model",
    default=None,
    help="HF id or local path of a BERT-family model [default: the packaged all-MiniLM-L6-v2]",
)
@click.option(
    "--dataset",
    "dataset_spec",
    default=DEFAULT_DATASET,
    show_default=True,
    help="dataset spec as in `segmenter bench`: ewt-dev, ewt-test, golden-rules, conllu:PATH or golden:PATH",
)
@click.option(
    "--max-docs", type=click.IntRange(min=1), default=None, help="analyze only the first N documents"
)
@click.option(
    "--top-percent",
    type=click.FloatRange(0, 100, min_open=True),
    default=1.0,
    show_default=True,
    help="share of each text's token pairs kept as high-similarity pairs, per head",
)
@click.option(
    "--resamples",
    type=click.IntRange(min=100),
    default=DEFAULT_RESAMPLES,
    show_default=True,
    help="bootstrap resamples of the documents behind each claim's 95% interval",
)
@click.option(
    "--probe/--no-probe", default=True, show_default=True, help="train the per-layer boundary probe"
)
@click.option("--device", default="cpu", show_default=True, help="torch device for the encoder")
@click.option("--progress/--no-progress", default=True, show_default=True, help="progress bars on stderr")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="folder for heads.json, the PNG figures and report.md (created)",
)
def analyze(model, dataset_spec, max_docs, top_percent, resamples, probe, device, progress, out):
    """Attention-head analysis of a BERT-family encoder on gold sentences, testing the paper's claims.

    Writes heads.json (every statistic and parameter, and the paper's claims as holds / does not hold /
    undecided, from 95% bootstrap intervals over the documents), PNG figures and report.md into OUT.
    """
    from segmenter.analysis.analyze import run_analysis
    from segmenter.analysis.report import write_report
    from segmenter.encoder.torch.encoder import Encoder

    try:
        params = AnalysisParams(top_percent=top_percent, probe=probe, bootstrap_resamples=resamples)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    try:
        for module in (
            ("matplotlib", "scipy", "sklearn") if probe else ("matplotlib", "scipy")
        ):  # before the encoder runs
            require(module, "analysis", "segmenter analyze")
        name, documents = load_documents(dataset_spec, max_docs)
        encoder = Encoder(model, device=device)
        analysis = run_analysis(encoder, documents, params, dataset=name, progress=progress)
        analysis.heads["command"] = command_line(
            model, dataset_spec, max_docs, top_percent, out, probe, resamples
        )
        paths = write_report(analysis, out)
    except SegmenterError as exc:  # a missing [analysis] extra too (MissingExtraError)
        raise click.ClickException(str(exc)) from exc
    for claim in analysis.heads["claims"]:
        click.echo(f"{claim['claim']}: {claim['verdict']} ({claim_numbers(claim)})")
    click.echo(f"wrote {paths['heads']} and {paths['report']}")


def claim_numbers(claim: dict) -> str:
    """A claim's numbers for the summary line: value, interval and threshold of each condition.

    >>> claim_numbers({"n_documents": 9, "confidence": 0.95, "conditions": [{"quantity": "ratio",
    ...     "value": 1.07, "interval": [0.98, 1.1], "side": "<", "threshold": 1.0}]})
    'ratio 1.070, 95% interval [0.980, 1.100], needs < 1 (9 documents)'
    """
    parts = []
    for condition in claim["conditions"]:
        value, interval = condition["value"], condition["interval"]
        text = f"{condition['quantity']} {'n/a' if value is None else f'{value:.3f}'}"
        if interval is not None:
            text += f", {100 * claim['confidence']:g}% interval [{interval[0]:.3f}, {interval[1]:.3f}]"
        parts.append(f"{text}, needs {condition['side']} {condition['threshold']:g}")
    sample = f" ({claim['n_documents']} documents)" if claim.get("n_documents") is not None else ""
    return "; ".join(parts) + sample
