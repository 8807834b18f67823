"""The Ray engine against a real local Ray instance (started once for the module): spans equal to
`Segmenter.segment`, unreadable documents reported, a killed actor's batch redone exactly once, and
an output folder that appears whole or not at all."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import ray
from click.testing import CliRunner

from segmenter.api import Segmenter
from segmenter.bench.datasets import evaluation_items, load_dataset
from segmenter.cli.main import main
from segmenter.config import SegmenterConfig
from segmenter.errors import ConfigError
from segmenter.integrations.ray.engine import segment_dataset
from segmenter.integrations.ray.output import StagedFolder

CONFIG = SegmenterConfig(preset="fast")


@pytest.fixture(scope="module")
def ray_instance():
    import ray.data

    ray.init(num_cpus=2, object_store_memory=128 << 20, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().execution_options.preserve_order = True
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def local():
    return Segmenter(CONFIG)


@pytest.fixture(scope="module")
def ewt_texts():
    return [item.text for item in evaluation_items(load_dataset("ewt-dev"), "clean")[:24]]


def expected_rows(segmenter, documents: list[tuple[str, str]]) -> list[dict]:
    return [
        {"id": doc_id, "index": i, "start": s.start, "end": s.end, "text": s.text}
        for doc_id, text in documents
        for i, s in enumerate(segmenter.segment(text))
    ]


def without_score(rows) -> list[dict]:
    return [{k: row[k] for k in ("id", "index", "start", "end", "text")} for row in rows]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_spans_equal_local_segment_on_ewt_dev(ray_instance, local, ewt_texts):
    documents = [(f"doc{i}", text) for i, text in enumerate(ewt_texts)]
    ds = ray.data.from_items([{"key": k, "body": t} for k, t in documents])
    rows = segment_dataset(ds, "body", "key", CONFIG, batch_size=5, concurrency=2).take_all()
    assert all(row["error"] is None for row in rows)
    assert without_score(rows) == expected_rows(local, documents)
    assert all(0.0 <= row["score"] <= 1.0 for row in rows)


def test_killed_actor_loses_and_repeats_nothing(ray_instance, local, ewt_texts):
    import psutil

    documents = [(f"doc{i}", text) for i, text in enumerate(ewt_texts)]
    ds = ray.data.from_items([{"id": k, "text": t} for k, t in documents], override_num_blocks=12)
    rows, killed = [], []
    for batch in segment_dataset(ds, "text", "id", CONFIG, batch_size=2, concurrency=1).iter_batches(
        batch_format="pyarrow", batch_size=None
    ):
        rows.extend(batch.to_pylist())
        if not killed:  # the actor is mid-run: the first batches are out, most are still to come
            actors = [
                p
                for p in psutil.Process().children(recursive=True)
                if "SegmentBatches" in " ".join(p.cmdline())
            ]
            assert actors, "no actor process found"
            for process in actors:
                process.send_signal(signal.SIGKILL)
                killed.append(process.pid)
    assert killed
    assert without_score(rows) == expected_rows(local, documents)


def test_the_settings_keyword_still_works(ray_instance, local, ewt_texts):
    """Callers from before `config=`: a SegmenterConfig passed as settings=."""
    documents = [(f"doc{i}", text) for i, text in enumerate(ewt_texts[:3])]
    ds = ray.data.from_items([{"id": k, "text": t} for k, t in documents])
    rows = segment_dataset(ds, "text", "id", settings=SegmenterConfig(preset="fast")).take_all()
    assert without_score(rows) == expected_rows(local, documents)


def test_segment_dataset_refuses_settings_given_twice_or_of_another_kind():
    with pytest.raises(ConfigError, match="given twice"):
        segment_dataset(None, config=CONFIG, settings=CONFIG)
    with pytest.raises(ConfigError, match="must be a SegmenterConfig, got dict"):
        segment_dataset(None, "text", None, {"preset": "fast"})


def write_inputs(folder: Path) -> None:
    folder.mkdir()
    (folder / "a.txt").write_text("It rained all day. We stayed in.\n", encoding="utf-8")
    (folder / "bad.txt").write_bytes(b"Caf\xe9 au lait. Good.")
    (folder / "binary.txt").write_bytes(b"ab\x00cd")
    lines = [
        json.dumps({"doc": "j1", "body": "One more. And another."}),
        json.dumps({"doc": "j2", "body": 5}),
        "{not json",
        json.dumps({"doc": "j4"}),
        json.dumps({"doc": "j5", "body": None}),
        json.dumps(["a list"]),
    ]
    (folder / "d.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    pq.write_table(
        pa.table({"doc": ["p1", "p2"], "body": ["Parquet text. Second sentence.", None]}),
        folder / "e.parquet",
    )


EXPECTED_ERRORS = [
    {"id": "{in}/bad.txt", "error": "not valid utf-8 (byte 0xe9 at offset 3)"},
    {"id": "{in}/binary.txt", "error": "looks like a binary file (it contains NUL bytes)"},
    {"id": "j2", "error": "text is int"},
    {
        "id": "{in}/d.jsonl:3",
        "error": "not JSON (Expecting property name enclosed in double quotes at column 2)",
    },
    {"id": "j4", "error": "no text field 'body'"},
    {"id": "j5", "error": "text is null"},
    {"id": "{in}/d.jsonl:6", "error": "a JSON list, not an object"},
    {"id": "p2", "error": "text is null"},
]


def run_cli(inputs: Path, out: Path, *options: str):
    args = ["segment", "--engine", "ray", str(inputs), "-o", str(out), "--preset", "fast", *options]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    rows = [row for shard in manifest["shards"] for row in read_jsonl(out / shard)]
    return manifest, rows, read_jsonl(out / "errors.jsonl")


def test_cli_reports_bad_documents_and_segments_the_rest(ray_instance, local, tmp_path):
    inputs = tmp_path / "in"
    write_inputs(inputs)
    out = tmp_path / "out"
    manifest, rows, errors = run_cli(inputs, out, "--text-column", "body", "--id-column", "doc")
    assert errors == [{**e, "id": e["id"].format(**{"in": inputs})} for e in EXPECTED_ERRORS]
    good = [
        (f"{inputs}/a.txt", "It rained all day. We stayed in.\n"),
        ("j1", "One more. And another."),
        ("p1", "Parquet text. Second sentence."),
    ]
    assert without_score(rows) == expected_rows(local, good)
    assert manifest["documents_segmented"] == 3 and manifest["errors"] == len(EXPECTED_ERRORS)
    assert sorted(os.listdir(tmp_path)) == ["in", "out"]  # no staging folder left


@pytest.mark.slow
def test_cli_file_over_one_read_equals_local(ray_instance, local, ewt_texts, tmp_path):
    big = "\n\n".join(ewt_texts * 60)[: (1 << 20) + 5000]  # over one read (1 MiB) of real text
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "big.txt").write_text(big, encoding="utf-8")
    manifest, rows, errors = run_cli(inputs, tmp_path / "out", "--actors", "1")
    assert errors == [] and manifest["documents_segmented"] == 1
    assert without_score(rows) == expected_rows(local, [(f"{inputs}/big.txt", big)])


def test_cli_parquet_output_and_rerun_refused(ray_instance, local, tmp_path):
    inputs = tmp_path / "in"
    write_inputs(inputs)
    out = tmp_path / "out"
    args = ["segment", "--engine", "ray", str(inputs / "a.txt"), str(inputs / "e.parquet"), "-o", str(out)]
    args += ["--format", "parquet", "--preset", "fast", "--text-column", "body", "--id-column", "doc"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    table = pq.read_table(out / "segments-00000.parquet")
    assert table.column_names == ["id", "index", "start", "end", "text", "score"]
    good = [
        (f"{inputs}/a.txt", "It rained all day. We stayed in.\n"),
        ("p1", "Parquet text. Second sentence."),
    ]
    assert without_score(table.to_pylist()) == expected_rows(local, good)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 1
    assert "already exists; remove it or pass a new folder" in again.output
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_interrupted_output_leaves_no_folder(tmp_path):
    target = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt), StagedFolder(target) as staging:
        (staging / "segments-00000.jsonl").write_text('{"id": "x"}\n')
        raise KeyboardInterrupt
    assert os.listdir(tmp_path) == []


def test_sigterm_during_output_removes_staging(tmp_path):
    target = tmp_path / "out"
    before = signal.getsignal(signal.SIGTERM)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGTERM))
    with pytest.raises(KeyboardInterrupt), StagedFolder(target) as staging:
        (staging / "segments-00000.jsonl").write_text('{"id": "x"}\n')
        timer.start()
        time.sleep(5)
    assert os.listdir(tmp_path) == []
    assert signal.getsignal(signal.SIGTERM) == before


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--address", "auto"], "--address needs --engine ray"),
        (["--format", "parquet"], "--format parquet needs --engine ray"),
        (
            ["--engine", "ray", "--format", "lines", "-o", "x"],
            "--engine ray writes --format jsonl or parquet",
        ),
        (["--engine", "ray", "--format", "jsonl"], "--engine ray needs INPUTS and -o OUT_DIR"),
    ],
)
def test_cli_usage_errors(tmp_path, extra, message):
    (tmp_path / "a.txt").write_text("Hi. There.")
    result = CliRunner().invoke(main, ["segment", str(tmp_path / "a.txt"), *extra])
    assert result.exit_code == 2
    assert message in result.output
