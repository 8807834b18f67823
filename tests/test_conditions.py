"""The conditions are named once (`segmenter.text.conditions`) and every module reads those names."""

from __future__ import annotations

import pytest

from segmenter.analysis import params
from segmenter.errors import ConfigError
from segmenter.gold import corpus
from segmenter.gold.corpus import Document
from segmenter.text import conditions
from segmenter.text.conditions import (
    CLEAN,
    CORRUPT,
    JUDGED_CONDITIONS,
    LAYOUTS,
    LINES,
    SPOKEN,
    TEXT_CONDITIONS,
    TRAINING_CONDITIONS,
    WRAPPED,
)
from segmenter.training import probe as train
from segmenter.training import tune


def test_the_names_are_those_stored_in_probe_meta_files():
    assert (CLEAN, CORRUPT, LINES, WRAPPED) == ("clean", "corrupt", "lines", "wrapped")
    assert TEXT_CONDITIONS == ("clean", "corrupt")
    assert SPOKEN == "spoken" and JUDGED_CONDITIONS == ("clean", "corrupt", "spoken")
    assert LAYOUTS == ("lines", "wrapped")
    assert TRAINING_CONDITIONS == ("clean", "corrupt", "lines", "wrapped")


@pytest.mark.parametrize(
    ("value", "shared"),
    [
        (train.CONDITIONS, TEXT_CONDITIONS),
        (train.LAYOUTS, LAYOUTS),
        (corpus.LAYOUTS, LAYOUTS),
        (params.PROBE_CONDITIONS, TEXT_CONDITIONS),
        (train.TrainConfig().conditions, TEXT_CONDITIONS),
        (tune.TuneConfig().conditions, TRAINING_CONDITIONS),
    ],
    ids=["train.CONDITIONS", "train.LAYOUTS", "corpus.LAYOUTS", "PROBE_CONDITIONS", "TrainConfig", "Tune"],
)
def test_modules_read_the_shared_tuples(value, shared):
    assert value is shared


def test_a_text_is_judged_under_one_of_the_text_conditions():
    assert conditions.condition_for("so we left early") is CORRUPT
    assert conditions.condition_for("So we left.") is CLEAN


def test_training_lays_documents_out_under_each_condition_and_refuses_others():
    doc = Document("d", ("Title", "Hi There.", "Bye now."), paragraph_starts=(1,))
    laid_out = dict(train.conditioned([doc], TRAINING_CONDITIONS))
    assert laid_out[CLEAN].text == "Title Hi There. Bye now."
    assert laid_out[CORRUPT].text == "title hi there bye now"
    assert laid_out[LINES].text == "Title\nHi There. Bye now."
    assert set(laid_out) == set(conditions.TRAINING_CONDITIONS)
    with pytest.raises(ConfigError, match="use clean, corrupt, lines, wrapped$"):
        train.conditioned([doc], ["shouting"])


def test_the_segmenter_keeps_one_decoding_per_judged_condition(tiny_bert_dir):
    from segmenter.api import Segmenter

    segmenter = Segmenter(model=str(tiny_bert_dir), strategy="similarity")
    assert tuple(segmenter.decodings) == JUDGED_CONDITIONS
    # without a spoken threshold of its own, spoken text decodes as unpunctuated text does
    assert segmenter.decodings[SPOKEN] == segmenter.decodings[CORRUPT]


def test_spoken_text_is_unpunctuated_text_with_fillers_or_speaker_labels():
    assert (
        conditions.condition_for("okay so um thanks everyone for joining today i know it's early") is SPOKEN
    )
    assert conditions.condition_for("A: so we shipped it\nB: yeah\nA: and then we left") is SPOKEN
    assert conditions.condition_for("so we left early and the rain kept on falling all day") is CORRUPT
    # one filler in more than a hundred words is not speech enough
    assert conditions.condition_for("um " + "we left early " * 40) is CORRUPT
    assert conditions.condition_for("Um, so we left early.") is CLEAN  # punctuated text is clean


def test_a_spoken_threshold_in_the_probe_meta_decodes_spoken_text_only(
    tiny_bert_dir, tiny_probe_dir, tmp_path
):
    import json
    import shutil

    from segmenter.api import Segmenter

    probe = tmp_path / "probe"
    shutil.copytree(tiny_probe_dir, probe)
    meta = json.loads((probe / "meta.json").read_text())
    meta["thresholds"] = {**meta.get("thresholds", {}), CORRUPT: 0.3, SPOKEN: 0.8}
    (probe / "meta.json").write_text(json.dumps(meta))
    segmenter = Segmenter(model=str(tiny_bert_dir), probe=str(probe))
    assert segmenter.decoding_for("so um we left").threshold == 0.8
    assert segmenter.decoding_for("so we left").threshold == 0.3
    forced = Segmenter(model=str(tiny_bert_dir), probe=str(probe), threshold=0.5)
    assert forced.decoding_for("so um we left").threshold == 0.5  # a threshold given applies to all text


def test_line_headers_do_not_make_a_transcript_look_punctuated():
    from segmenter.text.conditions import CLEAN, condition_for

    labelled = "A: okay so um thanks everyone\nB: yeah sure\nspeaker 2: so i looked at the numbers"
    assert condition_for(labelled) == SPOKEN  # unpunctuated, and labelled lines read as speech
    chat = "[09:15] <Jo_B> mira: works fine now\n[09:16] <Mira> ok"
    assert condition_for(chat) == SPOKEN
    assert condition_for("A: Okay, so thanks everyone.\nB: Yeah, sure.") == CLEAN
    assert condition_for("Questions: if you have any") == CLEAN  # one capitalised word is no label
