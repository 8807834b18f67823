"""Distillation: a tuned probe as teacher gives the segmenter's own probabilities, and a student learns
from them."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from segmenter.api import Segmenter
from segmenter.cli.main import main
from segmenter.config import FeatureConfig, WindowConfig
from segmenter.encoder.torch.encoder import Encoder
from segmenter.errors import ConfigError
from segmenter.gold.corpus import Document
from segmenter.probe.probe import Probe
from segmenter.readers.extract import window_inputs
from segmenter.readers.windows import plan
from segmenter.training.probe import TrainConfig, train_probe
from segmenter.training.teacher import DocumentTeacher, Teacher, matched_targets
from segmenter.training.tune import TuneConfig, _example, _teacher_targets, tune_probe

pytestmark = pytest.mark.usefixtures("one_torch_thread")

DOCS = [Document(f"d{i}", ("The cat sat down.", "It was tired!", f"Number {i} ended.")) for i in range(6)]
SMALL = dict(rank=2, epochs=2, hidden_units=8, window=WindowConfig(16, 10), holdout=0.3)


@pytest.fixture(scope="module")
def teacher_probe(tiny_bert_dir) -> Probe:
    return tune_probe(str(tiny_bert_dir), DOCS, TuneConfig(blocks=2, **SMALL), ["synthetic"])


def test_the_teacher_gives_the_segmenters_probabilities(tiny_bert_dir, teacher_probe):
    text = "The dog ran. It stopped!\nthen it slept"
    seg = Segmenter(model=str(tiny_bert_dir), probe=teacher_probe, precision="float32")
    [expected] = seg.gap_probabilities([text])
    teacher = Teacher(str(tiny_bert_dir), teacher_probe, precision="float32")
    tokens = seg.tokenize(text)
    [window] = plan(len(tokens), WindowConfig(128, 96))  # one window holds the whole text
    ids, mask = window_inputs(teacher.encoder, [tokens], [window])
    surface = np.zeros((1, ids.shape[1], tokens.surface.shape[1]), np.float32)
    surface[0, 1 : 1 + len(tokens)] = tokens.surface
    probs = teacher.probabilities(torch.from_numpy(ids), torch.from_numpy(mask), torch.from_numpy(surface))
    # position 1 + i holds text token i; keep the gaps before word-start tokens, as the segmenter does
    gaps = probs[0, 2 : 1 + len(tokens)][tokens.word_start[1:]]
    np.testing.assert_allclose(gaps, expected.probs, rtol=1e-4, atol=1e-5)
    assert teacher.blocks == 2 and teacher.lines


def test_teacher_targets_cover_every_gap_of_every_window(tiny_bert_dir, teacher_probe):
    teacher = Teacher(str(tiny_bert_dir), teacher_probe, precision="float32")
    encoder = Encoder(str(tiny_bert_dir), max_layer=1, precision="float32")
    examples = [_example(encoder, doc, lines=True) for doc in DOCS[:2]]
    windows = [w for i, ex in enumerate(examples) for w in plan(len(ex.tokens), WindowConfig(8, 5), text=i)]
    steps = []
    targets = _teacher_targets(teacher, encoder, examples, windows, 3, steps.append)
    assert [len(t) for t in targets] == [len(w) - 1 for w in windows]
    assert len(steps) == -(-len(windows) // 3)  # one progress step per batch
    assert all(((t > 0) & (t < 1)).all() for t in targets)
    # a window's targets do not depend on the batch it is computed in
    alone = _teacher_targets(teacher, encoder, examples, windows[1:2], 1, None)
    np.testing.assert_allclose(alone[0], targets[1], rtol=1e-4, atol=1e-5)


def test_a_student_learns_from_the_teacher_and_records_it(tiny_bert_dir, teacher_probe, tmp_path):
    folder = teacher_probe.save(tmp_path / "teacher")
    config = TuneConfig(blocks=1, lines=False, teacher=str(folder), teacher_weight=1.0, **SMALL)
    student = tune_probe(str(tiny_bert_dir), DOCS, config, ["synthetic"])
    tuned = student.meta["tuned"]
    assert tuned["blocks"] == 1 and tuned["teacher"] == str(folder) and tuned["teacher_weight"] == 1.0
    assert student.meta["lines"] is False
    plain = tune_probe(str(tiny_bert_dir), DOCS, TuneConfig(blocks=1, lines=False, **SMALL), ["synthetic"])
    assert "teacher" not in plain.meta["tuned"]
    ignored = replace(config, teacher_weight=0.0)  # gold targets alone: the teacher changes nothing else
    np.testing.assert_array_equal(
        tune_probe(str(tiny_bert_dir), DOCS, ignored, ["x"]).weights[0], plain.weights[0]
    )
    assert not np.allclose(student.weights[0], plain.weights[0])  # the teacher's targets were learnt


def test_teachers_it_cannot_run_are_refused(tiny_bert_dir, teacher_probe):
    frozen = Probe(
        teacher_probe.mean,
        teacher_probe.scale,
        teacher_probe.weights,
        teacher_probe.biases,
        teacher_probe.meta,
    )  # no deltas: a probe of the frozen encoder
    with pytest.raises(ConfigError, match="tuned probe"):
        Teacher(str(tiny_bert_dir), frozen)
    with pytest.raises(ConfigError, match="teacher_weight"):
        TuneConfig(teacher="accurate", teacher_weight=1.5)
    with pytest.raises(ConfigError, match="give the teacher too"):
        TuneConfig(teacher_model="all-mpnet-base-v2")


@pytest.fixture(scope="module")
def mpnet_teacher_dir(tiny_mpnet_dir, tmp_path_factory):
    """A frozen probe on the tiny MPNet that reads attention signals: what `Teacher` refuses."""
    encoder = Encoder(str(tiny_mpnet_dir), max_layer=2, precision="float32")
    features = FeatureConfig(layers=(2,), hidden=True, signals=True)
    config = TrainConfig(features=features, window=WindowConfig(16, 10), holdout=0.3)
    return train_probe(encoder, DOCS, config, ["synthetic"]).save(tmp_path_factory.mktemp("mpnet-teacher"))


def test_a_teacher_on_another_backbone_gives_its_segmenters_probabilities_at_the_students_gaps(
    tiny_bert_dir, tiny_mpnet_dir, mpnet_teacher_dir
):
    texts = ["The dog ran. It stopped!\nthen it slept", "no punctuation here at all really"]
    seg = Segmenter(model=str(tiny_mpnet_dir), probe=str(mpnet_teacher_dir), precision="float32")
    expected = seg.gap_probabilities(texts)
    student = Encoder(str(tiny_bert_dir), max_layer=1, precision="float32")
    examples = [_example(student, Document(f"t{i}", (text,)), lines=False) for i, text in enumerate(texts)]
    teacher = DocumentTeacher(str(tiny_mpnet_dir), str(mpnet_teacher_dir), precision="float32")
    targets = teacher.targets(texts, [ex.tokens for ex in examples], [ex.labels for ex in examples])
    for ex, target, gaps in zip(examples, targets, expected, strict=True):
        starts = ex.tokens.offsets[:, 0]
        scored = np.flatnonzero(ex.tokens.word_start & np.isin(starts, gaps.offsets))  # (M,) matched gaps
        assert len(scored) == len(gaps.offsets)  # the two tokenizers agree on every word start here
        np.testing.assert_allclose(target[scored], gaps.probs[np.searchsorted(gaps.offsets, starts[scored])])


def test_a_gap_the_teacher_does_not_score_keeps_its_gold_label():
    starts = np.array([0, 3, 5, 8, 12])  # the student's tokens; the one at 5 continues a word
    word_start = np.array([True, True, False, True, True])
    gold = np.array([-100, 1, -100, 0, 1])
    teacher_offsets = np.array([3, 12, 20])  # no gap at 8; one at 20, past the student's text
    target = matched_targets(starts, word_start, gold, teacher_offsets, np.array([0.2, 0.6, 0.9], np.float32))
    assert target.tolist() == pytest.approx([-100, 0.2, -100, 0.0, 0.6])
    unscored = matched_targets(starts, word_start, gold, np.zeros(0, np.int64), np.zeros(0, np.float32))
    assert unscored.tolist() == gold.tolist()


def test_a_student_learns_from_a_teacher_on_another_backbone(
    tiny_bert_dir, tiny_mpnet_dir, mpnet_teacher_dir
):
    config = TuneConfig(
        blocks=1,
        lines=False,
        teacher=str(mpnet_teacher_dir),
        teacher_model=str(tiny_mpnet_dir),
        teacher_weight=1.0,
        **SMALL,
    )
    steps, totals = [], []
    student = tune_probe(str(tiny_bert_dir), DOCS, config, ["x"], progress=steps.append, start=totals.append)
    tuned = student.meta["tuned"]
    assert tuned["teacher"] == str(mpnet_teacher_dir) and tuned["teacher_model"] == str(tiny_mpnet_dir)
    assert totals == [sum(steps)]  # the teacher's pass is in the progress bar's total
    plain = tune_probe(str(tiny_bert_dir), DOCS, TuneConfig(blocks=1, lines=False, **SMALL), ["x"])
    assert not np.allclose(student.weights[0], plain.weights[0])


def test_train_cli_distils_from_a_teacher_folder(tiny_bert_dir, teacher_probe, tmp_path, tiny_conllu):
    folder = teacher_probe.save(tmp_path / "teacher")
    out = tmp_path / "student"
    args = ["train", "tune", "--data", f"conllu:{tiny_conllu}", "--model", str(tiny_bert_dir)]
    small = ["--blocks", "1", "--rank", "2", "--epochs", "1", "--hidden-units", "8", "--window-size", "16"]
    result = CliRunner().invoke(main, [*args, *small, "--out", str(out), "--teacher", str(folder)])
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "meta.json").read_text())
    assert meta["tuned"]["teacher"] == str(folder) and meta["tuned"]["teacher_weight"] == 0.5
    unknown = CliRunner().invoke(main, [*args, *small, "--out", str(tmp_path / "x"), "--teacher", "nosuch"])
    assert unknown.exit_code == 1 and "unknown preset 'nosuch'" in unknown.output
    assert not (tmp_path / "x").exists()
