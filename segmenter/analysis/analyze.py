"""Run the attention-head analysis over gold documents: model passes in, a JSON-ready result out.

`run_analysis` streams documents through the encoder in memory-bounded batches, folds every text into a
`HeadAccumulator` (stats.py), runs the per-layer boundary probe (probe_layers.py) and returns an
`Analysis`: the heads.json content (plain lists and numbers, claims with their bootstrap intervals
over the analysed documents included) plus the one example text the figures draw. Leaves out: argument
parsing, files, plots.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from tqdm import tqdm

from segmenter.analysis import probe_layers
from segmenter.analysis.claims import evaluate_claims
from segmenter.analysis.inputs import build_texts, pad_batch, plan_batches
from segmenter.analysis.params import PROBE_CONDITIONS, AnalysisParams
from segmenter.analysis.stats import Example, HeadAccumulator
from segmenter.encoder.torch.encoder import Encoder
from segmenter.errors import InputError
from segmenter.gold.corpus import Document

PAIR_KEYS = (
    "mean_pair_distance",
    "mean_pair_distance_by_head",
    "distance_ratio_last_first",
    "within_sentence_fraction",
    "within_sentence_fraction_by_head",
    "anchor_share",
    "anchor_uniqueness",
    "repetition_share",
    "sep_pair_share",
)


@dataclass(frozen=True)
class Analysis:
    """heads: the heads.json content; example: the text drawn in the similarity figure (or None)."""

    heads: dict
    example: Example | None
    example_tokens: tuple[str, ...]


def period_token_ids(tokenizer) -> tuple[int, ...]:
    """Vocabulary ids whose token is '.' once subword markers (##, Ġ, ▁) are stripped."""
    vocab = tokenizer.get_vocab()
    return tuple(sorted(i for token, i in vocab.items() if token.replace("##", "").lstrip("Ġ▁") == "."))


def run_analysis(
    enc: Encoder,
    documents: Sequence[Document],
    params: AnalysisParams | None = None,
    dataset: str = "",
    progress: bool = False,
) -> Analysis:
    """The full analysis of `documents` (all of them; cut the list beforehand to limit it)."""
    params = params or AnalysisParams()
    if not documents:
        raise InputError("no documents to analyze; check the dataset spec and --max-docs")
    max_tokens = min(params.max_tokens or enc.max_positions, enc.max_positions)
    acc = HeadAccumulator(
        n_layers=enc.n_layers,
        n_heads=enc.n_heads,
        vocab_size=max(len(enc.tokenizer), int(enc.model.config.vocab_size)),
        max_tokens=max_tokens,
        cls_id=enc.cls_id,
        sep_id=enc.sep_id,
        period_ids=period_token_ids(enc.tokenizer),
        top_percent=params.top_percent,
        example_max_tokens=params.example_max_tokens,
    )
    skipped = _accumulate(enc, documents, params, acc, max_tokens, progress)
    if acc.texts == 0:
        raise InputError(
            f"none of the {len(documents)} documents has {params.min_sentences} sentences within "
            f"{max_tokens} tokens; use a dataset with multi-sentence documents"
        )
    probe = _probe(enc, documents, params, progress) if params.probe else None
    summary = acc.summary(params.repetition_threshold)
    heads = _heads_json(enc, summary, params, dataset, len(documents), skipped, max_tokens, probe)
    heads["claims"] = evaluate_claims(heads, params, acc.documents())
    tokens = ()
    if acc.example is not None:
        tokens = tuple(enc.tokenizer.convert_ids_to_tokens(acc.example.text.ids.tolist()))
    return Analysis(heads=heads, example=acc.example, example_tokens=tokens)


def _accumulate(enc, documents, params, acc: HeadAccumulator, max_tokens: int, progress: bool) -> int:
    """Feed every usable document through the encoder into `acc`; returns how many were skipped."""
    layers = tuple(range(1, enc.n_layers + 1))
    bar = tqdm(total=len(documents), desc="heads", unit="doc", disable=not progress, leave=False)
    skipped = 0

    def usable():
        nonlocal skipped
        texts = build_texts(
            documents, _token_ids(enc), enc.cls_id, enc.sep_id, max_tokens, params.min_sentences
        )
        for text in texts:
            bar.update(1)
            if text is None:
                skipped += 1
            else:
                yield text

    budget = params.attention_budget_mb * 2**20
    for batch in plan_batches(usable(), enc.n_layers, enc.n_heads, budget):
        ids, mask = pad_batch(batch, enc.pad_id)
        capture = enc.forward(ids, mask, layers=layers, attention_layers=layers)
        for row, text in enumerate(batch):
            n = len(text)
            attentions = capture.attentions[:, row, :, :n, :n]  # (L, H, T, T)
            contexts = capture.contexts[:, row, :n]  # (L, T, H, d)
            acc.add(text, attentions, contexts)
        del capture
    bar.close()
    return skipped


def _token_ids(enc):
    return lambda sentence: enc.tokenize(sentence).ids


def _probe(enc, documents, params: AnalysisParams, progress: bool) -> dict:
    """Per-layer probe F1 and gap counts for each condition."""
    window = min(params.probe_window, enc.max_positions)
    out = {}
    for condition in PROBE_CONDITIONS:
        docs = probe_layers.condition_documents(documents, condition)
        bar = tqdm(total=len(docs), desc=f"probe {condition}", unit="doc", disable=not progress, leave=False)
        train, test = probe_layers.collect_gaps(
            enc,
            docs,
            window,
            params.probe_train_fraction,
            (params.probe_max_train_gaps, params.probe_max_test_gaps),
            on_document=lambda bar=bar: bar.update(1),
        )
        bar.close()
        _, y_train = train.arrays()
        _, y_test = test.arrays()
        scores = probe_layers.score_layers(train, test, enc.n_layers, params.probe_c)
        out[condition] = {
            "f1_by_layer": scores.f1,
            "average_precision_by_layer": scores.average_precision,
            "train_documents": train.documents,
            "test_documents": test.documents,
            "train_gaps_seen": train.seen,
            "test_gaps_seen": test.seen,
            "train_gaps": int(len(y_train)),
            "train_boundaries": int(y_train.sum()),
            "test_gaps": int(len(y_test)),
            "test_boundaries": int(y_test.sum()),
        }
    return out


def _heads_json(enc, summary, params, dataset, n_documents, skipped, max_tokens, probe) -> dict:
    dot = summary["dot"]
    anchors = dot["anchor_tokens"]
    heads = {
        "model": enc.name,
        "dataset": dataset,
        "n_layers": enc.n_layers,
        "n_heads": enc.n_heads,
        "head_dim": enc.head_dim,
        "special_tokens": {"cls": _token(enc, enc.cls_id), "sep": _token(enc, enc.sep_id)},
        "params": {**params.to_dict(), "max_tokens_used": max_tokens},
        "n_documents": n_documents,
        "n_documents_skipped": skipped,
        "n_texts": summary["n_texts"],
        "n_sentences": summary["n_sentences"],
        "n_tokens": summary["n_tokens"],
    }
    for name in ("sep", "cls", "period"):
        matrix = summary[f"{name}_attention"]
        heads[f"{name}_attention"] = _clean(matrix)
        heads[f"{name}_attention_by_layer"] = _clean(matrix.mean(axis=1))
    heads.update(_pair_json(dot))
    heads["text_weighted"] = {key: _clean(value) for key, value in dot["text_weighted"].items()}
    heads["distance_change_percent"] = _clean(100.0 * (dot["distance_ratio_last_first"] - 1.0))
    heads["distance_histogram"] = _histogram(dot["distance_histogram"])
    heads["anchor_tokens"] = [[_token(enc, int(i)) for i in row] for row in anchors]
    heads["anchor_token_ids"] = anchors.tolist()
    heads["repetition_heads"] = [
        {
            "layer": layer,
            "head": head,
            "repetition_share": _clean(dot["repetition_share"][layer - 1, head - 1]),
            "sep_pair_share": _clean(dot["sep_pair_share"][layer - 1, head - 1]),
            "anchor": heads["anchor_tokens"][layer - 1][head - 1],
        }
        for layer, head in dot["repetition_heads"]
    ]
    heads["chance"] = {
        "within_sentence_fraction": _clean(summary["chance_within_sentence_fraction"]),
        "mean_pair_distance": _clean(summary["chance_mean_pair_distance"]),
    }
    cosine = summary["cosine"]
    heads["cosine"] = {
        **_pair_json(cosine),
        "anchor_tokens": [[_token(enc, int(i)) for i in row] for row in cosine["anchor_tokens"]],
        "repetition_heads": [list(pair) for pair in cosine["repetition_heads"]],
    }
    probe = probe or {}
    heads["probe_f1_by_layer"] = {c: v["f1_by_layer"] for c, v in probe.items()}
    heads["probe_average_precision_by_layer"] = {c: v["average_precision_by_layer"] for c, v in probe.items()}
    heads["probe"] = probe
    return heads


def _pair_json(stats: dict) -> dict:
    return {key: _clean(stats[key]) for key in PAIR_KEYS}


def _histogram(histogram: np.ndarray) -> dict:
    """Per-layer distance counts trimmed after the largest observed distance."""
    nonzero = np.nonzero(histogram.sum(axis=0))[0]
    end = int(nonzero[-1]) + 1 if nonzero.size else 0
    return {"distance_from": 0, "counts": histogram[:, :end].tolist()}


def _token(enc, token_id: int) -> str | None:
    return None if token_id < 0 else enc.tokenizer.convert_ids_to_tokens(token_id)


def _clean(value, digits: int = 5):
    """Numbers and arrays as JSON-ready nested lists, rounded, NaN as None."""
    array = np.asarray(value, dtype=np.float64)
    if array.ndim == 0:
        number = float(array)
        return None if math.isnan(number) else round(number, digits)
    return [_clean(v, digits) for v in array]
