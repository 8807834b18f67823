"""The spaCy component's `topics` switch: doc.spans["topics"] as runs of whole sentences, off by default."""

from __future__ import annotations

import pytest
import spacy

from segmenter.errors import ConfigError
from tests.test_topics_cli import COOKING, FOOTBALL


@pytest.fixture(scope="module")
def tiny_nlp(tiny_bert_dir, one_torch_thread):
    nlp = spacy.blank("en")
    nlp.add_pipe(
        "attention_segmenter",
        config={"model": str(tiny_bert_dir), "strategy": "sep-attention", "threshold": 0.5, "topics": True},
    )
    return nlp


TEXTS = ["", "   ", "One.", "A cat sat. A dog barked!\n\nThe end came. Then more.", COOKING + " " + FOOTBALL]


def test_topic_spans_are_runs_of_whole_sentences(tiny_nlp):
    for doc in tiny_nlp.pipe(TEXTS, batch_size=2):
        sentences = [s for s in doc.sents if not all(t.is_space for t in s)] if len(doc) else []
        topics = list(doc.spans["topics"])
        starts = [s.start for s in sentences]
        ends = [s.end for s in sentences]
        covered = 0
        for topic in topics:
            first, last = starts.index(topic.start), ends.index(topic.end)
            covered += last - first + 1
        assert covered == len(sentences)
        assert [t.start for t in topics] == sorted(t.start for t in topics)


def test_off_by_default_and_saved_with_the_pipeline(tiny_bert_dir, tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("attention_segmenter", config={"model": str(tiny_bert_dir), "strategy": "sep-attention"})
    assert "topics" not in nlp("A cat sat. A dog barked.").spans
    nlp.get_pipe("attention_segmenter").topics = True
    nlp.get_pipe("attention_segmenter").topic_sensitivity = 2.0
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    component = loaded.get_pipe("attention_segmenter")
    assert (component.topics, component.topic_sensitivity) == (True, 2.0)
    assert "topics" in loaded("A cat sat. A dog barked.").spans


@pytest.mark.parametrize("config", [{"topic_sensitivity": 0}, {"topic_sensitivity": -1.0}])
def test_bad_topic_settings_are_one_config_error(config):
    from segmenter.integrations.spacy import AttentionSegmenter

    nlp = spacy.blank("en")
    with pytest.raises(ConfigError):
        nlp.add_pipe("attention_segmenter", config=config)
    with pytest.raises(ConfigError):
        AttentionSegmenter(topics="yes")


def test_real_backbone_topics_in_a_doc():
    nlp = spacy.blank("en")
    nlp.add_pipe("attention_segmenter", config={"topics": True})
    doc = nlp(COOKING + " " + FOOTBALL)
    assert [span.text for span in doc.spans["topics"]] == [COOKING, FOOTBALL]
