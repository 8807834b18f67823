"""Write an analysis to disk: heads.json, the PNG figures and report.md (claims, per-layer table, figures).

The markdown is generated from the heads.json content only, so the report and the numbers cannot drift
apart. Leaves out: computing statistics (analyze.py, stats.py) and drawing (plots.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from segmenter.analysis import plots
from segmenter.analysis.analyze import Analysis
from segmenter.errors import InputError

FIGURE_TITLES = {
    "sep_attention": "Attention to [SEP] per layer and head",
    "cls_period_attention": "Attention to [CLS] and to periods",
    "similarity_examples": "Example similarity matrices",
    "distance": "Token distance of high-similarity pairs",
    "within_sentence": "Within-sentence share per layer",
    "anchors": "Anchor tokens per head",
    "probe_f1": "Boundary-probe F1 per layer",
}


def write_report(analysis: Analysis, out: str | Path) -> dict[str, Path]:
    """heads.json, the figures and report.md in `out` (created); returns {"heads", "report"} paths."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create output folder {out}: {exc}") from exc
    heads_path = out / "heads.json"
    _write_atomic(
        heads_path, json.dumps(analysis.heads, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    )
    figures = plots.draw_all(analysis.heads, analysis.example, analysis.example_tokens, out)
    report_path = out / "report.md"
    _write_atomic(report_path, markdown(analysis.heads, figures))
    return {"heads": heads_path, "report": report_path}


def _write_atomic(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path`, then rename it over `path`."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def claims_table(claims: list[dict]) -> str:
    """The claims as a markdown table: claim | verdict | measured | value | interval | needs | evidence,
    one row per number a claim rests on (the claim's own cells on its first row)."""
    confidence = next((c["confidence"] for c in claims if c.get("confidence")), None)
    interval_header = f"{100 * confidence:g}% interval" if confidence else "interval"
    rows = [
        f"| claim | verdict | measured | value | {interval_header} | needs | evidence |",
        "|---|---|---|---|---|---|---|",
    ]
    for claim in claims:
        for index, condition in enumerate(claim["conditions"]):
            first = index == 0
            cells = [
                claim["claim"] if first else "",
                f"**{claim['verdict']}**" if first else "",
                condition["quantity"],
                _fmt(condition["value"]),
                _interval(condition["interval"]),
                f"{condition['side']} {condition['threshold']:g}: {condition['verdict']}",
                claim["evidence"] if first else "",
            ]
            rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def claims_paragraph(heads: dict) -> str:
    """How the claims' intervals and verdicts were obtained, with the sample they rest on."""
    claims = heads["claims"]
    n_documents = next((c["n_documents"] for c in claims if c.get("n_documents") is not None), None)
    if n_documents is None:
        return "No per-document records: each verdict compares the value alone with its threshold."
    params = heads["params"]
    return (
        f"Each number with its {100 * params['bootstrap_confidence']:g}% percentile bootstrap interval over "
        f"the {n_documents} analysed texts (one per document; {params['bootstrap_resamples']} resamples "
        f"drawn with replacement, seed {params['bootstrap_seed']}; each resample pooled like the full "
        "sample). A number holds when its whole interval lies on the claim's side of the threshold, does "
        "not hold when the whole interval lies on the other side, and is undecided when the interval "
        "contains the threshold; a claim holds when all its numbers hold and does not hold when any does not."
    )


def _interval(interval) -> str:
    return "n/a" if interval is None else f"[{_fmt(interval[0])}, {_fmt(interval[1])}]"


def layer_table(heads: dict) -> str:
    """Per-layer numbers: attention to [SEP]/[CLS]/periods, pair distance, within-sentence share,
    anchor uniqueness, probe F1 per condition."""
    probe = heads.get("probe_f1_by_layer") or {}
    header = ["layer", "[SEP]", "[CLS]", "periods", "mean distance", "within-sentence", "uniqueness"]
    header += [f"probe F1 {c}" for c in probe]
    rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for layer in range(heads["n_layers"]):
        cells = [
            str(layer + 1),
            _fmt(heads["sep_attention_by_layer"][layer]),
            _fmt(heads["cls_attention_by_layer"][layer]),
            _fmt(heads["period_attention_by_layer"][layer]),
            _fmt(heads["mean_pair_distance"][layer], 1),
            _fmt(heads["within_sentence_fraction"][layer]),
            _fmt(heads["anchor_uniqueness"][layer], 2),
        ]
        cells += [_fmt(scores[layer]) for scores in probe.values()]
        rows.append("| " + " | ".join(cells) + " |")
    chance = heads.get("chance", {})
    cells = ["random pairs", "", "", "", _fmt(chance.get("mean_pair_distance"), 1)]
    cells += [_fmt(chance.get("within_sentence_fraction")), ""] + [""] * len(probe)
    rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def markdown(heads: dict, figures: dict[str, str]) -> str:
    """The whole report.md."""
    params = heads["params"]
    lines = [
        f"# Attention-head analysis: {heads['model']} on {heads['dataset'] or 'the given documents'}",
        "",
        _provenance(heads),
        "",
        "## Claims",
        "",
        claims_paragraph(heads),
        "",
        claims_table(heads["claims"]),
        "",
        "## Per layer",
        "",
        f"Attention columns: mean attention mass per query token, averaged over heads. Mean distance and "
        f"within-sentence share: over the top {params['top_percent']:g}% most similar head-vector pairs "
        "(raw scalar product) of every head. Uniqueness: share of heads whose anchor token no other head "
        "of the layer shares. The last row gives the same numbers for uniformly random pairs.",
        "",
        layer_table(heads),
        "",
    ]
    lines += _variants(heads)
    lines += _repetition_section(heads)
    lines += ["## Figures", ""]
    for key, name in figures.items():
        lines += [f"### {FIGURE_TITLES.get(key, key)}", "", f"![{FIGURE_TITLES.get(key, key)}]({name})", ""]
    lines += _parameter_section(heads)
    return "\n".join(lines).rstrip() + "\n"


def _variants(heads: dict) -> list[str]:
    """The per-layer numbers under the other definitions recorded in heads.json (cosine, text-weighted)."""
    lines = []
    variants = (
        ("With cosine instead of the raw scalar product", heads.get("cosine")),
        ("Averaged over texts instead of pooled over pairs", heads.get("text_weighted")),
    )
    for title, block in variants:
        if not block:
            continue
        text = f"{title} (layers 1 to {heads['n_layers']}): mean distance "
        text += ", ".join(_fmt(v, 1) for v in block["mean_pair_distance"])
        text += "; within-sentence share " + ", ".join(_fmt(v) for v in block["within_sentence_fraction"])
        if "anchor_uniqueness" in block:
            text += "; uniqueness " + ", ".join(_fmt(v, 2) for v in block["anchor_uniqueness"])
        lines += [f"- {text}."]
    return lines + [""] if lines else []


def _provenance(heads: dict) -> str:
    text = (
        f"{heads['n_texts']} texts of `[CLS] s1 [SEP] s2 [SEP] ... [SEP]` from "
        f"{heads['n_documents']} documents ({heads['n_documents_skipped']} left out with fewer than "
        f"{heads['params']['min_sentences']} sentences within {heads['params']['max_tokens_used']} tokens), "
        f"{heads['n_sentences']} sentences, "
        f"{heads['n_tokens']} tokens; {heads['n_layers']} layers x {heads['n_heads']} heads "
        f"of {heads['head_dim']} dimensions."
    )
    special = heads.get("special_tokens") or {}
    if special and (special.get("cls"), special.get("sep")) != ("[CLS]", "[SEP]"):
        text += (
            f" [CLS] and [SEP] stand for this model's own `{special['cls']}` and `{special['sep']}` "
            "(the tokenizer's cls_token and sep_token) throughout."
        )
    if heads.get("command"):
        text = f"Produced by `{heads['command']}`.\n\n" + text
    return text


def _repetition_section(heads: dict) -> list[str]:
    found = heads.get("repetition_heads", [])
    threshold = heads["params"]["repetition_threshold"]
    lines = ["## Repetition heads", ""]
    if not found:
        share = [v for row in heads["repetition_share"] for v in row if v is not None]
        top = max(share) if share else None
        lines.append(f"No head has more than {threshold:g} of its pairs on identical tokens ")
        lines[-1] += f"(highest share {_fmt(top)})."
        lines.append("")
        return lines
    lines += [
        f"Heads with more than {threshold:g} of their high-similarity pairs on identical tokens "
        "(the [SEP]-[SEP] part of that share shown separately):",
        "",
        "| layer | head | identical-token share | of which [SEP]-[SEP] | anchor |",
        "|---|---|---|---|---|",
    ]
    for head in found:
        lines.append(
            f"| {head['layer']} | {head['head']} | {_fmt(head['repetition_share'])} | "
            f"{_fmt(head['sep_pair_share'])} | `{head['anchor']}` |"
        )
    return lines + [""]


def _parameter_section(heads: dict) -> list[str]:
    params = dict(heads["params"])
    conventions = params.pop("conventions", {})
    lines = ["## Parameters", ""]
    lines += [f"- `{key}`: {value}" for key, value in params.items()]
    lines += ["", "Definitions:", ""]
    lines += [f"- {key}: {value}" for key, value in conventions.items()]
    probe = heads.get("probe") or {}
    if probe:
        lines += ["", "Probe data (gaps: word-start gaps; boundaries: gaps where a gold sentence starts):"]
        lines.append("")
        for condition, info in probe.items():
            precision = ", ".join(_fmt(v) for v in info.get("average_precision_by_layer", []))
            lines.append(
                f"- {condition}: train {info['train_gaps']} gaps ({info['train_boundaries']} boundaries) "
                f"from "
                f"{info['train_documents']} documents; test {info['test_gaps']} gaps "
                f"({info['test_boundaries']} boundaries) from {info['test_documents']} documents "
                f"(sampled from {info['train_gaps_seen']} and {info['test_gaps_seen']} gaps); "
                f"average precision per layer {precision}"
            )
    return lines


def _fmt(value, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"
