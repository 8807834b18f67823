"""precision="int8": the encoder's blocks through an int8 ONNX Runtime graph
(segmenter.encoder.onnx.export)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from invariants import assert_invariants

from segmenter import Segmenter
from segmenter.cli.main import main
from segmenter.config import FeatureConfig, WindowConfig
from segmenter.encoder.torch.encoder import Encoder
from segmenter.errors import ConfigError

pytestmark = pytest.mark.usefixtures("one_torch_thread")
SAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sample.txt"


@pytest.fixture(scope="module")
def hidden_probe_dir(tiny_bert_dir, tmp_path_factory) -> Path:
    """A probe of the tiny model that reads block outputs only, which int8 can give."""
    from segmenter.gold.corpus import Document
    from segmenter.training.probe import TrainConfig, train_probe

    encoder = Encoder(str(tiny_bert_dir), max_layer=2)
    docs = [Document(f"d{i}", ("The cat sat down.", "It was tired!", f"Number {i} ended.")) for i in range(6)]
    features = FeatureConfig(layers=(2,), vectors=False, signals=False, hidden=True)
    config = TrainConfig(features=features, window=WindowConfig(16, 10), holdout=0.3)
    return train_probe(encoder, docs, config, ["synthetic"]).save(tmp_path_factory.mktemp("hidden-probe"))


def batch(encoder: Encoder) -> tuple[np.ndarray, np.ndarray]:
    """Two windows, the second padded: (2, T) ids and mask."""
    rows = [encoder.tokenize(text).ids for text in ("The cat sat down. It was tired!", "Short one.")]
    width = max(map(len, rows)) + 2
    ids = np.full((2, width), encoder.pad_id, dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, tokens in enumerate(rows):
        ids[row, : len(tokens) + 2] = [encoder.cls_id, *tokens, encoder.sep_id]
        mask[row, : len(tokens) + 2] = 1
    return ids, mask


def cache_files() -> list[Path]:
    return sorted(Path(os.environ["SEGMENTER_CACHE"]).glob("int8-*.onnx"))


def test_int8_block_outputs_follow_float32(tiny_bert_dir):
    full = Encoder(str(tiny_bert_dir), max_layer=2, precision="float32")
    low = Encoder(str(tiny_bert_dir), max_layer=2, precision="int8")
    assert low.precision == "int8"
    ids, mask = batch(full)
    a = full.forward(ids, mask, layers=(1, 2), contexts=False, hidden=True).hidden  # (2, B, T, D)
    b = low.forward(ids, mask, layers=(1, 2), contexts=False, hidden=True).hidden
    assert a.shape == b.shape and b.dtype == np.float32
    real = mask.astype(bool)
    a, b = a[:, real], b[:, real]  # (2, real tokens, D)
    cosine = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    assert cosine.min() > 0.98
    assert not np.array_equal(a, b)  # the int8 graph ran, not the float32 blocks
    second_only = low.forward(ids, mask, layers=(2,), contexts=False, hidden=True).hidden
    np.testing.assert_array_equal(second_only[0][real], b[1])


def test_graph_is_built_once_per_set_of_weights(tiny_bert_dir, monkeypatch):
    import segmenter.encoder.onnx.export as int8

    before = set(cache_files())
    Encoder(str(tiny_bert_dir), max_layer=3, precision="int8")
    made = set(cache_files()) - before
    assert len(made) == 1

    def no_build(_module):
        raise AssertionError("the cached graph should have been read")

    monkeypatch.setattr(int8, "_build", no_build)
    Encoder(str(tiny_bert_dir), max_layer=3, precision="int8")  # read from the cache
    with pytest.raises(AssertionError, match="cached graph"):
        Encoder(str(tiny_bert_dir), max_layer=4, precision="int8")  # other blocks: another graph


def test_unwritable_cache_builds_in_memory(tiny_bert_dir, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("SEGMENTER_CACHE", str(blocker / "cache"))
    low = Encoder(str(tiny_bert_dir), max_layer=1, precision="int8")
    ids, mask = batch(low)
    assert low.forward(ids, mask, layers=(1,), contexts=False, hidden=True).hidden.shape[:2] == (1, 2)
    assert blocker.read_text(encoding="utf-8") == "x"


def test_int8_segments_with_a_probe_of_block_outputs(tiny_bert_dir, hidden_probe_dir):
    segmenter = Segmenter(model=str(tiny_bert_dir), probe=str(hidden_probe_dir), precision="int8")
    texts = ["The cat sat down. It was tired! Number 3 ended.", "", "  \n", "x" * 300, "one two three " * 40]
    for text, spans in zip(texts, segmenter.pipe(texts), strict=True):
        assert_invariants(text, spans)
    torch.set_num_threads(2)
    try:
        segmenter.segment(texts[0])
        assert segmenter.encoder._int8.session._threads == 2  # the session follows torch's thread count
    finally:
        torch.set_num_threads(1)


def test_int8_is_refused_where_it_cannot_serve(tiny_bert_dir, tiny_probe_dir):
    with pytest.raises(ConfigError, match="int8' returns block outputs only; this probe reads attention"):
        Segmenter(model=str(tiny_bert_dir), probe=str(tiny_probe_dir), precision="int8")
    with pytest.raises(ConfigError, match="strategy 'similarity' reads"):
        Segmenter(model=str(tiny_bert_dir), strategy="similarity", precision="int8")
    with pytest.raises(ConfigError, match="runs on the CPU only"):
        Encoder(str(tiny_bert_dir), device="meta", precision="int8")
    with pytest.raises(ConfigError, match="not attention or per-head vectors"):
        low = Encoder(str(tiny_bert_dir), max_layer=1, precision="int8")
        low.forward(*batch(low), layers=(1,), attention_layers=(1,))


def test_cli_int8_with_the_packaged_model(runner):
    plain = runner.invoke(main, ["segment", "--precision", "float32", str(SAMPLE)])
    low = runner.invoke(main, ["segment", "--precision", "int8", str(SAMPLE)])
    assert plain.exit_code == 0 and low.exit_code == 0, low.output
    assert low.stdout == plain.stdout  # the sample's sentences are clear-cut: int8 finds the same ones
    refused = runner.invoke(main, ["segment", "--precision", "int8", "--preset", "signals", str(SAMPLE)])
    assert refused.exit_code != 0 and refused.stdout == ""
    assert "precision 'int8' returns block outputs only" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


def test_int8_without_onnxruntime_names_the_extra(tiny_bert_dir, monkeypatch):
    import sys

    from segmenter.errors import MissingExtraError

    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if not installed
    with pytest.raises(MissingExtraError, match=r"precision 'int8' needs the \[int8\] extra"):
        Encoder(str(tiny_bert_dir), max_layer=1, precision="int8")


def test_int8_outputs_do_not_depend_on_the_batch(tiny_bert_dir):
    """Activations are quantised per run, so each window runs alone: a window's outputs are the same
    whether it shares a batch (and its padding) or not."""
    low = Encoder(str(tiny_bert_dir), max_layer=2, precision="int8")
    ids, mask = batch(low)
    together = low.forward(ids, mask, layers=(2,), contexts=False, hidden=True).hidden  # (1, 2, T, D)
    for row in range(2):
        length = int(mask[row].sum())
        alone = low.forward(
            ids[row : row + 1, :length],
            mask[row : row + 1, :length],
            layers=(2,),
            contexts=False,
            hidden=True,
        ).hidden
        np.testing.assert_allclose(alone[0, 0], together[0, row, :length], rtol=0, atol=1e-5)
    assert not together[0, 1, int(mask[1].sum()) :].any()  # padding positions are zero


TEXTS = ["The cat sat down. It was tired! Number 3 ended.", "", "  \n", "one two three " * 40, "Hi.\n\nBye."]


def entries() -> list[Path]:
    return sorted(Path(os.environ["SEGMENTER_CACHE"]).glob("compiled-*.json"))


def int8_segmenter(model: Path, probe: Path) -> Segmenter:
    return Segmenter(model=str(model), probe=str(probe), precision="int8")


def test_a_cached_int8_encoder_runs_without_torch_and_gives_the_same_probabilities(
    tiny_bert_dir, hidden_probe_dir
):
    from segmenter.encoder.onnx.compiled import CompiledEncoder

    for entry in entries():  # written by an earlier test
        entry.unlink()
    first = int8_segmenter(tiny_bert_dir, hidden_probe_dir)  # writes the entry
    assert isinstance(first.encoder, Encoder) and entries()
    second = int8_segmenter(tiny_bert_dir, hidden_probe_dir)
    assert isinstance(second.encoder, CompiledEncoder)
    for a, b in zip(first.gap_probabilities(TEXTS), second.gap_probabilities(TEXTS), strict=True):
        np.testing.assert_array_equal(a.offsets, b.offsets)
        np.testing.assert_array_equal(a.probs, b.probs)  # the same embeddings, graph and probe: bit for bit
    for text in TEXTS:
        assert second.segment(text) == first.segment(text)
        assert_invariants(text, second.segment(text))
    assert second.encoder.joins("d", "!") == first.encoder.joins("d", "!")

    script = (
        "import sys\n"
        "from segmenter import Segmenter\n"
        f"s = Segmenter(model={str(tiny_bert_dir)!r}, probe={str(hidden_probe_dir)!r}, precision='int8')\n"
        "spans = s.segment('The cat sat down. It was tired!')\n"
        "print(type(s.encoder).__name__, 'torch' in sys.modules, len(spans) > 0)\n"
    )
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["CompiledEncoder", "False", "True"]


def test_an_entry_that_no_longer_matches_falls_back_to_torch(tiny_bert_dir, hidden_probe_dir, tmp_path):
    from segmenter.encoder.onnx.compiled import CompiledEncoder, entry_key
    from segmenter.probe.probe import Probe

    int8_segmenter(tiny_bert_dir, hidden_probe_dir)
    assert isinstance(int8_segmenter(tiny_bert_dir, hidden_probe_dir).encoder, CompiledEncoder)

    probe = Probe.load(hidden_probe_dir)
    key = entry_key(str(tiny_bert_dir), 2, probe.deltas, probe.pruning)
    assert key is not None
    assert entry_key(str(tiny_bert_dir), 1, probe.deltas, probe.pruning) != key  # other blocks kept
    moved = {"encoder.layer.0.attention.self.query.a": np.ones((1, 48), np.float32)}
    moved["encoder.layer.0.attention.self.query.b"] = np.zeros((48, 1), np.float32)
    assert entry_key(str(tiny_bert_dir), 2, moved, probe.pruning) != key  # other deltas
    copy = tmp_path / "copy"
    copy.mkdir()
    for file in tiny_bert_dir.iterdir():
        (copy / file.name).write_bytes(file.read_bytes())
    assert entry_key(str(copy), 2, probe.deltas, probe.pruning) != key  # another weights file

    cache = Path(os.environ["SEGMENTER_CACHE"])
    entry = cache / f"compiled-{key}.json"
    entry.write_text("{not json", encoding="utf-8")  # a damaged entry: the torch path, which rewrites it
    again = int8_segmenter(tiny_bert_dir, hidden_probe_dir)
    assert isinstance(again.encoder, Encoder) and again.segment(TEXTS[0])
    assert isinstance(int8_segmenter(tiny_bert_dir, hidden_probe_dir).encoder, CompiledEncoder)
    for graph in cache.glob("int8-*.onnx"):  # a graph cleaned out of the cache: built again
        graph.unlink()
    rebuilt = int8_segmenter(tiny_bert_dir, hidden_probe_dir)
    assert isinstance(rebuilt.encoder, Encoder) and cache_files()


def test_no_entry_where_the_cache_cannot_be_written(tiny_bert_dir, hidden_probe_dir, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("SEGMENTER_CACHE", str(blocker / "cache"))
    for _ in range(2):
        segmenter = int8_segmenter(tiny_bert_dir, hidden_probe_dir)
        assert isinstance(segmenter.encoder, Encoder)
        assert_invariants(TEXTS[0], segmenter.segment(TEXTS[0]))
    assert blocker.read_text(encoding="utf-8") == "x"


def probe_naming_int8(source: Path, folder: Path) -> Path:
    """A copy of the probe at `source` whose meta names int8 as its automatic precision, with an int8
    threshold pair unlike its float pair."""
    folder.mkdir()
    for file in source.iterdir():
        (folder / file.name).write_bytes(file.read_bytes())
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    meta["thresholds"] = {"clean": 0.6, "corrupt": 0.55}
    meta["automatic_precision"] = "int8"
    meta["thresholds_by_precision"] = {
        "int8": {"threshold": 0.2, "thresholds": {"clean": 0.25, "corrupt": 0.15}}
    }
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return folder


def test_auto_is_int8_where_the_probe_names_it_and_the_cpu_does_int8(
    tiny_bert_dir, hidden_probe_dir, tmp_path, monkeypatch
):
    import segmenter.encoder.backend as backend

    probe = probe_naming_int8(hidden_probe_dir, tmp_path / "named")

    def thresholds(segmenter: Segmenter) -> tuple[float, float]:
        return tuple(segmenter.decodings[c].threshold for c in ("clean", "corrupt"))

    monkeypatch.setattr(backend, "int8_path", lambda: "vnni")
    automatic = Segmenter(model=str(tiny_bert_dir), probe=str(probe))
    assert automatic.encoder.precision == "int8" and thresholds(automatic) == (0.25, 0.15)
    explicit = Segmenter(model=str(tiny_bert_dir), probe=str(probe), precision="float32")
    assert explicit.encoder.precision == "float32" and thresholds(explicit) == (0.6, 0.55)
    plain = Segmenter(model=str(tiny_bert_dir), probe=str(hidden_probe_dir))  # names no precision
    assert plain.encoder.precision != "int8"
    for text in TEXTS:
        assert_invariants(text, automatic.segment(text))

    monkeypatch.setattr(backend, "int8_path", lambda: None)  # no AVX2, or no ONNX Runtime
    elsewhere = Segmenter(model=str(tiny_bert_dir), probe=str(probe))
    assert elsewhere.encoder.precision in ("bfloat16", "float32") and thresholds(elsewhere) == (0.6, 0.55)
    asked = Segmenter(model=str(tiny_bert_dir), probe=str(probe), precision="int8")
    assert asked.encoder.precision == "int8" and thresholds(asked) == (0.25, 0.15)  # int8's own pair


def test_a_probe_that_reads_attention_never_runs_at_int8_automatically(
    tiny_bert_dir, tiny_probe_dir, tmp_path, monkeypatch
):
    import segmenter.encoder.backend as backend

    monkeypatch.setattr(backend, "int8_path", lambda: "vnni")
    probe = probe_naming_int8(tiny_probe_dir, tmp_path / "signals")
    assert Segmenter(model=str(tiny_bert_dir), probe=str(probe)).encoder.precision != "int8"


@pytest.mark.parametrize(
    ("flags", "path"),
    [
        ({"avx512_vnni", "avx512f", "avx2"}, "vnni"),
        ({"avx_vnni", "avx2"}, "vnni"),
        ({"avx512_vnni", "amx_bf16", "amx_int8"}, None),  # matrix units: bfloat16 there, unmeasured int8
        ({"avx2", "fma"}, "avx2"),  # byte multiply-adds: int8 still beats float32 there
        ({"avx2", "amx_bf16", "amx_int8"}, None),
        ({"avx", "sse4_2"}, None),  # no integer products in 256-bit vectors
        (set(), None),  # not Linux: nothing known
    ],
)
def test_int8_runs_natively_on_cpus_with_vnni_or_avx2_and_no_amx(flags, path, monkeypatch):
    import segmenter.encoder.backend as backend

    monkeypatch.setattr(backend, "cpu_flags", lambda: frozenset(flags))
    assert backend.int8_path() == path
    monkeypatch.setattr(backend.importlib.util, "find_spec", lambda name: None)  # no ONNX Runtime
    assert backend.int8_path() is None


def test_a_probe_may_run_at_int8_automatically_on_some_cpus_only(
    tiny_bert_dir, hidden_probe_dir, tmp_path, monkeypatch
):
    import segmenter.encoder.backend as backend

    probe = probe_naming_int8(hidden_probe_dir, tmp_path / "avx2-only")
    meta = json.loads((probe / "meta.json").read_text(encoding="utf-8"))
    (probe / "meta.json").write_text(json.dumps({**meta, "automatic_precision_cpus": ["avx2"]}), "utf-8")
    monkeypatch.setattr(backend, "int8_path", lambda: "avx2")
    assert Segmenter(model=str(tiny_bert_dir), probe=str(probe)).encoder.precision == "int8"
    monkeypatch.setattr(backend, "int8_path", lambda: "vnni")
    vnni = Segmenter(model=str(tiny_bert_dir), probe=str(probe))
    assert vnni.encoder.precision in ("bfloat16", "float32")
    assert vnni.decodings["clean"].threshold == 0.6  # the float pair
    asked = Segmenter(model=str(tiny_bert_dir), probe=str(probe), precision="int8")
    assert asked.encoder.precision == "int8" and asked.decodings["clean"].threshold == 0.25


def test_int8_outputs_do_not_depend_on_the_thread_count(tiny_bert_dir):
    """Windows run side by side, each on one thread: the numbers are those of one thread."""
    low = Encoder(str(tiny_bert_dir), max_layer=2, precision="int8")
    rows = [low.tokenize(text).ids for text in TEXTS if text.strip()]
    width = max(map(len, rows)) + 2
    ids = np.full((len(rows), width), low.pad_id, dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, tokens in enumerate(rows):
        ids[row, : len(tokens) + 2] = [low.cls_id, *tokens, low.sep_id]
        mask[row, : len(tokens) + 2] = 1
    session = low._int8.session
    one = session(ids, mask, threads=1)  # (L, B, T, D)
    np.testing.assert_array_equal(session(ids, mask, threads=3), one)
    np.testing.assert_array_equal(session(ids, mask, threads=2), one)
    assert session._pool is not None and session._pool._max_workers == 2
    np.testing.assert_array_equal(session(ids, mask, threads=1), one)
    assert session._pool is None


def test_an_int8_session_used_before_a_fork_runs_in_the_child(tiny_bert_dir):
    """The parent's pool threads do not exist in a forked child: the child runs on a pool of its own
    instead of waiting for them forever."""
    import multiprocessing

    low = Encoder(str(tiny_bert_dir), max_layer=2, precision="int8")
    ids, mask = batch(low)
    session = low._int8.session
    expected = session(ids, mask, threads=2)  # the pool exists now
    context = multiprocessing.get_context("fork")
    queue = context.Queue()

    def child():
        queue.put(session(ids, mask, threads=2))

    process = context.Process(target=child)
    process.start()
    process.join(timeout=60)
    hung = process.is_alive()
    if hung:
        process.kill()
    assert not hung and process.exitcode == 0
    np.testing.assert_array_equal(queue.get(timeout=5), expected)


def test_building_the_int8_encoder_is_noted_and_loading_it_is_not(
    tiny_bert_dir, hidden_probe_dir, tmp_path, monkeypatch, caplog
):
    import logging

    monkeypatch.setenv("SEGMENTER_CACHE", str(tmp_path / "cache"))
    with caplog.at_level(logging.INFO, logger="segmenter.encoder.loader"):
        int8_segmenter(tiny_bert_dir, hidden_probe_dir)
    notes = [record.getMessage() for record in caplog.records if record.name == "segmenter.encoder.loader"]
    assert notes == [f"preparing the int8 encoder of this model (once; kept in {tmp_path / 'cache'})"]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="segmenter.encoder.loader"):
        int8_segmenter(tiny_bert_dir, hidden_probe_dir)
    assert not [record for record in caplog.records if record.name == "segmenter.encoder.loader"]


def test_the_command_line_shows_the_note_on_a_terminal_only(monkeypatch):
    import logging

    from segmenter.cli import main as cli

    log = logging.getLogger("segmenter.encoder.loader")
    monkeypatch.setattr(log, "handlers", [])
    monkeypatch.setattr(cli.sys.stderr, "isatty", lambda: False, raising=False)
    cli._show_progress_notes()
    assert log.handlers == []

    class Terminal:
        def isatty(self):
            return True

        def write(self, text):
            written.append(text)

        def flush(self):
            pass

    written: list[str] = []
    monkeypatch.setattr(cli.sys, "stderr", Terminal())
    monkeypatch.setattr(log, "level", logging.NOTSET)
    cli._show_progress_notes()
    log.info("preparing something")
    assert written == ["segmenter: preparing something\n"]


def test_sentence_vectors_at_int8_build_no_graph(tiny_bert_dir, tmp_path, monkeypatch):
    from segmenter.topics.sentence_vectors import SentenceVectors

    monkeypatch.setenv("SEGMENTER_CACHE", str(tmp_path / "cache"))
    vectors = SentenceVectors(str(tiny_bert_dir), precision="int8")
    assert vectors.encoder.precision == "float32" and vectors.encoder.int8_graph_key is None
    assert vectors(["The cat sat down.", "It was tired!"]).shape == (2, 48)
    assert not (tmp_path / "cache").exists()
