"""`segmenter segment` through click's CliRunner: formats, output, exit codes (`segmenter train`:
tests/test_train_cli.py)."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from segmenter.cli.main import main, one_line

TEXT = "The bus was late again. Nobody on the platform seemed surprised.\n\nA new paragraph starts here."


@pytest.fixture
def sample(tmp_path):
    path = tmp_path / "sample.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def test_lines_format(runner, sample):
    result = runner.invoke(main, ["segment", str(sample)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "The bus was late again.",
        "Nobody on the platform seemed surprised.",
        "A new paragraph starts here.",
    ]


def test_jsonl_offsets_index_the_decoded_file(runner, tmp_path):
    text = "Zoë’s café opened. It was 🎉 busy!\r\nThe end."
    path = tmp_path / "u.txt"
    path.write_bytes(text.encode("utf-8"))
    result = runner.invoke(main, ["segment", "--format", "jsonl", str(path)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["index"] for r in records] == list(range(len(records)))
    for record in records:
        assert record["file"] == str(path)
        assert text[record["start"] : record["end"]] == record["text"]
    assert "".join(r["text"] for r in records).replace(" ", "") == "".join(text.split())


def test_stdin_and_dash(runner):
    for args in (["segment"], ["segment", "-"]):
        result = runner.invoke(main, args, input="One thing happened. Then another thing happened.")
        assert result.exit_code == 0, result.output
        assert len(result.stdout.splitlines()) == 2


def test_lines_format_keeps_one_segment_per_line():
    assert one_line("a\nb\r\n  c\u2028d") == "a b c d"


def test_output_file_written_atomically(runner, sample, tmp_path):
    target = tmp_path / "out.txt"
    result = runner.invoke(main, ["segment", str(sample), "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert target.read_text(encoding="utf-8").count("\n") == 3
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symbolic links")
def test_output_keeps_links_and_permissions(runner, sample, tmp_path):
    real, link = tmp_path / "real.txt", tmp_path / "link.txt"
    real.write_text("previous\n", encoding="utf-8")
    real.chmod(0o600)
    link.symlink_to(real)
    result = runner.invoke(main, ["segment", str(sample), "-o", str(link)])
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert real.read_text(encoding="utf-8").count("\n") == 3
    assert stat.S_IMODE(real.stat().st_mode) == 0o600


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_output_to_a_named_pipe_is_written_in_place(runner, sample, tmp_path):
    """A pipe or device (/dev/null, process substitution) is written to, never replaced by a file."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    result = runner.invoke(main, ["segment", str(sample), "-o", str(fifo)])
    reader.join(timeout=60)
    assert result.exit_code == 0, result.output
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert received and received[0].count("\n") == 3


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
def test_output_to_an_open_descriptor_appends_in_place(runner, sample, tmp_path):
    """`-o /dev/fd/N` of a shell `N>>log` redirection: appended to, never replaced by a new file."""
    log = tmp_path / "log.txt"
    log.write_text("earlier line\n", encoding="utf-8")
    inode = log.stat().st_ino
    with open(log, "a", encoding="utf-8") as handle:
        result = runner.invoke(main, ["segment", str(sample), "-o", f"/proc/self/fd/{handle.fileno()}"])
    assert result.exit_code == 0, result.output
    assert log.stat().st_ino == inode
    text = log.read_text(encoding="utf-8")
    assert text.startswith("earlier line\n") and text.count("\n") == 4


@pytest.mark.skipif(not hasattr(os, "mknod") or os.geteuid() != 0, reason="needs mknod (root)")
@pytest.mark.parametrize("size", [1, 3000], ids=["error at close", "error while writing"])
def test_full_device_is_a_one_line_error(runner, tmp_path, size):
    """A write that fails (here a /dev/full device: no space left) is one line on stderr and exit 1."""
    full = tmp_path / "full"
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    source = tmp_path / "in.txt"
    source.write_text("It rained. We stayed in. " * size, encoding="utf-8")
    result = runner.invoke(main, ["segment", "--strategy", "similarity", str(source), "-o", str(full)])
    assert result.exit_code == 1
    assert result.stderr.strip().count("\n") == 0 and "cannot write to" in result.stderr
    assert "No space left" in result.stderr


def test_model_download_check(monkeypatch):
    """Offline switches refuse downloads at once; a proxy resolves the host itself, so no DNS check."""
    from segmenter.encoder.torch.encoder import _why_no_download

    def no_dns(*args, **kwargs):
        raise OSError("no DNS")

    for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY"):
        monkeypatch.delenv(variable, raising=False)
    for variable in ("http_proxy", "ALL_PROXY"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr("segmenter.encoder.torch.encoder.socket.getaddrinfo", no_dns)
    assert "cannot be reached" in _why_no_download()
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert _why_no_download() == ""
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    assert "TRANSFORMERS_OFFLINE" in _why_no_download()


def test_failed_run_leaves_previous_output_untouched(runner, sample, tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("previous\n", encoding="utf-8")
    result = runner.invoke(main, ["segment", str(sample), str(tmp_path / "missing.txt"), "-o", str(target)])
    assert result.exit_code == 1
    assert target.read_text(encoding="utf-8") == "previous\n"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing.txt", "no such file"),
        (lambda d: d, "is a directory"),
        (lambda d: _write(d / "latin.txt", "café".encode("latin-1")), "not valid utf-8"),
        (lambda d: _write(d / "bin.dat", b"\x7fELF\x00\x00\x01"), "binary"),
    ],
)
def test_input_errors_exit_1_with_one_line(runner, tmp_path, make, message):
    path = make(tmp_path)
    result = runner.invoke(main, ["segment", str(path)])
    assert result.exit_code == 1
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.output


def test_non_utf8_file_decodes_with_encoding_option(runner, tmp_path):
    path = _write(tmp_path / "latin.txt", "Le café est fermé. Il pleut.".encode("latin-1"))
    result = runner.invoke(main, ["segment", "--encoding", "latin-1", str(path)])
    assert result.exit_code == 0
    assert "café" in result.stdout


def test_missing_model_exits_1(runner, sample, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = runner.invoke(main, ["segment", "--model", "no-such-org/no-such-model", str(sample)])
    assert result.exit_code == 1
    assert "no-such-org/no-such-model" in result.stderr and "local path" in result.stderr
    assert "HF_HUB_OFFLINE" in result.stderr


def test_missing_model_without_a_network_is_one_line_at_once(runner, sample, monkeypatch):
    """Without HF_HUB_OFFLINE and without a network, the hub client would retry for most of a minute and
    log every retry; the host check makes it a one-line error straight away."""

    def no_network(*args, **kwargs):
        raise OSError("Name or service not known")

    for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY"):
        monkeypatch.delenv(variable, raising=False)  # a proxy in the environment would let the hub client try
    for variable in ("http_proxy", "ALL_PROXY"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr("segmenter.encoder.torch.encoder.socket.getaddrinfo", no_network)
    result = runner.invoke(main, ["segment", "--model", "no-such-org/no-such-model", str(sample)])
    assert result.exit_code == 1
    assert result.stderr.strip().count("\n") == 0
    assert "huggingface.co cannot be reached" in result.stderr and "local path" in result.stderr


def test_usage_errors_exit_2(runner, sample):
    assert runner.invoke(main, ["segment", "--format", "xml", str(sample)]).exit_code == 2
    assert runner.invoke(main, ["segment", "--threshold", "2", str(sample)]).exit_code == 2
    assert runner.invoke(main, ["segment", "--strategy", "magic", str(sample)]).exit_code == 2


def _write(path, data: bytes):
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("given", "other_busy_cores", "expected"),
    [(None, 1.0, "PASSIVE"), (None, None, "PASSIVE"), (None, 0.0, None), ("ACTIVE", 1.0, "ACTIVE")],
)
def test_commands_choose_the_openmp_wait_policy_from_the_load_unless_the_user_chose(
    monkeypatch, tmp_path, given, other_busy_cores, expected
):
    """Passive waiting on a busy machine (or one whose load cannot be read), libgomp's default on a
    quiet one, the user's choice always."""
    from segmenter.encoder import wait_policy

    if given is None:
        monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    else:
        monkeypatch.setenv("OMP_WAIT_POLICY", given)
    monkeypatch.setattr(wait_policy, "other_busy_cores", lambda: other_busy_cores)
    result = CliRunner().invoke(main, ["segment", str(tmp_path / "missing.txt")])
    assert result.exit_code == 1  # the command ran (and refused the missing file)
    assert os.environ.get("OMP_WAIT_POLICY") == expected


def test_python_dash_m_runs_the_cli_with_every_command():
    """`python -m segmenter.cli.main` (how the tests and some users run it) loads the commands that import
    `segmenter.cli.main` themselves without an import cycle."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "segmenter.cli.main", "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    for command in ("segment", "topics", "models", "bench", "analyze", "train"):
        assert f"  {command} " in done.stdout


def test_config_options_hand_the_command_one_segmenter_config(runner):
    """`segment` and `topics` read their segmenter settings from one SegmenterConfig built by the
    shared options: the defaults are SegmenterConfig's, and each option sets its field."""
    import click

    from segmenter.cli.common import CONFIG_OPTIONS, config_options
    from segmenter.config import SegmenterConfig

    seen = []

    @click.command()
    @config_options
    def command(config):
        seen.append(config)

    assert set(CONFIG_OPTIONS) == set(SegmenterConfig.field_names()) - {"max_chars"}
    assert runner.invoke(command, []).exit_code == 0
    args = ["--model", "m", "--strategy", "similarity", "--threshold", "0.3", "--device", "meta"]
    args += ["--precision", "float32", "--preset", "fast", "--batch-size", "4", "--probe", "p", "--alone"]
    assert runner.invoke(command, args).exit_code == 0
    assert seen == [
        SegmenterConfig(),
        SegmenterConfig(
            model="m", strategy="similarity", threshold=0.3, device="meta", precision="float32",
            preset="fast", batch_size=4, probe="p", paired=False,
        ),
    ]  # fmt: skip
