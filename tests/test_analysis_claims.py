"""The claims' bootstrap intervals over documents and their three-way verdicts, on hand-made per-document
records with known answers, and the per-document records against the pooled statistics."""

from __future__ import annotations

import numpy as np
import pytest

from segmenter.analysis.bootstrap import document_intervals, full_sample, layer_values
from segmenter.analysis.claims import (
    DOES_NOT_HOLD,
    HOLDS,
    UNDECIDED,
    Condition,
    combined_verdict,
    evaluate_claims,
)
from segmenter.analysis.documents import DocumentRecorder, DocumentStats
from segmenter.analysis.inputs import SentenceText
from segmenter.analysis.params import AnalysisParams
from segmenter.analysis.report import claims_paragraph, claims_table
from segmenter.analysis.stats import HeadAccumulator
from segmenter.errors import ConfigError

CLS, SEP = 101, 102
PARAMS = AnalysisParams(bootstrap_resamples=1000, bootstrap_seed=7)


def records(within: list[tuple[int, int]], pairs: int = 100, sep=None, distance=None) -> DocumentStats:
    """Two-layer, one-head records: `within` (first layer, last layer) within-sentence pairs per document,
    `pairs` pairs per layer; [SEP] attention and summed distances per document when given (else fixed)."""
    n = len(within)
    sep = np.full((n, 2), 0.1) if sep is None else np.asarray(sep, dtype=float)
    distance = np.full((n, 2), 10 * pairs) if distance is None else np.asarray(distance)
    document = np.repeat(np.arange(n), 2)  # per document: token 0 ends 3 pairs of layer 1, 1 of layer 2
    return DocumentStats(
        n_layers=2,
        n_heads=1,
        sep_attention=sep,
        pairs=np.full((n, 2), pairs),
        pair_distance=distance,
        within=np.asarray(within),
        token_document=document,
        token_column=np.tile([0, 1], n),
        token_count=np.tile([3, 1], n),
        vocabulary=np.array([5]),
    )


def heads_of(documents: DocumentStats) -> dict:
    """The per-layer lists of heads.json as the full sample gives them."""
    ones = np.ones(documents.n_documents)
    keys = ("sep_attention_by_layer", "mean_pair_distance", "within_sentence_fraction", "anchor_uniqueness")
    heads = {key: layer_values(documents, key, ones).tolist() for key in keys}
    distance = heads["mean_pair_distance"]
    heads["distance_ratio_last_first"] = distance[-1] / distance[0] if distance[0] else None
    return heads


def within_claim(documents: DocumentStats, params: AnalysisParams = PARAMS) -> dict:
    return evaluate_claims(heads_of(documents), params, documents)[2]


def counts(center: float, width: int, n: int = 20, seed: int = 0) -> list[int]:
    """n counts out of 100, drawn uniformly within `width` of `center` * 100."""
    middle = round(100 * center)
    return np.random.default_rng(seed).integers(middle - width, middle + width + 1, n).tolist()


# ----------------------------------------------------------------------------- verdicts


def test_an_interval_clear_above_the_threshold_holds():
    first, last = counts(0.2, 8), counts(0.6, 8, seed=1)  # the share grows by 0.24 to 0.56
    claim = within_claim(records(list(zip(first, last, strict=True))))
    low, high = claim["interval"]
    assert 0.3 < low <= claim["value"] <= high < 0.5
    assert (claim["verdict"], claim["holds"]) == (HOLDS, True)


def test_an_interval_clear_below_the_threshold_does_not_hold():
    first, last = counts(0.6, 8), counts(0.2, 8, seed=1)
    claim = within_claim(records(list(zip(first, last, strict=True))))
    assert -0.5 < claim["interval"][0] <= claim["value"] <= claim["interval"][1] < -0.3
    assert (claim["verdict"], claim["holds"]) == (DOES_NOT_HOLD, False)


def test_an_interval_that_straddles_the_threshold_is_undecided_where_the_value_alone_holds():
    # half the documents grow by 0.3, half shrink by 0.28: the pooled difference is +0.01
    within = [(20, 50) if k % 2 else (50, 22) for k in range(20)]
    documents = records(within)
    claim = within_claim(documents)
    assert claim["value"] == pytest.approx(0.01)
    low, high = claim["interval"]
    assert low < 0.0 < high
    assert (claim["verdict"], claim["holds"]) == (UNDECIDED, False)
    point = evaluate_claims(heads_of(documents), PARAMS)[2]  # no records: the value alone decides
    assert (point["verdict"], point["interval"], point["n_documents"]) == (HOLDS, None, None)


def test_the_ratio_claim_is_decided_below_its_threshold():
    distance = [(1000 + 10 * k, 700 + 10 * k) for k in range(20)]  # last / first about 0.7
    claim = evaluate_claims(heads_of(d := records([(20, 20)] * 20, distance=distance)), PARAMS, d)[1]
    expected = sum(b for _, b in distance) / sum(a for a, _ in distance)
    assert claim["value"] == pytest.approx(expected, abs=1e-5)
    assert claim["interval"][1] < 1.0 and claim["verdict"] == HOLDS


def test_a_claim_with_two_conditions_needs_both():
    # [SEP] attention in the last layer clears 0.2 in every document but is below the first layer's
    documents = records([(20, 20)] * 12, sep=[(0.5 + 0.01 * k, 0.3 + 0.01 * k) for k in range(12)])
    claim = evaluate_claims(heads_of(documents), PARAMS, documents)[0]
    assert [c["verdict"] for c in claim["conditions"]] == [HOLDS, DOES_NOT_HOLD]
    assert claim["verdict"] == DOES_NOT_HOLD
    assert claim["value"] == claim["conditions"][0]["value"] == pytest.approx(0.355)


@pytest.mark.parametrize(
    "condition, interval, verdict",
    [
        (Condition("d", 0.0, above=True), (0.1, 0.2), HOLDS),
        (Condition("d", 0.0, above=True), (-0.2, -0.1), DOES_NOT_HOLD),
        (Condition("d", 0.0, above=True), (-0.1, 0.1), UNDECIDED),
        (Condition("d", 0.0, above=True), (0.0, 0.1), UNDECIDED),  # strict: the end at 0 is not above
        (Condition("s", 0.2, above=True, inclusive=True), (0.2, 0.3), HOLDS),
        (Condition("s", 0.2, above=True, inclusive=True), (0.1, 0.19), DOES_NOT_HOLD),
        (Condition("r", 1.0, above=False), (0.8, 0.9), HOLDS),
        (Condition("r", 1.0, above=False), (1.0, 1.1), DOES_NOT_HOLD),
    ],
)
def test_condition_verdicts_from_the_interval_ends(condition, interval, verdict):
    assert condition.verdict(sum(interval) / 2, interval, n_documents=30) == verdict


def test_claim_verdict_combines_its_conditions():
    assert combined_verdict([HOLDS, HOLDS]) == HOLDS
    assert combined_verdict([HOLDS, UNDECIDED]) == UNDECIDED
    assert combined_verdict([UNDECIDED, DOES_NOT_HOLD]) == DOES_NOT_HOLD


# ----------------------------------------------------------------------------- intervals


def noisy_records(seed: int = 3, n: int = 25) -> DocumentStats:
    rng = np.random.default_rng(seed)
    first = rng.integers(10, 60, n)
    return records(
        list(zip(first, first + rng.integers(-20, 30, n), strict=True)),
        sep=rng.uniform(0.0, 0.5, (n, 2)),
        distance=rng.integers(500, 3000, (n, 2)),
    )


def test_every_interval_contains_the_full_sample_value():
    documents = noisy_records()
    for claim in evaluate_claims(heads_of(documents), PARAMS, documents):
        assert claim["n_documents"] == 25 and claim["resamples"] == 1000
        for condition in claim["conditions"]:
            low, high = condition["interval"]
            assert low <= condition["value"] <= high, claim["claim"]


def test_the_same_seed_gives_the_same_interval_and_another_seed_another():
    documents = noisy_records()
    claims = evaluate_claims(heads_of(documents), PARAMS, documents)
    again = evaluate_claims(heads_of(documents), PARAMS, documents)
    other = evaluate_claims(heads_of(documents), AnalysisParams(bootstrap_seed=8), documents)
    assert [c["interval"] for c in claims] == [c["interval"] for c in again]
    assert claims[2]["interval"] != other[2]["interval"]
    assert claims[2]["value"] == other[2]["value"]


def test_more_documents_give_a_narrower_interval():
    def width(n: int) -> float:
        first, last = counts(0.3, 20, n), counts(0.35, 20, n, seed=1)
        low, high = within_claim(records(list(zip(first, last, strict=True))))["interval"]
        return high - low

    assert width(80) < 0.7 * width(20)


def test_identical_documents_give_a_point_interval_and_a_verdict():
    claim = within_claim(records([(20, 30)] * 5))
    assert claim["interval"] == [pytest.approx(0.1), pytest.approx(0.1)]
    assert claim["verdict"] == HOLDS


def test_a_single_document_gives_a_degenerate_interval_and_no_verdict():
    documents = records([(20, 60)])
    claims = evaluate_claims(heads_of(documents), PARAMS, documents)
    for claim in claims:
        assert claim["n_documents"] == 1 and claim["verdict"] == UNDECIDED and claim["holds"] is False
        for condition in claim["conditions"]:
            assert condition["interval"] == [condition["value"], condition["value"]]
    assert claims[2]["value"] == pytest.approx(0.4)


def test_an_undefined_number_has_no_interval_and_no_verdict():
    documents = records([(20, 30)] * 4, distance=np.zeros((4, 2), dtype=int))  # ratio 0 / 0
    claim = evaluate_claims(heads_of(documents), PARAMS, documents)[1]
    assert (claim["value"], claim["interval"], claim["verdict"]) == (None, None, UNDECIDED)


def test_document_intervals_of_several_numbers_at_once():
    documents = noisy_records()

    def numbers(values):
        return values[0], values[-1]

    both = document_intervals(documents, "within_sentence_fraction", numbers, 500, 0.9, 1)
    alone = document_intervals(documents, "within_sentence_fraction", lambda v: (v[-1],), 500, 0.9, 1)
    assert both[1] == alone[0]  # one seed: the same resamples for every number
    assert full_sample(documents, "within_sentence_fraction", numbers) == pytest.approx(
        heads_of(documents)["within_sentence_fraction"]
    )


def test_bootstrap_parameters_are_checked():
    with pytest.raises(ConfigError, match="bootstrap_resamples"):
        AnalysisParams(bootstrap_resamples=10)
    with pytest.raises(ConfigError, match="bootstrap_confidence"):
        AnalysisParams(bootstrap_confidence=1.0)


# ----------------------------------------------------------------------------- per-document records


def make_text(rng, doc: int) -> SentenceText:
    ids, sentence = [CLS], [-1]
    for number in range(int(rng.integers(2, 5))):
        length = int(rng.integers(2, 8))
        ids += rng.integers(1, 12, length).tolist() + [SEP]  # few distinct tokens: anchors repeat
        sentence += [number] * (length + 1)
    return SentenceText(f"d{doc}", np.array(ids), np.array(sentence), int(max(sentence)) + 1, 0)


def encoder_outputs(texts: list[SentenceText], seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """Random attention and head vectors (3 layers, 4 heads) per text; heads 1 and 2 have close vectors,
    so their anchors often agree."""
    rng = np.random.default_rng(seed)
    outputs = []
    for text in texts:
        n = len(text)
        attention = rng.random((3, 4, n, n))
        attention /= attention.sum(axis=-1, keepdims=True)
        contexts = rng.normal(size=(3, n, 4, 4))
        contexts[:, :, 1] = contexts[:, :, 0] + 0.1 * rng.normal(size=(3, n, 4))
        outputs.append((attention, contexts))
    return outputs


def accumulate(texts: list[SentenceText], outputs, times=None) -> HeadAccumulator:
    """Every text added `times[k]` times (once by default)."""
    acc = HeadAccumulator(3, 4, 200, 64, CLS, SEP, (13,), 10.0)
    for text, (attention, contexts), count in zip(texts, outputs, times or [1] * len(texts), strict=True):
        for _ in range(count):
            acc.add(text, attention, contexts)
    return acc


def summary_lists(summary: dict) -> dict:
    return {
        "sep_attention_by_layer": summary["sep_attention"].mean(axis=1),
        "mean_pair_distance": summary["dot"]["mean_pair_distance"],
        "within_sentence_fraction": summary["dot"]["within_sentence_fraction"],
        "anchor_uniqueness": summary["dot"]["anchor_uniqueness"],
    }


def test_records_with_unit_weights_give_the_pooled_statistics():
    rng = np.random.default_rng(5)
    texts = [make_text(rng, d) for d in range(15)]
    acc = accumulate(texts, encoder_outputs(texts))
    documents, expected = acc.documents(), summary_lists(acc.summary())
    assert documents.n_documents == 15
    assert 0 < expected["anchor_uniqueness"].max() < 1  # some heads share anchors, some do not
    for key, values in expected.items():
        np.testing.assert_allclose(layer_values(documents, key, np.ones(15)), values, rtol=1e-12, err_msg=key)


def test_a_document_weighted_twice_counts_as_added_twice():
    rng = np.random.default_rng(6)
    texts = [make_text(rng, d) for d in range(6)]
    outputs = encoder_outputs(texts)
    weights = [2, 0, 1, 3, 1, 1]
    once = accumulate(texts, outputs).documents()
    expected = summary_lists(accumulate(texts, outputs, weights).summary())
    for key, values in expected.items():
        np.testing.assert_allclose(
            layer_values(once, key, np.array(weights)), values, rtol=1e-12, err_msg=key
        )


def test_a_text_without_attention_is_left_out_of_the_separator_mean():
    recorder = DocumentRecorder(1, 2, 10)
    recorder.add_text(np.array([[0.2, 0.4]]))
    recorder.add_text(None)
    stats = recorder.stats()
    assert layer_values(stats, "sep_attention_by_layer", np.ones(2)).tolist() == [pytest.approx(0.3)]


# ----------------------------------------------------------------------------- report


def test_the_report_gives_intervals_verdicts_and_the_sample():
    documents = noisy_records()
    claims = evaluate_claims(heads_of(documents), PARAMS, documents)
    table = claims_table(claims)
    assert "| 95% interval |" in table
    assert table.count("\n") == 1 + 5  # header rule, then 4 claims, the first on two rows
    low, high = claims[2]["interval"]
    assert f"[{low:.3f}, {high:.3f}]" in table
    assert f"**{claims[2]['verdict']}**" in table
    paragraph = claims_paragraph({"claims": claims, "params": PARAMS.to_dict()})
    assert "over the 25 analysed texts" in paragraph and "1000 resamples" in paragraph
    assert "seed 7" in paragraph
