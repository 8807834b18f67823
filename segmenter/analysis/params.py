"""Every parameter of the attention-head analysis, in one frozen dataclass that is written to heads.json.

`AnalysisParams` validates itself at construction (a `ConfigError` names the field and its range) and
turns itself into a plain dict for the report, with the fixed conventions spelled out next to the knobs.
Nothing here touches models or data.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from segmenter.errors import ConfigError
from segmenter.text.conditions import TEXT_CONDITIONS

PROBE_CONDITIONS = TEXT_CONDITIONS

# Conventions that are not knobs; recorded verbatim so a reader of heads.json knows exactly what was done.
CONVENTIONS = {
    "input": "[CLS] s1 [SEP] s2 [SEP] ... sk [SEP]: consecutive gold sentences of one document, cut at a "
    "sentence border before max_tokens; a first sentence longer than the limit is skipped",
    "sentence_ids": "[CLS] has none; every [SEP] carries the id of the sentence it closes",
    "attention_average": "per head: attention mass on the target positions summed over keys, averaged over "
    "all query tokens of a text (special tokens included), then averaged over texts (Clark et al. 2019)",
    "periods": "tokens whose vocabulary string is '.' once WordPiece/BPE markers (##, Ġ, ▁) are stripped",
    "head_vectors": "each head's context vector softmax(QK^T/sqrt(d))V before the output projection",
    "similarity": "primary statistics use S = C C^T (raw scalar product); the 'cosine' block repeats the "
    "pair statistics with S = cosine(C_i, C_j)",
    "pairs": "per text and head: the k = max(1, round(top_percent/100 * n)) largest entries of S among the "
    "n unordered off-diagonal pairs i < j with [CLS] excluded (ties at the cut broken arbitrarily); "
    "each pair counted once",
    "aggregation": "pair statistics are pooled over heads and texts (every selected pair weighs the same, so "
    "long texts weigh more); 'text_weighted' repeats mean distance and within-sentence share with every "
    "text weighing the same",
    "distance": "|i - j| in tokens of the [SEP]-separated input",
    "anchor_token": "most frequent token id among both ends of a head's selected pairs, over all texts",
    "anchor_uniqueness": "share of a layer's heads whose anchor token is the anchor of no other head there",
    "repetition_share": "share of a head's selected pairs whose two tokens have the same id",
    "chance": "the same statistics for a uniformly random candidate pair, weighted like the selected pairs",
    "probe": "per layer: logistic regression on standardized [C(t-1); C(t)] (all heads, 2*H*d features) for "
    "every word-start gap t of the plain document text (no inserted [SEP]); non-overlapping windows of "
    "probe_window tokens, gaps across two windows skipped; positive when token t starts a gold sentence; "
    "documents alternate between train and test (for probe_train_fraction 2/3 every third document is a "
    "test document, so both splits span the whole corpus, which EWT orders by genre); each split keeps a "
    "uniform sample (reservoir, fixed seed) of at most probe_max_*_gaps gaps; F1 of the positive class "
    "(p >= 0.5) on the test gaps, and their average precision (threshold-free)",
    "probe_conditions": "clean: sentences joined by one space; corrupt: each sentence lowercased and "
    "stripped of punctuation (segmenter.gold.corpus.corrupt_document)",
    "bootstrap": "each claim's number is recomputed on bootstrap_resamples resamples of the analysed texts "
    "(one per document, drawn with replacement, numpy seeded with bootstrap_seed) with the same pooling as "
    "on all of them; its interval is the percentile interval at bootstrap_confidence "
    "(scipy.stats.bootstrap). "
    "A number holds when its whole interval is on the claim's side of the threshold, does not hold when the "
    "whole interval is on the other side, and is undecided otherwise or with fewer than two texts; a claim "
    "holds when all its numbers hold and does not hold when any does not",
}


@dataclass(frozen=True)
class AnalysisParams:
    """Knobs of `segmenter analyze` (see CONVENTIONS for what is fixed).

    top_percent:          share of a text's candidate pairs kept as high-similarity pairs, per head.
    max_tokens:           input length limit in tokens incl. specials (None: the model's max positions).
    min_sentences:        texts with fewer sentences (after the length cut) are left out.
    repetition_threshold: a head is a repetition head when its repetition share exceeds this.
    separator_share_min:  the "final layers focus on separators" claim needs at least this much mean
                          attention to [SEP] in the last third of layers.
    uniqueness_min:       the "unique anchors" claim needs a mean uniqueness above this.
    probe:                run the per-layer boundary probe.
    probe_train_fraction: share of documents the probe trains on (interleaved); it is scored on the rest.
    probe_window:         tokens per probe window incl. [CLS]/[SEP] (capped at the model's max positions).
    probe_max_train_gaps, probe_max_test_gaps: caps on gaps collected per condition (bounded memory).
    probe_c:              inverse L2 regularisation strength of the logistic regression.
    example_max_tokens:   the example text drawn in the similarity figure is the first with at least
                          three sentences and at most this many tokens.
    attention_budget_mb:  batches are sized so captured attention stays below this (at least one text).
    bootstrap_resamples:  resamples of the documents behind each claim's interval.
    bootstrap_confidence: coverage of the claims' percentile intervals.
    bootstrap_seed:       seed of the resampling (one seed, the same resamples for every claim).
    """

    top_percent: float = 1.0
    max_tokens: int | None = None
    min_sentences: int = 2
    repetition_threshold: float = 0.5
    separator_share_min: float = 0.2
    uniqueness_min: float = 0.5
    probe: bool = True
    probe_train_fraction: float = 2 / 3
    probe_window: int = 256
    probe_max_train_gaps: int = 6000
    probe_max_test_gaps: int = 3000
    probe_c: float = 0.1
    example_max_tokens: int = 120
    attention_budget_mb: int = 512
    bootstrap_resamples: int = 1000
    bootstrap_confidence: float = 0.95
    bootstrap_seed: int = 0

    def __post_init__(self) -> None:
        if not 0.0 < self.top_percent <= 100.0:
            raise ConfigError(f"top_percent must be in (0, 100], got {self.top_percent}")
        if self.max_tokens is not None and self.max_tokens < 8:
            raise ConfigError(f"max_tokens must be at least 8, got {self.max_tokens}")
        if self.min_sentences < 1:
            raise ConfigError(f"min_sentences must be at least 1, got {self.min_sentences}")
        for name in ("repetition_threshold", "separator_share_min", "uniqueness_min"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"{name} must be between 0 and 1, got {value}")
        if not 0.0 < self.probe_train_fraction < 1.0:
            raise ConfigError(f"probe_train_fraction must be in (0, 1), got {self.probe_train_fraction}")
        if self.probe_window < 8:
            raise ConfigError(f"probe_window must be at least 8 tokens, got {self.probe_window}")
        if self.probe_max_train_gaps < 10 or self.probe_max_test_gaps < 10:
            raise ConfigError("probe gap caps must be at least 10 each")
        if self.probe_c <= 0:
            raise ConfigError(f"probe_c must be positive, got {self.probe_c}")
        if self.attention_budget_mb < 1:
            raise ConfigError(f"attention_budget_mb must be positive, got {self.attention_budget_mb}")
        if self.bootstrap_resamples < 100:
            raise ConfigError(f"bootstrap_resamples must be at least 100, got {self.bootstrap_resamples}")
        if not 0.0 < self.bootstrap_confidence < 1.0:
            raise ConfigError(f"bootstrap_confidence must be in (0, 1), got {self.bootstrap_confidence}")
        if self.bootstrap_seed < 0:
            raise ConfigError(f"bootstrap_seed must be non-negative, got {self.bootstrap_seed}")

    def to_dict(self) -> dict:
        """The knobs plus the fixed conventions, JSON-ready."""
        return {**asdict(self), "probe_conditions": list(PROBE_CONDITIONS), "conventions": dict(CONVENTIONS)}
