"""Topic segmentation: the exact partition against brute force, span invariants one level up, options."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segmenter.decode.decoder import Span
from segmenter.errors import ConfigError
from segmenter.topics.partition import depth_boundaries, gap_similarity, optimal_partition, section_costs
from segmenter.topics.segmenter import PENALTY, SHARE, TopicSegmenter, section_penalty, topic_spans
from tests.invariants import assert_invariants


def _cost(vectors: np.ndarray, starts: list[int]) -> float:
    edges = [0, *starts, len(vectors)]
    return sum(
        float(((vectors[a:b] - vectors[a:b].mean(0)) ** 2).sum()) for a, b in itertools.pairwise(edges)
    )


def _partitions(n: int, sections: int, lo: int, hi: int):
    for cuts in itertools.combinations(range(1, n), sections - 1):
        lengths = np.diff([0, *cuts, n])
        if lengths.min() >= lo and lengths.max() <= hi:
            yield list(cuts)


def test_three_clusters_are_found_with_and_without_the_count():
    rng = np.random.default_rng(0)
    centres = np.eye(3) * 4
    vectors = np.concatenate([centres[i] + rng.normal(0, 0.1, (m, 3)) for i, m in enumerate((4, 6, 3))])
    assert optimal_partition(vectors, n_sections=3) == [4, 10]
    assert optimal_partition(vectors, penalty=1.0) == [4, 10]
    assert depth_boundaries(vectors, n_sections=3, window=2) == [4, 10]


def test_long_texts_keep_their_large_sections_not_every_run():
    """Without a count the penalty grows with the length (SHARE x n): a long text of 5 parts, each of 40
    distinct runs of 4 vectors, is cut into its 5 parts, where the flat penalty alone cuts every run."""
    assert section_penalty(10) == PENALTY and section_penalty(10, sensitivity=2.0) == PENALTY / 2
    assert section_penalty(4000) == pytest.approx(SHARE * 4000)
    rng = np.random.default_rng(0)
    parts = rng.normal(size=(5, 64))
    runs = np.repeat(parts, 40, axis=0) + rng.normal(size=(200, 64))  # 200 runs, 40 per part
    vectors = np.repeat(runs, 4, axis=0) + rng.normal(0, 0.05, (800, 64))  # (800, 64)
    assert len(optimal_partition(vectors, penalty=PENALTY)) + 1 > 150  # nearly every run
    assert TopicSegmenter.boundaries(vectors) == [160, 320, 480, 640]
    assert len(TopicSegmenter.boundaries(vectors, sensitivity=2.0)) + 1 <= 1 + 2.0 / SHARE


@pytest.mark.parametrize("seed", range(6))
def test_fixed_count_partition_is_optimal_and_respects_lengths(seed):
    rng = np.random.default_rng(seed)
    n, sections, lo, hi = 9, 3, 2, 4
    vectors = rng.normal(size=(n, 4))
    found = optimal_partition(vectors, n_sections=sections, min_length=lo, max_length=hi)
    lengths = np.diff([0, *found, n])
    assert len(found) == sections - 1 and lengths.min() >= lo and lengths.max() <= hi
    best = min(_cost(vectors, cuts) for cuts in _partitions(n, sections, lo, hi))
    assert _cost(vectors, found) == pytest.approx(best)


@pytest.mark.parametrize("seed", range(4))
def test_penalised_partition_is_optimal(seed):
    rng = np.random.default_rng(seed)
    n = 8
    vectors = rng.normal(size=(n, 3))
    norms, sums = section_costs(vectors)
    spread = (norms[n] - sums[n] @ sums[n] / n) / n
    found = optimal_partition(vectors, penalty=0.7)
    total = lambda cuts: _cost(vectors, cuts) + 0.7 * spread * (len(cuts) + 1)  # noqa: E731
    best = min(total(list(c)) for k in range(n) for c in itertools.combinations(range(1, n), k))
    assert total(found) == pytest.approx(best)


def test_lengths_that_cannot_all_hold_keep_the_maximum():
    vectors = np.random.default_rng(1).normal(size=(5, 2))
    found = optimal_partition(vectors, min_length=3, max_length=3)  # 5 sentences: 3 + 2 is the best
    assert max(np.diff([0, *found, 5])) <= 3
    assert optimal_partition(vectors[:0]) == [] and optimal_partition(vectors[:1], n_sections=4) == []


def test_gap_similarity_is_one_for_identical_vectors():
    vectors = np.ones((5, 3))
    assert np.allclose(gap_similarity(vectors, window=2), 1.0)


# -- spans over a real Segmenter (tiny random model: fast; the invariants do not depend on quality) ----


@pytest.fixture(scope="module")
def tiny_topics(tiny_bert_dir, one_torch_thread):
    from segmenter.api import Segmenter
    from segmenter.topics.sentence_vectors import SentenceVectors

    segmenter = Segmenter(str(tiny_bert_dir), strategy="sep-attention", threshold=0.5)
    return TopicSegmenter(segmenter, vectors=SentenceVectors(str(tiny_bert_dir)))


WORDS = st.sampled_from(["the", "Cat", "sat.", "Dogs", "bark!", "é", "¿qué?", "1.", "—", '"Hi."', "x"])
SEPARATORS = st.sampled_from([" ", " ", "  ", "\n", "\n\n", "\t", " \u2028 "])


@st.composite
def texts(draw):
    words = draw(st.lists(WORDS, min_size=0, max_size=60))
    text = ""
    for word in words:
        text += draw(SEPARATORS) + word
    return text + draw(st.sampled_from(["", " ", "\n"]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=texts(),
    n_topics=st.none() | st.integers(1, 6),
    bounds=st.tuples(st.integers(1, 4), st.none() | st.integers(1, 8)),
)
def test_topic_spans_are_runs_of_whole_sentences(tiny_topics, text, n_topics, bounds):
    low, high = bounds
    sentences = tiny_topics.segmenter.segment(text)
    topics = tiny_topics.segment(text, n_topics=n_topics, min_sentences=low, max_sentences=high)
    assert_invariants(text, topics)
    starts = [s.start for s in sentences]
    ends = [s.end for s in sentences]
    covered = 0
    for topic in topics:
        first, last = starts.index(topic.start), ends.index(topic.end)
        assert first <= last
        covered += last - first + 1
        if high is not None:
            assert last - first + 1 <= high
    assert covered == len(sentences)
    if n_topics is not None and sentences and high is None and low == 1:
        assert len(topics) == min(n_topics, len(sentences))


def test_topic_span_scores_and_the_first_span(tiny_topics):
    text = "One. Two. Three. Four."
    sentences = [Span(i, i + len(w), w) for i, w in zip((0, 5, 10, 17), text.split(" "), strict=True)]
    vectors = np.array([[1.0, 0], [1.0, 0], [0, 1.0], [0, 1.0]])
    spans = topic_spans(text, sentences, [2], vectors)
    assert [(s.start, s.end, s.text) for s in spans] == [(0, 9, "One. Two."), (10, 22, "Three. Four.")]
    assert spans[0].score == 1.0 and spans[1].score == pytest.approx(1.0)


@pytest.mark.parametrize(
    "options",
    [
        {"n_topics": 0},
        {"n_topics": 2.5},
        {"sensitivity": 0},
        {"sensitivity": float("nan")},
        {"min_sentences": 0},
        {"max_sentences": -1},
    ],
)
def test_bad_options_are_one_config_error(tiny_topics, options):
    with pytest.raises(ConfigError):
        tiny_topics.segment("A cat. A dog.", **options)


def test_real_backbone_separates_two_unrelated_topics():
    cooking = [
        "Chop the onions finely and fry them in butter.",
        "Add the garlic once the onions turn golden.",
        "Stir in the tomatoes and let the sauce simmer.",
        "Season the sauce with salt, pepper and fresh basil.",
    ]
    football = [
        "The striker scored twice in the second half.",
        "The goalkeeper saved a penalty in the final minute.",
        "Fans celebrated the league title in the stadium.",
        "The coach praised the defence after the match.",
    ]
    text = " ".join(cooking + football)
    topics = TopicSegmenter()
    for spans in (topics.segment(text, n_topics=2), topics.segment(text)):
        assert [s.text for s in spans] == [" ".join(cooking), " ".join(football)]
