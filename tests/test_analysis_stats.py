"""Statistics of the head analysis on hand-built attention and head-vector arrays with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from segmenter.analysis.claims import evaluate_claims
from segmenter.analysis.inputs import SentenceText, build_text, pad_batch, plan_batches
from segmenter.analysis.params import AnalysisParams
from segmenter.analysis.stats import (
    HeadAccumulator,
    anchor_tokens,
    anchor_uniqueness,
    attention_share,
    candidate_pairs,
    chance_pair_stats,
    layer_thirds,
    mean_pair_distance,
    n_selected,
    repetition_heads,
    similarity_matrices,
    top_pairs,
)
from segmenter.errors import ConfigError
from segmenter.gold.corpus import Document

CLS, SEP = 101, 102


def make_text(sentences: list[list[int]]) -> SentenceText:
    """[CLS] s1 [SEP] s2 [SEP] ... from lists of token ids."""
    ids, sentence = [CLS], [-1]
    for number, tokens in enumerate(sentences):
        ids += tokens + [SEP]
        sentence += [number] * (len(tokens) + 1)
    return SentenceText("doc", np.array(ids), np.array(sentence), len(sentences), 0)


def accumulator(layers=1, heads=2, top_percent=10.0, vocab=200, max_tokens=64) -> HeadAccumulator:
    return HeadAccumulator(layers, heads, vocab, max_tokens, CLS, SEP, (13,), top_percent)


def uniform_attention(layers: int, heads: int, n: int) -> np.ndarray:
    return np.full((layers, heads, n, n), 1.0 / n)


# ----------------------------------------------------------------------------- attention


def test_head_attending_only_to_sep_scores_one():
    text = make_text([[5, 6, 7], [8, 9]])
    n = len(text)
    attention = uniform_attention(1, 2, n)
    sep_positions = np.nonzero(text.ids == SEP)[0]
    attention[0, 0] = 0.0
    attention[0, 0][:, sep_positions] = 0.5  # every query splits its mass over the two [SEP]s
    acc = accumulator()
    acc.add(text, attention, np.random.default_rng(0).normal(size=(1, n, 2, 4)))
    summary = acc.summary()
    assert summary["sep_attention"][0, 0] == pytest.approx(1.0)
    assert summary["cls_attention"][0, 0] == pytest.approx(0.0)
    assert summary["sep_attention"][0, 1] == pytest.approx(2 / n)  # uniform head: 2 of n keys
    assert summary["cls_attention"][0, 1] == pytest.approx(1 / n)


def test_attention_is_averaged_over_texts_not_tokens():
    short, long = make_text([[5], [6]]), make_text([[5, 6, 7, 8, 9, 10], [11, 12]])
    acc = accumulator(heads=1)
    for text, share in ((short, 1.0), (long, 0.0)):
        n = len(text)
        attention = np.zeros((1, 1, n, n))
        target = np.nonzero(text.ids == SEP)[0][0] if share else 0
        attention[0, 0, :, target] = 1.0
        acc.add(text, attention, np.random.default_rng(1).normal(size=(1, n, 1, 4)))
    assert acc.summary()["sep_attention"][0, 0] == pytest.approx(0.5)


def test_period_attention_uses_period_ids():
    text = make_text([[5, 13], [8, 13]])
    n = len(text)
    attention = np.zeros((1, 1, n, n))
    attention[0, 0, :, np.nonzero(text.ids == 13)[0]] = 0.5
    acc = accumulator(heads=1)
    acc.add(text, attention, np.ones((1, n, 1, 2)))
    assert acc.summary()["period_attention"][0, 0] == pytest.approx(1.0)


def test_attention_share_of_uniform_rows():
    attention = uniform_attention(1, 3, 5)[0]
    targets = np.array([False, True, False, True, False])
    assert attention_share(attention, targets) == pytest.approx([0.4, 0.4, 0.4])


# ----------------------------------------------------------------------------- pairs


def test_similarity_dot_and_cosine():
    rng = np.random.default_rng(2)
    contexts = rng.normal(size=(6, 3, 4)).astype(np.float32)  # (T, H, d)
    dot = similarity_matrices(contexts, "dot")
    assert dot.shape == (3, 6, 6)
    np.testing.assert_allclose(dot[1], contexts[:, 1] @ contexts[:, 1].T, rtol=1e-5)
    cosine = similarity_matrices(contexts, "cosine")
    np.testing.assert_allclose(np.diagonal(cosine, axis1=1, axis2=2), 1.0, rtol=1e-5)
    assert np.all(np.abs(cosine) <= 1.0 + 1e-5)
    with pytest.raises(ValueError):
        similarity_matrices(contexts, "euclid")


def test_candidate_pairs_exclude_cls_and_diagonal():
    i, j = candidate_pairs(6)
    assert i.size == 10  # C(5, 2)
    assert np.all(i < j) and i.min() == 1


def test_top_pairs_pick_the_planted_pair_and_never_cls():
    n = 12
    contexts = np.random.default_rng(3).normal(scale=0.01, size=(n, 1, 4))
    contexts[[0, 3, 7], 0] = [10.0, 0, 0, 0]  # [CLS] shares the big vector: it must still be left out
    similarity = similarity_matrices(contexts)
    i, j = top_pairs(similarity, 1.0)  # 55 candidates -> k = 1
    assert (i.tolist(), j.tolist()) == ([[3]], [[7]])


def test_n_selected_rounds_and_clips():
    assert n_selected(45, 10.0) == 4
    assert n_selected(10, 100.0) == 10
    assert n_selected(1, 1.0) == 1


def test_identical_tokens_give_a_repetition_head():
    text = make_text([[5, 6, 7, 5, 6], [8, 5, 9]])  # identical-id pairs: 5x3, 6x1, [SEP]x1
    n = len(text)
    rng = np.random.default_rng(4)
    embedding = rng.normal(size=(200, 8))
    embedding /= np.linalg.norm(embedding, axis=1, keepdims=True)
    contexts = np.zeros((1, n, 2, 8))
    contexts[0, :, 0] = embedding[text.ids] * 3.0  # head 1: the vector is the token's own
    contexts[0, :, 1] = rng.normal(size=(n, 8))  # head 2: unrelated to the token
    acc = accumulator(top_percent=15.5)  # 45 candidate pairs -> 7 pairs; 5 identical pairs exist
    acc.add(text, None, contexts)
    dot = acc.summary(repetition_threshold=0.5)["dot"]
    assert dot["repetition_share"][0, 0] == pytest.approx(5 / 7)
    assert dot["repetition_share"][0, 1] < 0.5
    assert dot["repetition_heads"] == [(1, 1)]
    assert dot["anchor_tokens"][0, 0] == 5  # token 5 ends 6 of the identical pairs' 10 ends


def test_sentence_vectors_give_within_sentence_pairs_and_known_distances():
    text = make_text([[5, 6, 7], [8, 9, 10]])  # positions 1-4 sentence 0, 5-8 sentence 1
    n = len(text)
    contexts = np.zeros((1, n, 1, 2))
    contexts[0, 1:5, 0] = [1.0, 0.0]
    contexts[0, 5:9, 0] = [0.0, 1.0]
    contexts[0, 0, 0] = [5.0, 5.0]  # [CLS] is excluded whatever its vector
    acc = accumulator(heads=1, top_percent=100 * 12 / 28)  # exactly the 12 within-sentence pairs
    acc.add(text, None, contexts)
    summary = acc.summary()["dot"]
    assert summary["within_sentence_fraction"][0] == pytest.approx(1.0)
    # within one block of 4 tokens: distances 1 (x3), 2 (x2), 3 (x1), twice over
    assert summary["distance_histogram"][0, 1:4].tolist() == [6, 4, 2]
    assert summary["mean_pair_distance"][0] == pytest.approx((6 * 1 + 4 * 2 + 2 * 3) / 12)
    assert summary["text_weighted"]["mean_pair_distance"][0] == pytest.approx(20 / 12)
    chance = acc.summary()["chance_within_sentence_fraction"]
    assert chance == pytest.approx(12 / 28)


def test_pooled_and_text_weighted_means_differ_when_texts_differ_in_length():
    acc = accumulator(heads=1, top_percent=100.0)  # every candidate pair: distances known in closed form
    for text in (make_text([[5]]), make_text([[5, 6, 7, 8, 9, 10, 11, 12, 13]])):  # 2 and 10 non-[CLS] tokens
        acc.add(text, None, np.ones((1, len(text), 1, 2)))
    dot = acc.summary()["dot"]
    assert dot["mean_pair_distance"][0] == pytest.approx((1 * 1 + 45 * 11 / 3) / 46)
    assert dot["text_weighted"]["mean_pair_distance"][0] == pytest.approx((1 + 11 / 3) / 2)


def test_chance_pair_stats():
    within, distance = chance_pair_stats(np.array([-1, 0, 0, 0, 1]))
    assert within == pytest.approx(3 / 6)
    assert distance == pytest.approx((1 + 2 + 3 + 1 + 2 + 1) / 6)


def test_mean_distance_ratio_and_histogram_shapes():
    hist = np.zeros((3, 2, 10), dtype=np.int64)
    hist[0, :, 8] = 1
    hist[1, :, 4] = 1
    hist[2, :, 2] = 1
    assert mean_pair_distance(hist).tolist() == [8.0, 4.0, 2.0]


# ----------------------------------------------------------------------------- anchors, repetition


def test_anchor_tokens_and_uniqueness():
    counts = np.zeros((2, 3, 10), dtype=np.int64)
    counts[0, 0, 4], counts[0, 1, 5], counts[0, 2, 6] = 3, 3, 3  # three different anchors
    counts[1, :, 7] = 2  # one anchor shared by every head
    counts[1, 2, 8] = 1
    anchors, share = anchor_tokens(counts)
    assert anchors.tolist() == [[4, 5, 6], [7, 7, 7]]
    assert share[1, 2] == pytest.approx(2 / 3)
    assert anchor_uniqueness(anchors).tolist() == [1.0, 0.0]


def test_head_without_pairs_has_no_anchor():
    anchors, share = anchor_tokens(np.zeros((1, 2, 5), dtype=np.int64))
    assert anchors.tolist() == [[-1, -1]] and np.isnan(share).all()
    assert anchor_uniqueness(anchors).tolist() == [0.0]


def test_repetition_threshold_is_strict():
    assert repetition_heads(np.array([[0.5, 0.51, np.nan]]), 0.5) == [(1, 2)]


def test_layer_thirds():
    assert layer_thirds(1) == ([0], [0])
    assert layer_thirds(12) == ([0, 1, 2, 3], [8, 9, 10, 11])


# ----------------------------------------------------------------------------- memory


def test_accumulator_does_not_grow_with_texts():
    rng = np.random.default_rng(5)
    acc = accumulator(layers=2, heads=3, max_tokens=40)

    def add(count):
        for _ in range(count):
            text = make_text([list(rng.integers(1, 100, size=rng.integers(2, 8))) for _ in range(3)])
            n = len(text)
            acc.add(text, uniform_attention(2, 3, n), rng.normal(size=(2, n, 3, 4)))

    def footprint():
        arrays = [a for p in acc.pair_stats.values() for a in vars(p).values()]
        arrays += list(acc.attention.values())
        return sum(a.nbytes for a in arrays) + acc.example.contexts.nbytes

    add(1)
    before = footprint()
    add(40)
    assert footprint() == before
    assert acc.texts == 41


def test_accumulator_rejects_mismatched_contexts():
    text = make_text([[5], [6]])
    with pytest.raises(ValueError):
        accumulator().add(text, None, np.zeros((1, len(text) + 1, 2, 4)))


# ----------------------------------------------------------------------------- inputs


def fake_tokenize(sentence: str) -> np.ndarray:
    return np.array([1000 + len(word) for word in sentence.split()])


def test_build_text_marks_sentences_and_cuts_at_a_border():
    doc = Document("d", ("a bb ccc", "dd e", "fff gg h i"))
    text = build_text(doc, fake_tokenize, CLS, SEP, max_tokens=10)
    assert text.ids.tolist() == [CLS, 1001, 1002, 1003, SEP, 1002, 1001, SEP]
    assert text.sentence.tolist() == [-1, 0, 0, 0, 0, 1, 1, 1]
    assert (text.n_sentences, text.dropped) == (2, 1)


def test_build_text_skips_a_first_sentence_that_is_too_long():
    doc = Document("d", ("a b c d e f g h i j", "x y"))
    text = build_text(doc, fake_tokenize, CLS, SEP, max_tokens=8)
    assert text.ids.tolist() == [CLS, 1001, 1001, SEP]
    assert text.sentence.tolist() == [-1, 0, 0, 0]
    assert text.dropped == 1


def test_batches_respect_the_attention_budget():
    texts = [make_text([[5] * n]) for n in (3, 4, 20, 2, 2)]
    budget = 4 * 1 * 1 * 2 * 12 * 12  # two texts of 12 tokens, one layer, one head
    batches = list(plan_batches(texts, 1, 1, budget))
    assert [len(t) for t in texts] == [5, 6, 22, 4, 4]
    assert [[len(t) for t in b] for b in batches] == [[5, 6], [22], [4, 4]]
    ids, mask = pad_batch(batches[0], pad_id=0)
    assert ids.shape == (2, 6) and mask.sum() == 11 and ids[0, 5] == 0


# ----------------------------------------------------------------------------- claims


def heads_for_claims(sep, distance, within, uniqueness) -> dict:
    return {
        "sep_attention_by_layer": sep,
        "period_attention_by_layer": [0.0] * len(sep),
        "mean_pair_distance": distance,
        "distance_ratio_last_first": distance[-1] / distance[0],
        "within_sentence_fraction": within,
        "anchor_uniqueness": uniqueness,
        "chance": {"within_sentence_fraction": 0.1},
    }


def test_claims_hold_on_paper_like_numbers():
    heads = heads_for_claims(
        sep=[0.05, 0.1, 0.2, 0.4, 0.5, 0.6],
        distance=[42.0, 35.0, 33.0, 31.0, 30.0, 29.0],
        within=[0.3, 0.4, 0.5, 0.55, 0.6, 0.65],
        uniqueness=[0.9, 0.8, 0.7, 0.6, 0.6, 0.7],
    )
    claims = evaluate_claims(heads, AnalysisParams())
    assert [c["holds"] for c in claims] == [True, True, True, True]
    assert "-31%" in claims[1]["evidence"]


def test_claims_fail_on_the_design_measurements():
    heads = heads_for_claims(
        sep=[0.05, 0.04, 0.06, 0.08, 0.03, 0.05],
        distance=[42.0, 32.0, 29.0, 28.0, 34.0, 45.0],
        within=[0.35, 0.45, 0.5, 0.56, 0.4, 0.34],
        uniqueness=[0.2, 0.1, 0.0, 0.1, 0.2, 0.3],
    )
    claims = evaluate_claims(heads, AnalysisParams())
    assert [c["holds"] for c in claims] == [False, False, False, False]
    assert "shortest at layer 4" in claims[1]["evidence"]
    assert "highest at layer 4" in claims[2]["evidence"]
    assert all({"claim", "holds", "evidence"} <= set(c) for c in claims)


def test_separator_claim_needs_a_minimum_share():
    heads = heads_for_claims([0.01, 0.02, 0.05], [3.0, 2.0, 1.0], [0.1, 0.2, 0.3], [1.0, 1.0, 1.0])
    assert evaluate_claims(heads, AnalysisParams(separator_share_min=0.05))[0]["holds"] is True
    assert evaluate_claims(heads, AnalysisParams(separator_share_min=0.06))[0]["holds"] is False


@pytest.mark.parametrize("field, value", [("top_percent", 0.0), ("top_percent", 101.0), ("probe_c", 0.0)])
def test_bad_params_raise_config_error(field, value):
    with pytest.raises(ConfigError, match=field):
        AnalysisParams(**{field: value})
