"""The paper's four claims, checked against the numbers of one analysis: holds / does not hold, and why.

Each claim is a `{"claim", "holds", "evidence", "value", "criterion"}` dict computed from the heads.json
content alone (per-layer lists), so anyone can re-check it from the file. Leaves out: computing the
statistics, formatting the report.
"""

from __future__ import annotations

from segmenter.analysis.params import AnalysisParams
from segmenter.analysis.stats import layer_thirds

PAPER_DISTANCE_CHANGE = -30.0


def evaluate_claims(heads: dict, params: AnalysisParams) -> list[dict]:
    """All four claims, in the order the report lists them."""
    return [
        separator_claim(heads, params.separator_share_min),
        distance_claim(heads),
        within_sentence_claim(heads),
        anchor_claim(heads, params.uniqueness_min),
    ]


def separator_claim(heads: dict, share_min: float) -> dict:
    """Final layers focus on separators: mean [SEP] attention of the last third of layers exceeds the
    first third's and is at least `share_min`."""
    sep = heads["sep_attention_by_layer"]
    first, last = layer_thirds(len(sep))
    first_mean, last_mean = _mean(sep, first), _mean(sep, last)
    holds = (
        first_mean is not None and last_mean is not None and last_mean > first_mean and last_mean >= share_min
    )
    period = heads.get("period_attention_by_layer")
    extra = ""
    if period:
        extra = f"; to periods {_fmt(_mean(period, first))} vs {_fmt(_mean(period, last))}"
    evidence = (
        f"mean attention to [SEP] in layers {_span(last)}: {_fmt(last_mean)} vs layers {_span(first)}: "
        f"{_fmt(first_mean)} (needs more than the first third and at least {share_min:.2f}){extra}; "
        f"per layer: {_list(sep)}"
    )
    return _claim(
        "final layers focus on separators",
        holds,
        evidence,
        last_mean,
        f"mean [SEP] attention of layers {_span(last)} > layers {_span(first)} and >= {share_min}",
    )


def distance_claim(heads: dict) -> dict:
    """Distance shrinks with depth: mean token distance of high-similarity pairs, last / first layer < 1."""
    distance = heads["mean_pair_distance"]
    ratio = heads["distance_ratio_last_first"]
    holds = ratio is not None and ratio < 1.0
    known = [(d, layer) for layer, d in enumerate(distance, 1) if d is not None]
    low = min(known) if known else None
    evidence = (
        f"mean distance layer 1 {_fmt(distance[0], 1)} -> layer {len(distance)} {_fmt(distance[-1], 1)} "
        f"(ratio {_fmt(ratio, 3)}, {_pct(ratio)}; paper: about {PAPER_DISTANCE_CHANGE:+.0f}%); "
        f"per layer: {_list(distance, 1)}"
    )
    if low is not None and distance[0]:
        evidence += f"; shortest at layer {low[1]} ({_pct(low[0] / distance[0])} vs layer 1)"
    evidence += _text_weighted(heads, "mean_pair_distance", 1)
    return _claim(
        "distance shrinks with depth", holds, evidence, ratio, "mean pair distance last / first < 1"
    )


def within_sentence_claim(heads: dict) -> dict:
    """Within-sentence share grows with depth: share in the last layer > share in the first layer."""
    share = heads["within_sentence_fraction"]
    first, last = share[0], share[-1]
    holds = first is not None and last is not None and last > first
    known = [(s, layer) for layer, s in enumerate(share, 1) if s is not None]
    peak = max(known) if known else None
    chance = heads.get("chance", {}).get("within_sentence_fraction")
    evidence = f"within-sentence share layer 1 {_fmt(first)} -> layer {len(share)} {_fmt(last)}"
    if peak is not None:
        evidence += f"; highest at layer {peak[1]} ({_fmt(peak[0])})"
    evidence += f"; chance {_fmt(chance)}; per layer: {_list(share)}"
    evidence += _text_weighted(heads, "within_sentence_fraction", 3)
    return _claim(
        "within-sentence share grows with depth", holds, evidence, last, "within-sentence share last > first"
    )


def anchor_claim(heads: dict, uniqueness_min: float) -> dict:
    """Heads have unique anchors: anchor uniqueness averaged over layers exceeds `uniqueness_min`."""
    uniqueness = heads["anchor_uniqueness"]
    mean = _mean(uniqueness, range(len(uniqueness)))
    holds = mean is not None and mean > uniqueness_min
    evidence = (
        f"mean anchor uniqueness {_fmt(mean)} (needs more than {uniqueness_min:.2f}); "
        f"per layer: {_list(uniqueness)}"
    )
    return _claim("heads have unique anchors", holds, evidence, mean, f"mean uniqueness > {uniqueness_min}")


def _text_weighted(heads: dict, key: str, digits: int) -> str:
    """The same per-layer numbers averaged over texts instead of pooled over pairs, when recorded."""
    values = heads.get("text_weighted", {}).get(key)
    return f"; averaged over texts instead: {_list(values, digits)}" if values else ""


def _claim(claim: str, holds: bool, evidence: str, value, criterion: str) -> dict:
    value = None if value is None else round(float(value), 5)
    return {
        "claim": claim,
        "holds": bool(holds),
        "evidence": evidence,
        "value": value,
        "criterion": criterion,
    }


def _mean(values: list, indices) -> float | None:
    picked = [values[i] for i in indices if values[i] is not None]
    return sum(picked) / len(picked) if picked else None


def _span(indices: list[int]) -> str:
    return str(indices[0] + 1) if len(indices) == 1 else f"{indices[0] + 1}-{indices[-1] + 1}"


def _fmt(value, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _pct(ratio) -> str:
    return "n/a" if ratio is None else f"{100.0 * (ratio - 1.0):+.0f}%"


def _list(values: list, digits: int = 3) -> str:
    return ", ".join(_fmt(v, digits) for v in values)
