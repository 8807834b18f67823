"""`segmenter train probe` and `segmenter train tune` through click's CliRunner: every option of the
single `train` command they replace belongs to one of them (or both) with its default, an option of the
other subcommand is a usage error naming it, and the form without a subcommand still runs the same
training."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from segmenter.cli.main import main
from segmenter.cli.train import probe, tune

# every option of `segmenter train` before the split -> where it went
SHARED = {
    "--data", "--out", "--model", "--signals", "--no-signals", "--line-breaks", "--no-line-breaks",
    "--conditions", "--unmarked-share", "--hidden-units", "--window-size", "--stride", "--holdout",
    "--seed", "--split-seed", "--batch-size", "--precision", "--progress", "--no-progress",
}  # fmt: skip
PROBE_ONLY = {
    "--layers", "--hidden", "--no-hidden", "--vectors", "--no-vectors", "--surface", "--no-surface",
    "--context", "--kind", "--c", "--members", "--refit", "--no-refit",
}  # fmt: skip
TUNE_ONLY = {"--tune-blocks", "--rank", "--epochs", "--learning-rate"}
ADDED_TO_TUNE = {
    "--keep-heads",
    "--keep-units",
    "--teacher",
    "--teacher-weight",
    "--read-stride",
    "--teacher-model",
}  # later


def option_names(command) -> set[str]:
    return {name for param in command.params for name in (*param.opts, *param.secondary_opts)}


def defaults(command) -> dict:
    return {param.name: param.default for param in command.params}


def test_every_option_of_the_single_command_kept_its_place_and_default():
    assert option_names(probe) == SHARED | PROBE_ONLY
    assert option_names(tune) == SHARED | TUNE_ONLY | ADDED_TO_TUNE | {"--blocks"}  # --tune-blocks' new name
    frozen, tuned = defaults(probe), defaults(tune)
    common = {"conditions": "both", "unmarked_share": 0.0, "window_size": 128, "stride": None}
    common |= {"holdout": 0.2, "seed": 0, "split_seed": None, "batch_size": 16, "precision": "auto"}
    for name, value in common.items():
        assert frozen[name] == tuned[name] == value, name
    frozen_only = {"layers": "2,3,4", "hidden": True, "vectors": False, "surface": True, "context": 1}
    frozen_only |= {"kind": "mlp", "c": 0.005, "members": 1, "refit": False}
    assert {name: frozen[name] for name in frozen_only} == frozen_only
    assert (tuned["rank"], tuned["epochs"], tuned["learning_rate"]) == (16, 8, 5e-4)
    assert (tuned["heads"], tuned["units"]) == (None, None)  # no block is narrowed unless asked
    assert (tuned["teacher"], tuned["teacher_weight"]) == (None, 0.5)  # no teacher unless asked
    assert tuned["read_stride"] is None  # the probe reads at the stride it trained at unless asked
    # the defaults the single command chose by --tune-blocks: signals, hidden units, line breaks (None:
    # those of --surface)
    assert (frozen["signals"], frozen["hidden_units"], frozen["line_breaks"]) == (True, 128, None)
    assert (tuned["signals"], tuned["hidden_units"], tuned["line_breaks"]) == (False, 256, True)


def test_read_stride_is_written_to_the_probe_and_the_training_stride_kept(
    tmp_path, tiny_conllu, tiny_bert_dir
):
    from segmenter import Segmenter

    runner = CliRunner()
    args = [
        "train",
        "tune",
        "--data",
        f"conllu:{tiny_conllu}",
        "--model",
        str(tiny_bert_dir),
        "--blocks",
        "1",
    ]
    args += ["--rank", "2", "--epochs", "1", "--hidden-units", "8", "--window-size", "16", "--stride", "8"]
    result = runner.invoke(main, [*args, "--read-stride", "13", "--out", str(tmp_path / "p")])
    assert result.exit_code == 0, result.output
    meta = json.loads((tmp_path / "p" / "meta.json").read_text(encoding="utf-8"))
    assert meta["window"] == {"size": 16, "stride": 13} and meta["tuned"]["window_stride"] == 8
    assert Segmenter(model=str(tiny_bert_dir), probe=str(tmp_path / "p")).window.stride == 13
    too_far = runner.invoke(main, [*args, "--read-stride", "14", "--out", str(tmp_path / "q")])
    assert too_far.exit_code == 2 and "window stride must be between 1 and size-3=13" in too_far.output
    assert not (tmp_path / "q").exists()


def test_training_refuses_int8_which_runs_no_torch_blocks():
    runner = CliRunner()
    for command in ("probe", "tune"):
        result = runner.invoke(
            main, ["train", command, "--data", "ewt-dev", "--out", "x", "--precision", "int8"]
        )
        assert result.exit_code == 2 and "'int8' is not one of 'auto', 'float32', 'bfloat16'" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tune", "--blocks", "1", "--layers", "1,2"], "--layers describes a probe of the frozen encoder"),
        (["tune", "--blocks", "1", "--no-surface"], "--no-surface describes a probe of the frozen encoder"),
        (["probe", "--rank", "2"], "--rank applies only with --tune-blocks"),
        (["probe", "--tune-blocks", "2"], "--tune-blocks is an option of `main train tune`, not"),
        (["--learning-rate", "0.01"], "--learning-rate applies only with --tune-blocks"),  # the old form
        (["--tune-blocks", "1", "--refit"], "--refit describes a probe of the frozen encoder"),
        (["probe", "--no-such-option"], "No such option"),
    ],
)
def test_an_option_of_the_other_subcommand_is_a_usage_error_naming_it(tmp_path, args, message):
    data = ["--data", f"conllu:{tmp_path / 'missing.conllu'}", "--out", str(tmp_path / "p")]
    result = CliRunner().invoke(main, ["train", *args, *data])
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output


def test_the_group_lists_its_subcommands():
    for args in (["train"], ["train", "--help"], ["train", "-h"]):
        result = CliRunner().invoke(main, args)
        assert "probe" in result.output and "tune" in result.output, args
        assert "--data" not in result.output  # the group's own help, not a subcommand's


@pytest.fixture
def train_args(tmp_path, tiny_conllu, tiny_bert_dir):
    def make(out: str, *options: str) -> list[str]:
        data = ["--data", f"conllu:{tiny_conllu}", "--out", str(tmp_path / out)]
        return [*data, "--model", str(tiny_bert_dir), "--no-progress", *options]

    return make


def written(result, folder) -> tuple[dict, bytes]:
    assert result.exit_code == 0, result.output
    return json.loads((folder / "meta.json").read_text()), (folder / "probe.npz").read_bytes()


SMALL_TUNE = ["--rank", "2", "--epochs", "1", "--hidden-units", "8", "--window-size", "16"]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (["--layers", "1", "--window-size", "16"], ["probe", "--layers", "1", "--window-size", "16"]),
        (["--tune-blocks", "1", *SMALL_TUNE], ["tune", "--blocks", "1", *SMALL_TUNE]),
    ],
    ids=["probe", "tune"],
)
def test_the_form_without_a_subcommand_trains_the_same_probe(tmp_path, train_args, old, new):
    runner = CliRunner()
    before = written(runner.invoke(main, ["train", *train_args("old", *old)]), tmp_path / "old")
    after = written(runner.invoke(main, ["train", new[0], *train_args("new", *new[1:])]), tmp_path / "new")
    assert before == after


def test_train_writes_a_probe_that_segments(runner, tmp_path, tiny_conllu, tiny_bert_dir):
    data = tiny_conllu
    out = tmp_path / "probe"
    args = ["train", "probe", "--data", f"conllu:{data}", "--out", str(out), "--model", str(tiny_bert_dir)]
    shape = ["--layers", "1,2", "--window-size", "16", "--members", "2"]
    result = runner.invoke(main, [*args, *shape])
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "meta.json").read_text())
    assert meta["training_data"][0].startswith(f"conllu:{data}")
    assert meta["members"] == 2 and meta["unmarked_share"] == 0.0
    assert meta["window"] == {"size": 16, "stride": 12}  # the stride follows the window: 3/4 of it
    for bad in (["--layers", "3,2"], ["--window-size", "16", "--stride", "14"], ["--unmarked-share", "1.5"]):
        refused = runner.invoke(main, [*args, *bad])
        assert refused.exit_code == 2, (bad, refused.output)
    assert runner.invoke(main, [*args, "--members", "0"]).exit_code == 2
    logistic = runner.invoke(main, [*args, "--members", "2", "--kind", "logistic"])
    assert logistic.exit_code == 2 and "--kind mlp" in logistic.output
    text = "The dog ran. It stopped."
    seg = runner.invoke(main, ["segment", "--model", str(tiny_bert_dir), "--probe", str(out)], input=text)
    assert seg.exit_code == 0, seg.output
    assert " ".join(seg.stdout.split()) == text
    unprobed = runner.invoke(main, ["segment", "--model", str(tiny_bert_dir)], input=text)
    assert unprobed.exit_code == 1 and "no trained probe" in unprobed.stderr


def test_a_long_run_logs_its_progress_as_lines_where_stderr_is_no_terminal(monkeypatch):
    """Under nohup or into a log file the bar is written as plain lines (no carriage returns), not
    dropped; on a terminal it stays a bar, and a run without progress writes nothing."""
    import io

    from segmenter.cli.common import progress_bar

    log = io.StringIO()
    monkeypatch.setattr("sys.stderr", log)
    with progress_bar(3, True, unit="step", log_every=0.0) as bar:
        for _ in range(3):
            bar.update(1)
    lines = log.getvalue().splitlines()
    assert "\r" not in log.getvalue()
    assert any("3/3" in line and "step" in line for line in lines)
    quiet = io.StringIO()
    monkeypatch.setattr("sys.stderr", quiet)
    with progress_bar(3, False, unit="step", log_every=0.0) as bar:
        bar.update(3)
    with progress_bar(3, True, unit="step") as bar:  # no log_every: silent where stderr is no terminal
        bar.update(3)
    assert quiet.getvalue() == ""
