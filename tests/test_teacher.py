"""Distillation: a tuned probe as teacher gives the segmenter's own probabilities, and a student learns
from them."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from segmenter.cli import main
from segmenter.config import WindowConfig
from segmenter.corpus import Document
from segmenter.encoder import Encoder
from segmenter.errors import ConfigError
from segmenter.extract import window_inputs
from segmenter.probe import Probe
from segmenter.segmenter import Segmenter
from segmenter.teacher import Teacher
from segmenter.tune import TuneConfig, _example, _teacher_targets, tune_probe
from segmenter.windows import plan

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
