"""The paper's four claims, checked against the numbers of one analysis: holds, does not hold or undecided.

Each claim is a dict: `claim`, `verdict`, `holds` (the verdict is "holds"), `value` and `interval` (its
main number and that number's bootstrap interval over documents), `criterion`, `conditions` (every
comparison the verdict rests on, each with its number, interval, threshold and verdict), `evidence`,
and the bootstrap's `n_documents`, `resamples` and `confidence`. A number's verdict is "holds" when its
whole interval lies on the claim's side of the threshold, "does not hold" when it lies wholly on the
other side, and "undecided" when it contains the threshold or when fewer than two documents leave
nothing to resample; a claim holds when all its conditions hold, does not hold when any does not.
Without per-document records (a heads.json read back) there is no interval and the verdict compares
the value alone. Leaves out: computing the statistics and resampling (stats.py, bootstrap.py),
formatting the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from segmenter.analysis.bootstrap import document_intervals, full_sample
from segmenter.analysis.documents import DocumentStats
from segmenter.analysis.params import AnalysisParams
from segmenter.analysis.stats import layer_thirds

PAPER_DISTANCE_CHANGE = -30.0
HOLDS, DOES_NOT_HOLD, UNDECIDED = "holds", "does not hold", "undecided"
VERDICTS = (HOLDS, DOES_NOT_HOLD, UNDECIDED)


@dataclass(frozen=True)
class Condition:
    """One comparison a claim rests on: `quantity` above (or below) `threshold`, or equal to it when
    `inclusive`."""

    quantity: str
    threshold: float
    above: bool
    inclusive: bool = False

    @property
    def side(self) -> str:
        return (">" if self.above else "<") + ("=" if self.inclusive else "")

    def met(self, value: float) -> bool:
        """Whether `value` is on the claim's side of the threshold."""
        if value == self.threshold:
            return self.inclusive
        return (value > self.threshold) == self.above

    def verdict(
        self, value: float | None, interval: tuple[float, float] | None, n_documents: int | None
    ) -> str:
        """HOLDS / DOES_NOT_HOLD / UNDECIDED for a number and its interval (see the module docstring).

        n_documents None means no interval was asked for: the value alone decides.
        """
        if n_documents is None:
            return HOLDS if value is not None and self.met(value) else DOES_NOT_HOLD
        if value is None or interval is None or n_documents < 2:
            return UNDECIDED
        low, high = (self.met(end) for end in interval)
        if low and high:
            return HOLDS
        return DOES_NOT_HOLD if not (low or high) else UNDECIDED


@dataclass(frozen=True)
class Resampling:
    """The per-document records and the bootstrap settings the intervals come from."""

    documents: DocumentStats
    resamples: int
    confidence: float
    seed: int


def evaluate_claims(
    heads: dict, params: AnalysisParams, documents: DocumentStats | None = None
) -> list[dict]:
    """All four claims, in the order the report lists them; with `documents`, each number gets its
    bootstrap interval over those documents (params.bootstrap_*)."""
    resampling = None
    if documents is not None:
        resampling = Resampling(
            documents, params.bootstrap_resamples, params.bootstrap_confidence, params.bootstrap_seed
        )
    return [
        separator_claim(heads, params.separator_share_min, resampling),
        distance_claim(heads, resampling),
        within_sentence_claim(heads, resampling),
        anchor_claim(heads, params.uniqueness_min, resampling),
    ]


def combined_verdict(verdicts: Sequence[str]) -> str:
    """A claim's verdict from its conditions': holds if all hold, does not hold if any does not.

    >>> combined_verdict(["holds", "undecided"]), combined_verdict(["undecided", "does not hold"])
    ('undecided', 'does not hold')
    """
    if DOES_NOT_HOLD in verdicts:
        return DOES_NOT_HOLD
    return HOLDS if all(v == HOLDS for v in verdicts) else UNDECIDED


def separator_claim(heads: dict, share_min: float, resampling: Resampling | None = None) -> dict:
    """Final layers focus on separators: mean [SEP] attention of the last third of layers exceeds the
    first third's and is at least `share_min`."""
    sep = heads["sep_attention_by_layer"]
    first, last = layer_thirds(len(sep))
    first_mean, last_mean = _mean(sep, first), _mean(sep, last)

    def numbers(values):
        low, high = _mean(values, first), _mean(values, last)
        return high, None if low is None or high is None else high - low

    conditions = (
        Condition(f"mean [SEP] attention of layers {_span(last)}", share_min, above=True, inclusive=True),
        Condition(f"its difference from layers {_span(first)}", 0.0, above=True),
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
    criterion = f"mean [SEP] attention of layers {_span(last)} > layers {_span(first)} and >= {share_min}"
    return _claim(
        "final layers focus on separators",
        heads,
        "sep_attention_by_layer",
        numbers,
        conditions,
        evidence,
        criterion,
        resampling,
    )


def distance_claim(heads: dict, resampling: Resampling | None = None) -> dict:
    """Distance shrinks with depth: mean token distance of high-similarity pairs, last / first layer < 1."""
    distance = heads["mean_pair_distance"]
    ratio = heads["distance_ratio_last_first"]

    def numbers(values):
        low, high = values[0], values[-1]
        return (None if low is None or high is None or low <= 0 else high / low,)

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
        "distance shrinks with depth",
        heads,
        "mean_pair_distance",
        numbers,
        (Condition("mean pair distance last / first layer", 1.0, above=False),),
        evidence,
        "mean pair distance last / first < 1",
        resampling,
    )


def within_sentence_claim(heads: dict, resampling: Resampling | None = None) -> dict:
    """Within-sentence share grows with depth: share in the last layer minus share in the first > 0."""
    share = heads["within_sentence_fraction"]
    first, last = share[0], share[-1]

    def numbers(values):
        return (None if values[0] is None or values[-1] is None else values[-1] - values[0],)

    known = [(s, layer) for layer, s in enumerate(share, 1) if s is not None]
    peak = max(known) if known else None
    chance = heads.get("chance", {}).get("within_sentence_fraction")
    evidence = f"within-sentence share layer 1 {_fmt(first)} -> layer {len(share)} {_fmt(last)}"
    if peak is not None:
        evidence += f"; highest at layer {peak[1]} ({_fmt(peak[0])})"
    evidence += f"; chance {_fmt(chance)}; per layer: {_list(share)}"
    evidence += _text_weighted(heads, "within_sentence_fraction", 3)
    return _claim(
        "within-sentence share grows with depth",
        heads,
        "within_sentence_fraction",
        numbers,
        (Condition("within-sentence share last - first layer", 0.0, above=True),),
        evidence,
        "within-sentence share last - first > 0",
        resampling,
    )


def anchor_claim(heads: dict, uniqueness_min: float, resampling: Resampling | None = None) -> dict:
    """Heads have unique anchors: anchor uniqueness averaged over layers exceeds `uniqueness_min`."""
    uniqueness = heads["anchor_uniqueness"]
    mean = _mean(uniqueness, range(len(uniqueness)))

    def numbers(values):
        return (_mean(values, range(len(values))),)

    evidence = (
        f"mean anchor uniqueness {_fmt(mean)} (needs more than {uniqueness_min:.2f}); "
        f"per layer: {_list(uniqueness)}"
    )
    return _claim(
        "heads have unique anchors",
        heads,
        "anchor_uniqueness",
        numbers,
        (Condition("mean anchor uniqueness over layers", uniqueness_min, above=True),),
        evidence,
        f"mean uniqueness > {uniqueness_min}",
        resampling,
    )


def _claim(claim, heads, key, numbers, conditions, evidence, criterion, resampling) -> dict:
    """The claim dict: `numbers(per-layer list of key)` are the conditions' numbers, in their order."""
    if resampling is None:
        values = list(numbers(heads[key]))
        intervals, n_documents = [None] * len(values), None
    else:
        values = full_sample(resampling.documents, key, numbers)
        intervals = document_intervals(
            resampling.documents, key, numbers, resampling.resamples, resampling.confidence, resampling.seed
        )
        n_documents = resampling.documents.n_documents
    rows = []
    for condition, value, interval in zip(conditions, values, intervals, strict=True):
        rows.append(
            {
                "quantity": condition.quantity,
                "value": _round(value),
                "interval": None if interval is None else [_round(end) for end in interval],
                "side": condition.side,
                "threshold": condition.threshold,
                "verdict": condition.verdict(value, interval, n_documents),
            }
        )
    verdict = combined_verdict([row["verdict"] for row in rows])
    return {
        "claim": claim,
        "verdict": verdict,
        "holds": verdict == HOLDS,
        "value": rows[0]["value"],
        "interval": rows[0]["interval"],
        "criterion": criterion,
        "conditions": rows,
        "evidence": evidence,
        "n_documents": n_documents,
        "resamples": None if resampling is None else resampling.resamples,
        "confidence": None if resampling is None else resampling.confidence,
    }


def _text_weighted(heads: dict, key: str, digits: int) -> str:
    """The same per-layer numbers averaged over texts instead of pooled over pairs, when recorded."""
    values = heads.get("text_weighted", {}).get(key)
    return f"; averaged over texts instead: {_list(values, digits)}" if values else ""


def _round(value) -> float | None:
    return None if value is None else round(float(value), 5)


def _mean(values: Sequence, indices) -> float | None:
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
