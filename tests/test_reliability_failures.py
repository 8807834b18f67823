"""Reliability, failures: inputs that must fail with exit code 1 and one clear line on stderr, writing
nothing to the output path; the --encoding/--errors options; interrupted runs.

Failing inputs: binary files, non-UTF-8 files (the message says so and offers --encoding), UTF-16 without
--encoding, directories, missing and unreadable files (for real: with chmod 000, as an unprivileged user
when the tests run as root), `--model` naming something that is not a BERT-family encoder, corrupted
probe files in `models/` (the error names the file), an output folder that cannot be written,
a stdout that cannot encode the text. Every one is run with `-o PATH` both when PATH exists (it must keep its
previous content) and when it does not (it must not appear), and no temporary file may be left.

Interrupted runs: a subprocess running `segmenter segment ... -o out.txt` gets SIGINT, SIGTERM, SIGHUP or
SIGQUIT once its temporary file appears (or once that file holds part of the output); afterwards the
target holds exactly its previous content or does not exist, and no temporary file is left. An ignored
SIGHUP (nohup) stays ignored.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import pytest
from click.testing import CliRunner
from invariants import assert_invariants

from segmenter.api import Segmenter
from segmenter.cli import main as cli
from segmenter.cli.main import main
from segmenter.encoder.torch.encoder import packaged_model_path

ROOT = Path(__file__).resolve().parents[1]
SHIPPED_PROBE = ROOT / "models" / "all-MiniLM-L6-v2" / "accurate"  # the default preset
PREVIOUS = "previous output\n"
TEXT = "The bus was late again. Nobody seemed surprised.\n\nA new paragraph starts here."
NOBODY = 65534


@pytest.fixture(scope="module")
def runner():
    return CliRunner()


@pytest.fixture(params=["previous output", "no output yet"])
def target(request, tmp_path):
    """The -o path: it either holds PREVIOUS already or does not exist."""
    path = tmp_path / "out" / "out.txt"
    path.parent.mkdir()
    if request.param == "previous output":
        path.write_text(PREVIOUS, encoding="utf-8")
    return path


@pytest.fixture
def sample(tmp_path):
    path = tmp_path / "sample.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


def assert_clean_failure(result, *needles: str, target: Path | None = None) -> str:
    """Exit status 1, exactly one line on stderr holding every needle, no traceback, nothing written."""
    assert result.exit_code == 1, (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert "Traceback" not in result.output
    if target is not None:
        assert_untouched(target)
    return lines[0]


def assert_untouched(target: Path) -> None:
    if target.exists():
        assert target.read_text(encoding="utf-8") == PREVIOUS
    leftovers = [p.name for p in target.parent.iterdir() if p.name not in (target.name,)]
    assert leftovers == [], f"temporary files left: {leftovers}"


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# -- unreadable inputs -------------------------------------------------------------------------------


BINARY = {
    "ELF executable": b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00",
    "PNG image": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10",
    "gzip archive": b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xcbH\xcd\xc9\xc9\x07\x00",
    "text with one NUL": b"It rained all day.\x00 We stayed in.",
}


@pytest.mark.parametrize("kind", list(BINARY))
def test_binary_file(runner, tmp_path, target, kind):
    path = write(tmp_path / "input.bin", BINARY[kind] * 50)
    result = runner.invoke(main, ["segment", str(path), "-o", str(target)])
    assert_clean_failure(result, str(path), "binary", target=target)


def test_binary_file_without_nul_bytes_is_refused_as_undecodable(runner, tmp_path, target):
    path = write(tmp_path / "noise.bin", bytes(range(0x80, 0x100)) * 40)
    result = runner.invoke(main, ["segment", str(path), "-o", str(target)])
    assert_clean_failure(result, str(path), "not valid utf-8", "--encoding", target=target)


@pytest.mark.parametrize(
    ("name", "data", "offset"),
    [
        ("latin-1", "Le café est fermé. Il pleut.".encode("latin-1"), 6),
        ("cp1252", "He said \u201chello\u201d. Then \u20ac5.".encode("cp1252"), 8),
        ("truncated utf-8", "Zoë’s café".encode()[:-1], 12),
    ],
)
def test_non_utf8_file_says_so_and_offers_encoding(runner, tmp_path, target, name, data, offset):
    path = write(tmp_path / "legacy.txt", data)
    result = runner.invoke(main, ["segment", str(path), "-o", str(target)])
    line = assert_clean_failure(result, str(path), "not valid utf-8", "--encoding", target=target)
    assert f"offset {offset}" in line


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32"])
def test_utf16_or_utf32_file_without_encoding_option_is_named_as_such(runner, tmp_path, target, encoding):
    """Regression: a UTF-16 file (with its byte-order mark) was called a binary file."""
    wide = "utf-32" if "32" in encoding else "utf-16"
    data = ("\ufeff" + TEXT).encode(encoding)
    path = write(tmp_path / "wide.txt", data)
    result = runner.invoke(main, ["segment", str(path), "-o", str(target)])
    assert_clean_failure(result, str(path), f"is {wide} text", f"--encoding {wide}", target=target)


def test_directory(runner, tmp_path, target):
    folder = tmp_path / "folder"
    folder.mkdir()
    result = runner.invoke(main, ["segment", str(folder), "-o", str(target)])
    assert_clean_failure(result, str(folder), "is a directory", target=target)


def test_missing_file_among_good_ones(runner, sample, tmp_path, target):
    missing = tmp_path / "missing.txt"
    result = runner.invoke(main, ["segment", str(sample), str(missing), str(sample), "-o", str(target)])
    assert_clean_failure(result, str(missing), "no such file", target=target)


@contextlib.contextmanager
def unprivileged():
    """Run the body as an ordinary user: when the tests run as root (who reads any file whatever its
    mode), the effective user and group become nobody and are restored afterwards."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        yield
        return
    try:
        os.setegid(NOBODY)
        os.seteuid(NOBODY)
    except PermissionError:  # pragma: no cover - a root without CAP_SETUID (some containers)
        os.setegid(0)
        pytest.skip(
            "running as root without the right to drop privileges; the PermissionError path is still "
            "covered by test_read_permission_error_is_one_clear_line"
        )
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


@pytest.fixture
def open_folder():
    """A folder everyone may enter (pytest's tmp_path sits below a root-only folder when run as root)."""
    folder = Path(tempfile.mkdtemp(prefix="segmenter-reliability-"))
    folder.chmod(0o755)
    yield folder
    for parent, folders, _ in os.walk(folder):  # top-down: open each folder before looking inside
        for name in folders:
            Path(parent, name).chmod(0o755)
    shutil.rmtree(folder)


def test_unreadable_file(runner, open_folder, target):
    path = write(open_folder / "secret.txt", TEXT.encode())
    path.chmod(0o000)
    with unprivileged():
        result = runner.invoke(main, ["segment", str(path), "-o", str(target)])
    assert_clean_failure(result, str(path), "permission denied", target=target)


def test_file_in_a_folder_that_cannot_be_entered(runner, open_folder, target):
    """Regression: the directory check itself raised PermissionError (a traceback)."""
    inner = open_folder / "private"
    inner.mkdir()
    path = write(inner / "notes.txt", TEXT.encode())
    inner.chmod(0o700 if os.geteuid() == 0 else 0o000)
    with unprivileged():
        result = runner.invoke(main, ["segment", str(path), "-o", str(target)])
    assert_clean_failure(result, str(path), "permission denied", target=target)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        pytest.param(PermissionError(13, "Permission denied"), ("permission denied",), id="permission"),
        pytest.param(OSError(5, "Input/output error"), ("cannot read", "Input/output error"), id="other"),
    ],
)
def test_read_errors_are_one_clear_line(runner, sample, target, monkeypatch, error, expected):
    """Read errors without relying on file modes (which root ignores)."""
    real_open = Path.open

    def failing(self, *args, **kwargs):
        if self == sample:
            raise type(error)(error.errno, error.strerror, str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", failing)
    result = runner.invoke(main, ["segment", str(sample), "-o", str(target)])
    assert_clean_failure(result, str(sample), *expected, target=target)


# -- outputs that cannot be written ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_similarity(tiny_bert_dir):
    return Segmenter(model=str(tiny_bert_dir), strategy="similarity")


def build_returning(segmenter):
    return lambda *args, **kwargs: segmenter


def test_output_folder_that_cannot_be_written(runner, open_folder, tiny_similarity):
    source = write(open_folder / "input.txt", TEXT.encode())
    locked = open_folder / "locked"
    locked.mkdir()
    (locked / "out.txt").write_text(PREVIOUS, encoding="utf-8")
    locked.chmod(0o555)
    with mock.patch.object(cli, "_build", build_returning(tiny_similarity)), unprivileged():
        result = runner.invoke(main, ["segment", str(source), "-o", str(locked / "out.txt")])
    assert_clean_failure(result, "cannot write to", str(locked), target=locked / "out.txt")


def test_output_inside_a_folder_that_cannot_be_entered(runner, open_folder, tiny_similarity):
    """Regression: checking the output path raised PermissionError (a traceback)."""
    source = write(open_folder / "input.txt", TEXT.encode())
    private = open_folder / "private"
    private.mkdir()
    private.chmod(0o700 if os.geteuid() == 0 else 0o000)
    with mock.patch.object(cli, "_build", build_returning(tiny_similarity)), unprivileged():
        result = runner.invoke(main, ["segment", str(source), "-o", str(private / "out.txt")])
    assert_clean_failure(result, "cannot write to", str(private))
    private.chmod(0o755)
    assert list(private.iterdir()) == []


@pytest.mark.parametrize(
    "make", [lambda d: d / "no-such-folder" / "out.txt", lambda d: d], ids=["missing folder", "directory"]
)
def test_output_path_missing_folder_or_directory(runner, sample, tmp_path, tiny_similarity, make):
    output = make(tmp_path)
    with mock.patch.object(cli, "_build", build_returning(tiny_similarity)):
        result = runner.invoke(main, ["segment", str(sample), "-o", str(output)])
    assert_clean_failure(result, "does not exist" if output != tmp_path else "is a directory")


def test_stdout_that_cannot_encode_the_text(sample, tiny_similarity):
    """Regression: an ASCII stdout (PYTHONIOENCODING=ascii, an old terminal) gave a UnicodeEncodeError
    traceback; now it is one line that points to -o (always UTF-8)."""
    sample.write_text("Zoë’s café opened. It was 🎉 busy!", encoding="utf-8")
    with mock.patch.object(cli, "_build", build_returning(tiny_similarity)):
        result = CliRunner(charset="ascii").invoke(main, ["segment", str(sample)])
    assert_clean_failure(result, "stdout", "cannot encode", "-o")


# -- --encoding and --errors ----------------------------------------------------------------------------


def jsonl_spans(stdout: str) -> list:
    return [SimpleNamespace(**json.loads(line)) for line in stdout.splitlines() if line]


@pytest.mark.parametrize(
    ("encoding", "text", "data"),
    [
        ("latin-1", "Le café est fermé. Il pleut à Noël.", None),
        ("cp1252", "He said \u201chello\u201d. It cost \u20ac5 \u2013 too much.", None),
        ("koi8-r", "Привет. Как дела?", None),
        ("shift_jis", "今日は晴れです。We went out.", None),
        ("utf-16", TEXT, None),  # with a byte-order mark, CRLF and a blank line
        ("UTF16", TEXT, None),  # an alias: regression, it was refused as binary (NUL bytes)
        ("utf-16-le", TEXT, None),
        ("utf-8-sig", TEXT, "\ufeff".encode() + TEXT.encode()),
    ],
)
def test_encoding_option_decodes_legacy_files(runner, tmp_path, tiny_similarity, encoding, text, data):
    text = text.replace("\n", "\r\n")
    path = write(tmp_path / "legacy.txt", data.replace(b"\n", b"\r\n") if data else text.encode(encoding))
    with mock.patch.object(cli, "_build", build_returning(tiny_similarity)):
        result = runner.invoke(main, ["segment", "--format", "jsonl", "--encoding", encoding, str(path)])
    assert result.exit_code == 0, result.output
    spans = jsonl_spans(result.stdout)
    assert spans and all(span.file == str(path) for span in spans)
    assert_invariants(text, spans)  # offsets index the decoded text, which is the original text


def test_errors_replace_substitutes_undecodable_bytes(runner, tmp_path, tiny_similarity):
    data = "Zoë’s café. It was busy!".encode() + b" \xff\xfe bad \xc3 bytes. Fin."
    path = write(tmp_path / "mixed.txt", data)
    with mock.patch.object(cli, "_build", build_returning(tiny_similarity)):
        strict = runner.invoke(main, ["segment", str(path)])
        result = runner.invoke(main, ["segment", "--format", "jsonl", "--errors", "replace", str(path)])
    assert_clean_failure(strict, "not valid utf-8", "--errors replace")
    assert result.exit_code == 0, result.output
    text = data.decode("utf-8", errors="replace")
    assert text.count("\ufffd") == 3
    assert_invariants(text, jsonl_spans(result.stdout))


@pytest.mark.parametrize(
    ("encoding", "message"),
    [("klingon", "unknown encoding"), ("base64", "not a text encoding"), ("rot13", "not a text encoding")],
)
def test_bad_encoding_names(runner, sample, target, encoding, message):
    """Regression (base64, rot13): a codec that is not a text encoding gave a LookupError traceback."""
    result = runner.invoke(main, ["segment", "--encoding", encoding, str(sample), "-o", str(target)])
    assert_clean_failure(result, repr(encoding), message, target=target)


def test_errors_option_accepts_only_strict_or_replace(runner, sample):
    result = runner.invoke(main, ["segment", "--errors", "ignore", str(sample)])
    assert result.exit_code == 2 and "strict" in result.stderr and "replace" in result.stderr


# -- --model that is not a BERT-family encoder ------------------------------------------------------------


def copy_tokenizer(folder: Path) -> None:
    source = packaged_model_path()
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        shutil.copy(source / name, folder / name)


@pytest.fixture(scope="module")
def not_encoders(tmp_path_factory, tiny_bert_dir):
    """Folders (and a file) that --model may wrongly name."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model, PreTrainedTokenizerFast

    torch.manual_seed(0)
    base = tmp_path_factory.mktemp("not-encoders")
    made = {}

    made["gpt2"] = base / "gpt2"  # a decoder, saved with a (BERT) fast tokenizer so that it loads
    config = GPT2Config(n_layer=2, n_head=2, n_embd=16, n_positions=64, vocab_size=30522)
    config.bos_token_id = config.eos_token_id = None
    GPT2Model(config).save_pretrained(made["gpt2"])
    copy_tokenizer(made["gpt2"])

    made["garbage config"] = base / "garbage"
    made["garbage config"].mkdir()
    (made["garbage config"] / "config.json").write_text("{not json", encoding="utf-8")

    made["config is a list"] = base / "list-config"
    made["config is a list"].mkdir()
    (made["config is a list"] / "config.json").write_text("[]", encoding="utf-8")
    copy_tokenizer(made["config is a list"])

    made["corrupted weights"] = base / "corrupted-weights"
    shutil.copytree(tiny_bert_dir, made["corrupted weights"])
    weights = made["corrupted weights"] / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])

    made["tokenizer without [CLS]"] = base / "no-cls"
    bert = BertConfig(
        vocab_size=8, hidden_size=16, num_hidden_layers=4, num_attention_heads=2, intermediate_size=16
    )
    BertModel(bert).save_pretrained(made["tokenizer without [CLS]"])
    words = Tokenizer(models.WordLevel({"[UNK]": 0, "the": 1, "bus": 2}, unk_token="[UNK]"))
    words.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=words, unk_token="[UNK]")
    tokenizer.save_pretrained(made["tokenizer without [CLS]"])

    made["empty folder"] = base / "empty"
    made["empty folder"].mkdir()

    made["a text file"] = base / "notes.txt"
    made["a text file"].write_text(TEXT, encoding="utf-8")
    return made


NOT_LOADABLE = "is not a loadable Hugging Face encoder"


@pytest.mark.parametrize(
    ("kind", "strategy", "message"),
    [
        ("gpt2", "probe", "is not a BERT-family encoder"),
        ("gpt2", "similarity", "is not a BERT-family encoder"),
        ("garbage config", "probe", NOT_LOADABLE),
        ("config is a list", "probe", NOT_LOADABLE),  # regression: TypeError traceback
        ("config is a list", "sep-attention", NOT_LOADABLE),
        ("corrupted weights", "probe", NOT_LOADABLE),  # regression: SafetensorError traceback
        ("tokenizer without [CLS]", "probe", "without [CLS]/[SEP]"),  # regression: TypeError traceback
        ("tokenizer without [CLS]", "similarity", "without [CLS]/[SEP]"),
        ("empty folder", "probe", NOT_LOADABLE),
        ("a text file", "probe", NOT_LOADABLE),
    ],
)
def test_model_that_is_not_a_bert_family_encoder(
    runner, sample, target, not_encoders, kind, strategy, message
):
    model = not_encoders[kind]
    args = ["segment", "--model", str(model), "--strategy", strategy, str(sample), "-o", str(target)]
    result = runner.invoke(main, args)
    assert_clean_failure(result, message, target=target)


# -- corrupted probe files in models/ -------------------------------------------------------------------


def npz_bytes(**arrays) -> bytes:
    import io

    import numpy as np

    buffer = io.BytesIO()
    np.savez(buffer, **{k: np.asarray(v) for k, v in arrays.items()})
    return buffer.getvalue()


def shipped_arrays_with_nan() -> bytes:
    """The shipped probe's own arrays (whatever their names) with one value made NaN."""
    import numpy as np

    with np.load(SHIPPED_PROBE / "probe.npz") as data:
        arrays = {name: np.array(data[name]) for name in data.files}
    first = next(iter(arrays))
    arrays[first].flat[0] = np.nan
    return npz_bytes(**arrays)


def meta_with(**changes) -> bytes:
    meta = json.loads((SHIPPED_PROBE / "meta.json").read_text(encoding="utf-8"))
    return json.dumps({**meta, **changes}).encode()


PROBE_CORRUPTIONS = [
    pytest.param("probe.npz", lambda: b"not a zip file", id="npz garbage"),
    pytest.param("probe.npz", lambda: (SHIPPED_PROBE / "probe.npz").read_bytes()[:5000], id="npz truncated"),
    pytest.param("probe.npz", lambda: b"", id="npz empty"),
    pytest.param("probe.npz", lambda: None, id="npz missing"),
    pytest.param("probe.npz", lambda: npz_bytes(x=[1.0]), id="npz without the probe arrays"),
    pytest.param("probe.npz", shipped_arrays_with_nan, id="npz nan"),
    pytest.param("meta.json", lambda: b'{"backbone": "all-MiniLM', id="meta truncated"),
    pytest.param("meta.json", lambda: b"", id="meta empty"),
    pytest.param("meta.json", lambda: b"[1, 2]", id="meta not an object"),
    pytest.param("meta.json", lambda: '{"x": "café"}'.encode("latin-1"), id="meta not utf-8"),
    pytest.param("meta.json", lambda: None, id="meta missing"),
    pytest.param("meta.json", lambda: b"{}", id="meta without keys"),
    pytest.param("meta.json", lambda: meta_with(threshold="high"), id="meta bad threshold"),
    pytest.param("meta.json", lambda: meta_with(layers=[0]), id="meta layer 0"),
    pytest.param(
        "meta.json",
        lambda: meta_with(thresholds={"clean": "x"}),
        id="meta bad thresholds",
    ),
    pytest.param("meta.json", lambda: meta_with(thresholds=5), id="meta thresholds not a dict"),
    pytest.param(
        "meta.json",
        lambda: meta_with(surface=not json.loads(meta_with())["surface"]),
        id="meta features do not fit the arrays",
    ),
]


@pytest.mark.parametrize(("name", "corrupt"), PROBE_CORRUPTIONS)
def test_corrupted_probe_file_in_models_names_the_file(
    runner, sample, target, tmp_path, monkeypatch, name, corrupt
):
    models = tmp_path / "models"
    shipped = models / SHIPPED_PROBE.parent.name / SHIPPED_PROBE.name  # models/<backbone>/<preset>
    shutil.copytree(SHIPPED_PROBE, shipped)
    broken = shipped / name
    data = corrupt()
    if data is None:
        broken.unlink()
    else:
        broken.write_bytes(data)
    monkeypatch.setenv("SEGMENTER_MODELS", str(models))
    result = runner.invoke(main, ["segment", str(sample), "-o", str(target)])
    assert_clean_failure(result, str(broken), target=target)


# -- interrupted runs ------------------------------------------------------------------------------------


def segmenter_command(*args: str) -> list[str]:
    """`segmenter ARGS`, run as `python -m segmenter.cli.main` (the console script's entry point, found
    whether or not the virtual environment's bin folder is on PATH)."""
    return [sys.executable, "-m", "segmenter.cli.main", *args]


def child_environment() -> dict[str, str]:
    pythonpath = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": pythonpath, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}


@contextlib.contextmanager
def interruptible_children():
    """Children inherit ignored SIGINT, SIGHUP and SIGQUIT when the tests run under `nohup` or in a
    background job; give them the defaults, as in an interactive shell where Ctrl-C, a hang-up or
    Ctrl-\\ reaches them (the output handling rightly leaves an ignored signal ignored)."""
    defaults = {signal.SIGINT: signal.default_int_handler, signal.SIGHUP: signal.SIG_DFL}
    defaults[signal.SIGQUIT] = signal.SIG_DFL
    ignored = [signum for signum in defaults if signal.getsignal(signum) == signal.SIG_IGN]
    for signum in ignored:
        signal.signal(signum, defaults[signum])
    try:
        yield
    finally:
        for signum in ignored:
            signal.signal(signum, signal.SIG_IGN)


def temporary_files(folder: Path, target: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.name.startswith(f".{target.name}.") and p.name.endswith(".tmp")]


@pytest.mark.parametrize(
    ("signum", "layout", "previous"),
    [
        (signal.SIGINT, "big.txt", True),
        (signal.SIGTERM, "big.txt", False),
        (signal.SIGINT, "many files, partly written", False),
        (signal.SIGTERM, "many files, partly written", True),
        (signal.SIGHUP, "big.txt", True),
        (signal.SIGQUIT, "many files, partly written", False),
    ],
    ids=[
        "SIGINT-big-previous",
        "SIGTERM-big-none",
        "SIGINT-partial-none",
        "SIGTERM-partial-previous",
        "SIGHUP-big-previous",
        "SIGQUIT-partial-none",
    ],
)
def test_interrupted_run_leaves_previous_file_or_nothing(tmp_path, tiny_bert_dir, signum, layout, previous):
    words = ["the", "bus", "was", "late", "again", "nobody", "seemed", "surprised", "we", "waited"]
    if layout == "big.txt":
        inputs = [write(tmp_path / "big.txt", (" ".join(words) + ". ").encode() * 3000)]
    else:  # more texts than one Segmenter.pipe chunk (256): the first chunk is written before the rest runs
        inputs = [
            write(tmp_path / f"doc{i:03}.txt", (" ".join(words[i % 5 :]) + ". ").encode() * 4)
            for i in range(600)
        ]
    target = tmp_path / "out.txt"
    if previous:
        target.write_text(PREVIOUS, encoding="utf-8")
    options = ["--model", str(tiny_bert_dir), "--strategy", "similarity", "--format", "jsonl"]
    command = segmenter_command("segment", *options, *map(str, inputs), "-o", str(target))
    with interruptible_children():
        child = subprocess.Popen(
            command, env=child_environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
    try:
        partial = None
        deadline = time.monotonic() + 180
        while child.poll() is None and time.monotonic() < deadline:
            found = temporary_files(tmp_path, target)
            if found and (layout == "big.txt" or found[0].stat().st_size > 0):
                partial = found[0].read_bytes()
                break
            time.sleep(0.002)
        assert partial is not None, f"no temporary file seen before the run ended: {child.communicate()}"
        child.send_signal(signum)
        _, stderr = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 1, stderr
    assert stderr.strip().splitlines()[-1] == "Aborted!"
    if layout != "big.txt":
        assert partial.count(b"\n") >= 1  # the run really was half-way through writing
    if previous:
        assert target.read_text(encoding="utf-8") == PREVIOUS
    else:
        assert not target.exists()
    assert temporary_files(tmp_path, target) == []


RACE = """
import os, signal, sys
from segmenter.io import AtomicOutput

real_open = os.open

def open_then_signal(path, flags, *args, **kwargs):
    fd = real_open(path, flags, *args, **kwargs)
    if str(path).endswith(".tmp"):
        os.kill(os.getpid(), getattr(signal, sys.argv[2]))  # the moment the temporary file exists
    return fd

os.open = open_then_signal
try:
    with AtomicOutput(sys.argv[1]) as out:
        out.write("new content\\n")
except KeyboardInterrupt:
    sys.exit(130)
"""


@pytest.mark.parametrize(
    "signame", ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM"]
)
@pytest.mark.parametrize("previous", [True, False])
def test_signal_the_moment_the_temporary_file_appears(tmp_path, signame, previous):
    """Regression: a signal between the creation of the temporary file and the moment AtomicOutput knew
    its name (or had its handlers in place) left the file behind; SIGHUP (a closed terminal, a lost ssh
    session) and the other signals that end a process left it behind at any moment."""
    script = write(tmp_path / "race.py", RACE.encode())
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "out.txt"
    if previous:
        target.write_text(PREVIOUS, encoding="utf-8")
    with interruptible_children():
        done = subprocess.run(
            [sys.executable, str(script), str(target), signame],
            env=child_environment(),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 130, done.stderr
    assert sorted(p.name for p in folder.iterdir()) == (["out.txt"] if previous else [])
    if previous:
        assert target.read_text(encoding="utf-8") == PREVIOUS


def test_ignored_hangup_stays_ignored(tmp_path):
    """Under nohup SIGHUP is ignored: the output handling must not turn it into an interruption."""
    script = write(
        tmp_path / "race.py",
        RACE.replace("try:", "signal.signal(signal.SIGHUP, signal.SIG_IGN)\ntry:").encode(),
    )
    target = tmp_path / "out.txt"
    target.write_text(PREVIOUS, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), str(target), "SIGHUP"],
        env=child_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert target.read_text(encoding="utf-8") == "new content\n"
    assert temporary_files(tmp_path, target) == []
