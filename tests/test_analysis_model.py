"""The head analysis end to end: tiny random 12x12 BERT for shapes and the CLI, the real backbone (slow)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from segmenter.analysis.analyze import period_token_ids, run_analysis
from segmenter.analysis.inputs import build_texts, pad_batch
from segmenter.analysis.params import AnalysisParams
from segmenter.analysis.plots import FIGURES
from segmenter.analysis.probe_layers import GapSet, document_windows, f1_score, is_test_document
from segmenter.analysis.report import write_report
from segmenter.cli.analyze import analyze
from segmenter.gold.corpus import Document

SENTENCES = [
    "The cat sat on the mat.",
    "It was a sunny day in the park.",
    "Dogs barked at the mailman again!",
    "Why would anyone do that?",
    "We left early, before the rain came.",
    "Nobody knew the answer to the question.",
    "The train was late by ten minutes.",
    "She smiled and waved goodbye.",
]
REQUIRED_KEYS = {
    "model",
    "n_layers",
    "n_heads",
    "params",
    "sep_attention",
    "cls_attention",
    "mean_pair_distance",
    "distance_ratio_last_first",
    "within_sentence_fraction",
    "anchor_tokens",
    "anchor_uniqueness",
    "repetition_heads",
    "probe_f1_by_layer",
    "claims",
}


def make_docs(count: int = 6) -> list[Document]:
    docs = []
    for number in range(count):
        picked = [SENTENCES[(number + k) % len(SENTENCES)] for k in range(3 + number % 3)]
        docs.append(Document(f"doc{number}", tuple(picked)))
    return docs


def write_conllu(path, docs: list[Document]) -> None:
    lines = []
    for doc in docs:
        lines.append(f"# newdoc id = {doc.id}")
        for number, sentence in enumerate(doc.sentences):
            lines += [
                f"# sent_id = {doc.id}-{number}",
                f"# text = {sentence}",
                "1\tx\tx\tX\t_\t_\t0\troot\t_\t_",
                "",
            ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


SMALL_PROBE = {"probe_max_train_gaps": 400, "probe_max_test_gaps": 200}


@pytest.fixture(scope="module")
def tiny_analysis(tiny_encoder):
    return run_analysis(
        tiny_encoder, make_docs(), AnalysisParams(top_percent=5.0, **SMALL_PROBE), "hand-made"
    )


def test_shapes_on_a_tiny_12_layer_12_head_bert(tiny_analysis):
    heads = tiny_analysis.heads
    assert set(heads) >= REQUIRED_KEYS
    assert (heads["n_layers"], heads["n_heads"]) == (12, 12)
    for key in ("sep_attention", "cls_attention", "period_attention", "anchor_tokens", "anchor_share"):
        assert np.array(heads[key]).shape == (12, 12), key
    for key in (
        "mean_pair_distance",
        "within_sentence_fraction",
        "anchor_uniqueness",
        "sep_attention_by_layer",
    ):
        assert len(heads[key]) == 12, key
    assert set(heads["probe_f1_by_layer"]) == {"clean", "corrupt"}
    assert all(len(scores) == 12 for scores in heads["probe_f1_by_layer"].values())
    assert all(len(v) == 12 for v in heads["probe_average_precision_by_layer"].values())
    assert len(heads["distance_histogram"]["counts"]) == 12
    assert heads["n_texts"] == 6 and heads["n_documents"] == 6


def test_values_are_in_range_and_json_clean(tiny_analysis):
    heads = tiny_analysis.heads
    json.dumps(heads, allow_nan=False)
    attention = np.array(heads["sep_attention"]) + np.array(heads["cls_attention"])
    assert np.all(attention >= 0) and np.all(attention <= 1 + 1e-6)
    within = np.array(heads["within_sentence_fraction"])
    assert np.all((within >= 0) & (within <= 1))
    assert all(d >= 1 for d in heads["mean_pair_distance"])
    assert all(isinstance(token, str) for row in heads["anchor_tokens"] for token in row)
    assert [c["claim"] for c in heads["claims"]] == [
        "final layers focus on separators",
        "distance shrinks with depth",
        "within-sentence share grows with depth",
        "heads have unique anchors",
    ]
    assert all(isinstance(c["holds"], bool) and c["evidence"] for c in heads["claims"])
    for claim in heads["claims"]:  # every number's interval is over the six analysed documents
        assert claim["verdict"] in ("holds", "does not hold", "undecided")
        assert claim["holds"] == (claim["verdict"] == "holds")
        assert (claim["n_documents"], claim["resamples"], claim["confidence"]) == (6, 1000, 0.95)
        for condition in claim["conditions"]:
            low, high = condition["interval"]
            assert low <= condition["value"] <= high
    params = heads["params"]
    assert params["top_percent"] == 5.0 and params["max_tokens_used"] == 128
    assert "pairs" in params["conventions"]


def test_report_files(tiny_analysis, tmp_path):
    paths = write_report(tiny_analysis, tmp_path / "out")
    report = paths["report"].read_text(encoding="utf-8")
    for name in FIGURES.values():
        assert (tmp_path / "out" / name).stat().st_size > 1000, name
        assert f"]({name})" in report
    assert json.loads(paths["heads"].read_text(encoding="utf-8"))["n_heads"] == 12
    for claim in tiny_analysis.heads["claims"]:
        assert claim["claim"] in report
    verdicts = ("**holds**", "**does not hold**", "**undecided**")
    assert sum(report.count(verdict) for verdict in verdicts) == 4
    assert "| 95% interval |" in report and "over the 6 analysed texts" in report
    assert "1000 resamples" in report


def test_attention_rows_sum_to_one_with_padding(tiny_encoder):
    check_attention_rows(tiny_encoder)


def check_attention_rows(enc) -> None:
    texts = list(build_texts(make_docs(3), lambda s: enc.tokenize(s).ids, enc.cls_id, enc.sep_id, 128, 2))
    ids, mask = pad_batch(texts, enc.pad_id)
    layers = tuple(range(1, enc.n_layers + 1))
    capture = enc.forward(ids, mask, layers=layers, attention_layers=layers)
    assert capture.attentions.shape == (enc.n_layers, 3, enc.n_heads, ids.shape[1], ids.shape[1])
    for row, text in enumerate(texts):
        n = len(text)
        att = capture.attentions[:, row, :, :n]  # (L, H, n, T) rows of the real queries
        np.testing.assert_allclose(att[..., :n].sum(axis=-1), 1.0, atol=1e-5)
        assert np.all(att[..., n:] == 0)  # padding keys get nothing


def test_period_ids(tiny_encoder):
    ids = period_token_ids(tiny_encoder.tokenizer)
    assert tiny_encoder.tokenizer.convert_tokens_to_ids(".") in ids
    assert all(tiny_encoder.tokenizer.convert_ids_to_tokens(i).strip("#") == "." for i in ids)


def test_too_short_documents_are_refused(tiny_encoder):
    from segmenter.errors import InputError

    with pytest.raises(InputError, match="sentences"):
        run_analysis(tiny_encoder, [Document("d", ("Only one sentence.",))], AnalysisParams(probe=False))


# ----------------------------------------------------------------------------- probe data


def test_gap_labels_follow_gold_sentence_starts(tiny_encoder):
    doc = Document("d", ("Hello there.", "Bye now.", "Ok"))
    (window,) = document_windows(doc, tiny_encoder.tokenize, 64)
    tokens = tiny_encoder.tokenize(doc.text)
    starts = [doc.text[tokens.offsets[t, 0] : tokens.offsets[t, 1]] for t in window.gaps[window.labels]]
    assert starts == ["Bye", "Ok"]
    assert window.labels.sum() == 2 and len(window.labels) == len(window.gaps)


def test_gaps_across_windows_are_skipped(tiny_encoder):
    doc = Document("d", ("one two three four five six seven eight.",))
    windows = document_windows(doc, tiny_encoder.tokenize, 5)  # 3 tokens per window
    assert all(w.gaps.min() >= 1 and w.gaps.max() < len(w.ids) for w in windows)
    assert sum(len(w.gaps) for w in windows) < len(tiny_encoder.tokenize(doc.text)) - 1


def test_gap_set_keeps_everything_below_its_cap():
    gaps = GapSet(cap=10)
    gaps.add(np.ones((4, 2, 3)), np.zeros(4, dtype=bool))
    gaps.add(np.full((3, 2, 3), 2.0), np.ones(3, dtype=bool))
    x, y = gaps.arrays()
    assert x.shape == (7, 2, 3) and y.tolist() == [False] * 4 + [True] * 3
    assert x[:, 0, 0].tolist() == [1, 1, 1, 1, 2, 2, 2]


def test_gap_set_samples_uniformly_beyond_its_cap():
    gaps = GapSet(cap=200, seed=0)
    for block in range(10):  # 2000 gaps offered in ten blocks; feature = block number
        gaps.add(np.full((200, 1, 1), float(block)), np.full(200, block % 2 == 1))
    x, y = gaps.arrays()
    assert x.shape == (200, 1, 1) and gaps.seen == 2000
    per_block = np.bincount(x[:, 0, 0].astype(int), minlength=10)
    assert per_block.min() >= 5  # late blocks are represented, not just the first one
    assert np.all(y == (x[:, 0, 0].astype(int) % 2 == 1))  # features and labels stay paired


def test_documents_alternate_between_splits():
    tests = [is_test_document(i, 2 / 3) for i in range(300)]
    assert sum(tests) == 100 and not any(tests[:2]) and tests[2]
    assert sum(is_test_document(i, 0.8) for i in range(100)) == 20


def test_f1_score():
    truth = np.array([True, True, False, False])
    assert f1_score(truth, truth) == 1.0
    assert f1_score(truth, ~truth) == 0.0


# ----------------------------------------------------------------------------- CLI


def test_cli_writes_the_report(tiny_bert_dir, tmp_path):
    data = tmp_path / "tiny.conllu"
    write_conllu(data, make_docs(5))
    out = tmp_path / "report"
    args = ["--model", str(tiny_bert_dir), "--dataset", f"conllu:{data}", "--max-docs", "4"]
    args += ["--top-percent", "2", "--no-progress", "--out", str(out)]
    result = CliRunner().invoke(analyze, args)
    assert result.exit_code == 0, result.output
    heads = json.loads((out / "heads.json").read_text(encoding="utf-8"))
    assert heads["n_documents"] == 4 and heads["params"]["top_percent"] == 2.0
    assert heads["command"].startswith("segmenter analyze --model ")
    assert "--max-docs 4 --top-percent 2" in heads["command"]
    assert (out / "report.md").exists() and (out / FIGURES["sep_attention"]).exists()
    assert "distance shrinks with depth:" in result.output
    assert "95% interval [" in result.output and "(4 documents)" in result.output
    assert heads["params"]["bootstrap_resamples"] == 1000 and "--resamples" not in heads["command"]


def test_cli_without_probe(tiny_bert_dir, tmp_path):
    data = tmp_path / "tiny.conllu"
    write_conllu(data, make_docs(2))
    out = tmp_path / "report"
    args = ["--model", str(tiny_bert_dir), "--dataset", f"conllu:{data}", "--no-probe", "--no-progress"]
    result = CliRunner().invoke(analyze, args + ["--out", str(out)])
    assert result.exit_code == 0, result.output
    heads = json.loads((out / "heads.json").read_text(encoding="utf-8"))
    assert heads["probe_f1_by_layer"] == {} and not (out / FIGURES["probe_f1"]).exists()


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["--dataset", "no-such-set"], 1, "unknown dataset"),
        (["--dataset", "conllu:/no/such/file.conllu"], 1, "not found"),
        (["--top-percent", "0"], 2, "top-percent"),
        (["--max-docs", "0"], 2, "max-docs"),
        (["--resamples", "10"], 2, "resamples"),
    ],
)
def test_cli_errors(tmp_path, args, code, message):
    result = CliRunner().invoke(analyze, args + ["--no-progress", "--out", str(tmp_path / "o")])
    assert result.exit_code == code
    assert message in result.output
    assert "Traceback" not in result.output


def test_cli_unknown_model(tmp_path):
    data = tmp_path / "tiny.conllu"
    write_conllu(data, make_docs(2))
    args = [
        "--model",
        str(tmp_path / "missing-model"),
        "--dataset",
        f"conllu:{data}",
        "--out",
        str(tmp_path / "o"),
    ]
    result = CliRunner().invoke(analyze, args)
    assert result.exit_code == 1 and "missing-model" in result.output


# ----------------------------------------------------------------------------- real backbone


@pytest.mark.slow
def test_attention_rows_sum_to_one_on_the_real_model(real_encoder):
    check_attention_rows(real_encoder)


@pytest.mark.slow
def test_real_model_on_ewt_dev(real_encoder):
    from segmenter.gold.specs import load_dataset

    docs = list(load_dataset("ewt-dev").documents[:8])
    analysis = run_analysis(real_encoder, docs, AnalysisParams(**SMALL_PROBE), "ewt-dev")
    heads = analysis.heads
    assert (heads["n_layers"], heads["n_heads"]) == (6, 12)
    assert np.array(heads["sep_attention"]).shape == (6, 12)
    # the analysis sees real structure: head vectors pair up tokens of one sentence far above chance
    assert max(heads["within_sentence_fraction"]) > 2 * heads["chance"]["within_sentence_fraction"]
    assert all(0 <= f <= 1 for f in heads["probe_f1_by_layer"]["clean"] if f is not None)
    assert analysis.example is not None and analysis.example.text.n_sentences >= 2
