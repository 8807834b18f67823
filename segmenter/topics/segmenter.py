"""`TopicSegmenter`: a text's topical sections as character spans, each a run of whole sentences.

Flow: text -> sentence spans (`Segmenter.segment`) -> one unit vector per sentence (mean-pooled
outputs of the whole backbone, `segmenter.topics.sentence_vectors`) -> the exact least-dispersion partition
of that sequence (`segmenter.topics.partition.optimal_partition`) -> topic spans from the first sentence's
start to the last sentence's end. So a topic span has every property of a sentence span: a slice of the
caller's text, in order, no overlap, no edge whitespace, and together they cover every non-whitespace
character. The method (vectors and partition) was chosen on Choi (2000) subsets 3-5 and 6-8 against
depth scores and head vectors (`benchmarks/results/topics-selection`); how many sections a text gets
without a count was then chosen on real documents with their authors' sections
(`benchmarks/results/topics-penalty`).

Sentence segmentation, the encoder and the partition live in their own modules; this one only joins them.
Importing it loads neither torch nor the encoder (the spaCy component checks its options with it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from segmenter.decode.decoder import Span
from segmenter.errors import ConfigError
from segmenter.topics.partition import optimal_partition, section_costs

DEFAULT_SENSITIVITY = 1.0
# Without a section count, a new section must lower the within-section dispersion by PENALTY times the
# text's mean squared distance of a sentence vector to the mean of all of them (`spread`), and by SHARE
# of the whole text's dispersion (n sentences x spread), both divided by `sensitivity`: the first
# governs short texts, the second long ones, where it caps the count at 1 + sensitivity / SHARE
# sections. PENALTY was chosen on Choi 3-5 and 6-8 (benchmarks/results/topics-selection), SHARE on the
# topic corpus's dev file with Choi 3-5 and 6-8 as a constraint (benchmarks/results/topics-penalty).
PENALTY = 1.5
SHARE = 0.025


def section_penalty(n_sentences: int, sensitivity: float = DEFAULT_SENSITIVITY) -> float:
    """The cost of one more section, in units of the text's spread (see PENALTY and SHARE)."""
    return max(PENALTY, SHARE * n_sentences) / sensitivity


class TopicSegmenter:
    """Topic segmentation over the sentences of a `Segmenter`, with the backbone's sentence vectors.

    >>> topics = TopicSegmenter()                 # packaged backbone and default sentence preset
    >>> spans = topics.segment(text, n_topics=3)  # or sensitivity=..., min_sentences=, max_sentences=

    segmenter:  the `Segmenter` that gives the sentences (None: `Segmenter(model, device=...,
                precision=...)`); its encoder is not reused for vectors when a probe tuned its blocks
    model:      backbone of the sentence vectors (None: the segmenter's backbone, the packaged MiniLM)
    """

    def __init__(
        self,
        segmenter=None,
        model: str | None = None,
        device: str = "cpu",
        precision: str = "auto",
        batch_size: int = 32,
        vectors=None,
    ):
        """vectors: a `segmenter.topics.sentence_vectors.SentenceVectors` (None: one for the backbone)."""
        if segmenter is None:
            from segmenter.api import Segmenter

            segmenter = Segmenter(model=model, device=device, precision=precision)
        self.segmenter = segmenter
        if vectors is None:
            from segmenter.topics.sentence_vectors import SentenceVectors, backbone_of

            backbone = model if model is not None else backbone_of(segmenter)
            vectors = SentenceVectors(backbone, device=device, precision=precision, batch_size=batch_size)
        self.vectors = vectors

    def segment(
        self,
        text: str,
        n_topics: int | None = None,
        sensitivity: float = DEFAULT_SENSITIVITY,
        min_sentences: int = 1,
        max_sentences: int | None = None,
    ) -> list[Span]:
        """Topic spans of `text`; `span.text == text[span.start:span.end]`, each a run of whole sentences.

        n_topics:      how many topics, if known (fewer when the text has fewer sentences)
        sensitivity:   without n_topics, how readily a new topic starts (> 0; higher: more topics)
        min_sentences / max_sentences: bounds on a topic's length in sentences (the maximum wins where
                       both cannot hold)
        A topic span's `score` is 1.0 for the first, else the cosine distance between the mean vectors
        of the two topics it separates (0: alike, 1: unrelated).
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        check_options(n_topics, sensitivity, min_sentences, max_sentences)
        sentences = self.segmenter.segment(text)
        return self.from_sentences(text, sentences, n_topics, sensitivity, min_sentences, max_sentences)

    def from_sentences(
        self,
        text: str,
        sentences: Sequence[Span],
        n_topics: int | None = None,
        sensitivity: float = DEFAULT_SENSITIVITY,
        min_sentences: int = 1,
        max_sentences: int | None = None,
    ) -> list[Span]:
        """Topic spans of `text` over its given sentence spans (e.g. from `Segmenter.pipe`)."""
        check_options(n_topics, sensitivity, min_sentences, max_sentences)
        if not sentences:
            return []
        vectors = self.vectors([s.text for s in sentences])  # (S, D)
        starts = self.boundaries(vectors, n_topics, sensitivity, min_sentences, max_sentences)
        return topic_spans(text, sentences, starts, vectors)

    @staticmethod
    def boundaries(
        vectors: np.ndarray,
        n_topics: int | None = None,
        sensitivity: float = DEFAULT_SENSITIVITY,
        min_sentences: int = 1,
        max_sentences: int | None = None,
    ) -> list[int]:
        """Indices of the sentences (rows of `vectors` (S, D)) that open a topic, after the first."""
        check_options(n_topics, sensitivity, min_sentences, max_sentences)
        return optimal_partition(
            vectors,
            n_sections=n_topics,
            penalty=section_penalty(len(vectors), sensitivity),
            min_length=min_sentences,
            max_length=max_sentences,
        )


def topic_spans(
    text: str, sentences: Sequence[Span], starts: Sequence[int], vectors: np.ndarray
) -> list[Span]:
    """One span per run of `sentences` between the sentence indices `starts`, scored as in `segment`."""
    edges = [0, *starts, len(sentences)]
    _, sums = section_costs(vectors)  # (S+1, D) prefix sums
    spans, previous = [], None
    for first, stop in zip(edges, edges[1:], strict=False):
        mean = sums[stop] - sums[first]  # (D,)
        mean = mean / max(float(np.linalg.norm(mean)), 1e-12)
        score = 1.0 if previous is None else float(np.clip(1.0 - mean @ previous, 0.0, 1.0))
        start, end = sentences[first].start, sentences[stop - 1].end
        spans.append(Span(start, end, text[start:end], score))
        previous = mean
    return spans


def check_options(n_topics, sensitivity, min_sentences, max_sentences) -> None:
    """ConfigError naming the first option out of range."""
    if n_topics is not None and (not isinstance(n_topics, int) or n_topics < 1):
        raise ConfigError(f"n_topics must be a positive integer or None, got {n_topics!r}")
    if not isinstance(sensitivity, int | float) or not np.isfinite(sensitivity) or sensitivity <= 0:
        raise ConfigError(f"sensitivity must be a finite number above 0, got {sensitivity!r}")
    if not isinstance(min_sentences, int) or min_sentences < 1:
        raise ConfigError(f"min_sentences must be a positive integer, got {min_sentences!r}")
    if max_sentences is not None and (not isinstance(max_sentences, int) or max_sentences < 1):
        raise ConfigError(f"max_sentences must be a positive integer or None, got {max_sentences!r}")
