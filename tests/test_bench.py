"""The benchmark harness: dataset specs, adapters, runner, reports and the `bench` command."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from segmenter.bench import runner as runner_module
from segmenter.bench import systems
from segmenter.bench.cli import bench
from segmenter.bench.datasets import DATA_DIR, evaluation_items, load_dataset
from segmenter.bench.metrics import normalize
from segmenter.bench.report import markdown_table, results_json, write_outputs
from segmenter.bench.runner import Run, environment, make_tasks, run_benchmark
from segmenter.bench.systems import (
    DEFAULT_SYSTEMS,
    Adapter,
    SystemOptions,
    SystemUnavailable,
    check_name,
    load_system,
    parse_name,
)
from segmenter.errors import ConfigError, InputError
from segmenter.gold.corpus import read_conllu, read_golden_cases

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
FAST_BASELINES = ("pysbd", "spacy-sentencizer", "punkt", "syntok", "blingfire", "sentencex")
RUN_KEYS = {
    "system", "dataset", "condition", "precision", "recall", "f1", "exact_match", "chars_per_s",
    "n_docs", "n_gold_boundaries", "seconds", "skipped", "unmarked_recall", "n_unmarked",
}  # fmt: skip


# --- datasets ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def golden():
    return load_dataset("golden-rules")


@pytest.fixture
def golden_file(tmp_path) -> Path:
    path = tmp_path / "cases.jsonl"
    case = {"id": "list", "text": "Items:\n1. One\n2.  Two", "sentences": ["Items:", "1. One", "2. Two"]}
    path.write_text(json.dumps(case) + "\n", encoding="utf-8")
    return path


def test_builtin_datasets_resolve_to_shipped_copies(golden):
    test = load_dataset("ewt-test")
    n_sentences = sum(len(doc.sentences) for doc in test.documents)
    assert (test.kind, len(test.documents), n_sentences) == ("conllu", 316, 2077)
    assert (golden.kind, len(golden.documents), len(golden.originals)) == ("golden", 48, 48)
    assert test.path.is_relative_to(DATA_DIR)
    for folder in ("ud_english_ewt", "golden_rules"):
        assert any((DATA_DIR / folder).glob("LICENSE*")) and (DATA_DIR / folder / "README.md").is_file()


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is not next to the project")
@pytest.mark.parametrize(
    ("copy", "original"),
    [
        ("ud_english_ewt/en_ewt-ud-dev.conllu", "ud/UD_English-EWT/en_ewt-ud-dev.conllu"),
        ("ud_english_ewt/en_ewt-ud-test.conllu", "ud/UD_English-EWT/en_ewt-ud-test.conllu"),
        ("golden_rules/golden_rules_en.jsonl", "golden_rules/golden_rules_en.jsonl"),
    ],
)
def test_shipped_copies_are_unchanged(copy, original):
    assert (DATA_DIR / copy).read_bytes() == (SHARED / original).read_bytes()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nope", "unknown dataset 'nope'"),
        ("csv:data.csv", "golden:PATH or realworld:PATH"),
        ("my.conllu", "did you mean conllu:my.conllu"),
        ("conllu:/no/such/file.conllu", "not found"),
        ("golden:", "unknown dataset"),
    ],
)
def test_bad_dataset_spec_says_what_to_use(spec, message):
    with pytest.raises(InputError, match=message):
        load_dataset(spec)


def test_conllu_without_newdoc_is_grouped_by_ten(tmp_path):
    path = tmp_path / "flat.conllu"
    path.write_text("".join(f"# text = Sentence {i}.\n1\tx\n\n" for i in range(25)), encoding="utf-8")
    dataset = load_dataset(f"conllu:{path}")
    assert (dataset.name, dataset.kind) == ("flat", "conllu")
    assert [len(doc.sentences) for doc in dataset.documents] == [10, 10, 5]
    assert dataset.head(2).documents == dataset.documents[:2]


def test_golden_clean_keeps_original_text_with_aligned_gold(golden_file):
    [item] = evaluation_items(load_dataset(f"golden:{golden_file}"), "clean")
    assert item.text == "Items:\n1. One\n2.  Two"
    assert item.gold == (7, 14)
    assert item.sentences == ("Items:", "1. One", "2. Two")


def test_golden_corrupt_joins_corrupted_sentences(golden_file):
    [item] = evaluation_items(load_dataset(f"golden:{golden_file}"), "corrupt")
    assert item.text == "items 1 one 2 two"
    assert item.gold == (6, 12)


def test_golden_case_whose_sentences_are_not_in_its_text_is_an_input_error(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"text": "A b.", "sentences": ["A b.", "C d."]}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="do not match"):
        evaluation_items(load_dataset(f"golden:{path}"), "clean")


def test_corrupt_conllu_items_are_lowercase_without_punctuation():
    dataset = load_dataset("ewt-test").head(5)
    clean, corrupt = evaluation_items(dataset, "clean"), evaluation_items(dataset, "corrupt")
    assert [i.id for i in clean] == [i.id for i in corrupt]
    for item in corrupt:
        assert item.text == item.text.lower() and not any(c in item.text for c in ".,!?;:'\"")
        assert [item.text[g - 1] for g in item.gold] == [" "] * len(item.gold)
    assert sum(len(i.gold) for i in clean) >= sum(len(i.gold) for i in corrupt) > 0


def test_golden_gold_boundaries_point_at_expected_sentences(golden):
    for item in evaluation_items(golden, "clean"):
        assert all(item.text[g:].startswith(s) for g, s in zip(item.gold, item.sentences[1:], strict=True))


# --- systems ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["nope", "pysbd:fast", "attention:bogus", "pysbd@m", "attention@m:bogus"])
def test_unknown_system_is_a_config_error(name):
    with pytest.raises(ConfigError, match="unknown"):
        check_name(name)


@pytest.mark.parametrize(
    "name, parsed",
    [
        ("attention", ("attention", None, "")),
        ("attention@all-mpnet-base-v2", ("attention", "all-mpnet-base-v2", "")),
        ("attention@/models/bert:similarity", ("attention", "/models/bert", "similarity")),
        ("attention-fast@m", ("attention-fast", "m", "")),
    ],
)
def test_a_system_can_name_its_backbone(name, parsed):
    assert parse_name(name) == parsed


def test_a_system_with_an_empty_backbone_is_refused():
    with pytest.raises(ConfigError, match="no backbone"):
        check_name("attention@")


def test_the_backbone_a_system_names_replaces_the_runs_model(monkeypatch):
    seen = {}

    def fake(name, variant, options):
        seen[name] = (variant, options.model)
        return Adapter(name, lambda texts: [[] for _ in texts])

    monkeypatch.setitem(systems._LOADERS, "attention", fake)
    load_system("attention@other:similarity", SystemOptions(model="packaged"))
    load_system("attention", SystemOptions(model="packaged"))
    assert seen == {"attention@other:similarity": ("similarity", "other"), "attention": ("", "packaged")}


def test_every_default_system_and_other_preset_is_known():
    for name in DEFAULT_SYSTEMS:
        check_name(name)
    assert {"attention-fast", "attention-fastest", "attention-signals"} <= set(DEFAULT_SYSTEMS)
    assert "attention-frozen" not in DEFAULT_SYSTEMS


def test_attention_at_a_precision_is_the_default_preset_at_it_on_request(monkeypatch):
    import segmenter

    built = {}

    class Recording(segmenter.Segmenter):
        def __init__(self, **settings):
            built.update(settings)
            super().__init__(**settings)

    monkeypatch.setattr(segmenter, "Segmenter", Recording)
    assert "attention-int8" not in DEFAULT_SYSTEMS
    adapter = load_system("attention-int8")
    assert built["precision"] == "int8" and "preset" not in built
    text = "The museum reopened on Saturday. Visitors queued around the block."
    assert adapter.predict([text]) == [[text.index("Visitors")]]
    built.clear()
    assert load_system("attention-bfloat16").predict([text]) == [[text.index("Visitors")]]
    assert built["precision"] == "bfloat16" and "attention-bfloat16" not in DEFAULT_SYSTEMS
    built.clear()
    float32 = load_system("attention-float32")
    assert float32.predict([text]) == [[text.index("Visitors")]]
    assert built["precision"] == "float32" and "attention-float32" not in DEFAULT_SYSTEMS
    assert adapter.note.endswith(", int8") and float32.note.endswith(", float32")  # the precision it ran


def _load_or_skip(name: str) -> Adapter:
    try:
        return load_system(name)
    except SystemUnavailable as exc:
        pytest.skip(f"{name}: {exc}")


@pytest.mark.parametrize("name", FAST_BASELINES)
def test_baseline_offsets_survive_altered_whitespace(name):
    adapter = _load_or_skip(name)
    texts = ["Hello there.  How are you?\nI am fine.", "Good morning. It is late.", "   "]
    predicted = adapter.predict(texts)
    assert [list(normalize(text, offsets)) for text, offsets in zip(texts, predicted, strict=True)] == [
        [14, 27],
        [14],
        [],
    ]


# --- runner and reports -----------------------------------------------------------------------------


def _fake_loader(predictions: dict[str, list[int]]):
    """A loader whose one system predicts fixed offsets per text and fails for other names."""

    def load(name, options):
        if name == "missing":
            raise SystemUnavailable("fakelib is not installed")
        if name == "broken":
            raise RuntimeError("boom")
        if name == "crashes":
            return Adapter(name, lambda texts: 1 / 0)
        return Adapter(name, lambda texts: [predictions.get(t, []) for t in texts], note="fake")

    return load


@pytest.fixture
def tiny_tasks(golden_file):
    return make_tasks([load_dataset(f"golden:{golden_file}")], ("clean", "corrupt"))


def test_runner_scores_a_fake_system(tiny_tasks):
    clean_text = "Items:\n1. One\n2.  Two"
    loader = _fake_loader({clean_text: [6, 9], "items 1 one 2 two": [6, 12]})
    clean, corrupt = run_benchmark(["fake"], tiny_tasks, loader=loader)
    # clean: 6 -> 7 after the newline is a hit, 9 is inside "1. One" (a false alarm), 14 is missed
    assert (clean.precision, clean.recall, clean.f1, clean.exact_match) == (0.5, 0.5, 0.5, 0.0)
    assert (corrupt.precision, corrupt.recall, corrupt.f1, corrupt.exact_match) == (1.0, 1.0, 1.0, 1.0)
    assert (clean.n_docs, clean.n_gold_boundaries, clean.note, clean.skipped) == (1, 2, "fake", None)
    # neither gold boundary follows sentence-final punctuation ("Items:", "One"): both are unmarked
    assert (clean.unmarked_recall, clean.n_unmarked, corrupt.unmarked_recall) == (0.5, 2, 1.0)
    assert clean.chars_per_s > 0 and clean.seconds > 0


def _realworld_file(tmp_path, docs: list[dict]) -> Path:
    path = tmp_path / "rw.jsonl"
    fields = {"source": "written", "licence": "CC0-1.0", "pre_annotated": None, "annotators": ["a1"]}
    path.write_text("\n".join(json.dumps({**fields, **doc}) for doc in docs) + "\n", encoding="utf-8")
    return path


def test_real_documents_are_scored_per_family(tmp_path):
    email = {
        "id": "email-1",
        "family": "email",
        "text": "Hi all,\n\nIt is green.\nTom",
        "boundaries": [9, 23],
    }
    chat = {"id": "chat-1", "family": "chat", "text": "<jo> hi\n<mira> hello", "boundaries": [8]}
    dataset = load_dataset(f"realworld:{_realworld_file(tmp_path, [email, chat])}")
    tasks = make_tasks([dataset], ("clean", "corrupt", "lines"))
    assert [task.condition for task in tasks] == ["clean"]  # real documents only as written
    predictions = {email["text"]: [9, 23], chat["text"]: []}
    [run] = run_benchmark(["fake"], tasks, loader=_fake_loader(predictions))
    assert run.families["email"] == {"f1": 1.0, "exact": 1.0, "docs": 1, "gold": 2}
    assert run.families["chat"]["f1"] == 0.0 and run.families["chat"]["exact"] == 0.0
    assert run.exact_match == 0.5
    from segmenter.bench.report import family_table

    table = family_table([run])
    assert "| fake | rw | 1.000 (1.000) | 0.000 (0.000) | 0.800 (0.500) |" in table


def test_a_malformed_real_document_is_an_input_error_naming_its_line(tmp_path):
    bad = {"id": "email-1", "family": "email", "text": "Hi all.", "boundaries": [3, 2]}
    with pytest.raises(InputError, match="rw.jsonl:1: .*boundaries must increase"):
        load_dataset(f"realworld:{_realworld_file(tmp_path, [bad])}")


def test_the_shipped_real_document_corpus_loads_with_its_families():
    for name in ("realworld-dev", "realworld-test"):
        dataset = load_dataset(name)
        families = {doc.family for doc in dataset.real}
        assert families == {"email", "markdown", "chat", "transcript", "pdf", "technical", "legal"}
        assert len(dataset.real) >= 200 and sum(len(doc.boundaries) for doc in dataset.real) >= 3000
        for doc in dataset.real:  # every segment starts on a character that is not whitespace
            assert all(not doc.text[b].isspace() for b in doc.boundaries)


def test_exact_match_is_only_for_golden_data():
    tasks = make_tasks([load_dataset("ewt-test").head(2)], ("clean",))
    [run] = run_benchmark(["fake"], tasks, loader=_fake_loader({}))
    assert run.exact_match is None and run.recall == 0.0 and run.n_docs == 2


@pytest.mark.parametrize(
    ("system", "reason"),
    [("missing", "fakelib is not installed"), ("broken", "failed to load: RuntimeError: boom"),
     ("crashes", "failed: ZeroDivisionError")],
)  # fmt: skip
def test_unavailable_or_failing_system_becomes_skipped_rows(tiny_tasks, system, reason):
    runs = run_benchmark([system, "fake"], tiny_tasks, loader=_fake_loader({}))
    assert [(r.system, r.condition) for r in runs] == [
        (system, "clean"), (system, "corrupt"), ("fake", "clean"), ("fake", "corrupt"),
    ]  # fmt: skip
    for run in runs[:2]:
        assert reason in run.skipped and run.f1 is None and run.n_gold_boundaries == 2
    assert all(run.skipped is None for run in runs[2:])


def test_system_is_loaded_once_and_warmed_up(tiny_tasks, monkeypatch):
    monkeypatch.setattr(runner_module, "MIN_TIMED_SECONDS", 0.0)
    loads, calls = [], []

    def loader(name, options):
        loads.append(name)
        return Adapter(name, lambda texts: calls.append(len(texts)) or [[] for _ in texts])

    run_benchmark(["fake"], tiny_tasks, loader=loader)
    assert loads == ["fake"]
    per_task = 1 + runner_module.MIN_PASSES  # warm-up on the first text, then the timed passes
    assert calls == [1] * per_task * len(tiny_tasks)


def test_timing_reports_the_median_pass_and_the_first_predictions(monkeypatch):
    clock = iter([0.0, 5.0, 10.0, 11.0, 20.0, 22.0])  # (start, end) of three passes: 5 s, 1 s, 2 s
    monkeypatch.setattr(runner_module.time, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(runner_module, "MIN_TIMED_SECONDS", 0.0)
    outputs = iter([[[1]], [[2]], [[3]]])
    predictions, seconds = runner_module._timed(Adapter("fake", lambda texts: next(outputs)), ["a b"])
    assert (predictions, seconds) == ([[1]], 2.0)


def _dying_loader(name, options):
    """A module-level loader (so a spawned process can import it) whose process dies while loading."""
    os._exit(3)


def test_isolated_systems_run_in_fresh_processes_and_a_dead_process_becomes_skipped_rows(tiny_tasks):
    isolated = run_benchmark(["sentencex", "syntok"], tiny_tasks, isolate=True)
    same = run_benchmark(["sentencex", "syntok"], tiny_tasks)
    assert [(r.system, r.condition, r.f1, r.skipped) for r in isolated] == [
        (r.system, r.condition, r.f1, r.skipped) for r in same
    ]
    assert all(r.chars_per_s > 0 for r in isolated)
    dead = run_benchmark(["sentencex"], tiny_tasks, loader=_dying_loader, isolate=True)
    assert [r.condition for r in dead] == ["clean", "corrupt"]
    assert all("process died" in r.skipped and r.f1 is None for r in dead)


def test_reports(tiny_tasks, tmp_path):
    runs = run_benchmark(["fake", "missing"], tiny_tasks, loader=_fake_loader({}))
    table = markdown_table(runs)
    assert table.count("\n") == 2 + len(runs)
    assert "| fake | cases | clean | 0.000 | 0.000 | 0.000 | 0.000 |" in table
    assert "skipped: fakelib is not installed" in table
    data = results_json(runs, environment())
    assert set(data["runs"][0]) >= RUN_KEYS and data["env"]["cpu_count"] >= 1 and data["env"]["python"]
    assert data["env"]["int8_path"] in ("vnni", "avx2", None) and "cpu" in data["env"]
    paths = write_outputs(tmp_path / "out", runs, {"python": "3"}, {"limit_docs": 1})
    assert [p.name for p in paths] == ["results.json", "results.md", "f1_vs_speed.png"]
    assert paths[2].read_bytes()[:4] == b"\x89PNG"
    assert json.loads(paths[0].read_text())["config"] == {"limit_docs": 1}


def test_run_rows_have_the_documented_keys():
    assert set(Run("s", "d", "clean").to_dict()) >= RUN_KEYS


# --- command ----------------------------------------------------------------------------------------


def test_bench_command_smoke(tmp_path, monkeypatch):
    monkeypatch.setattr(runner_module, "MIN_TIMED_SECONDS", 0.0)
    out = tmp_path / "bench"
    args = ["--dataset", "ewt-test", "--dataset", "golden-rules", "--limit-docs", "4", "--out", str(out)]
    args += ["--same-process"]  # the patched timing must reach the systems
    for name in FAST_BASELINES:
        args += ["--system", name]
    result = CliRunner().invoke(bench, args)
    assert result.exit_code == 0, result.output
    assert {p.name for p in out.iterdir()} == {"results.json", "results.md", "f1_vs_speed.png"}
    runs = json.loads((out / "results.json").read_text())["runs"]
    assert len(runs) == 6 * (4 + 2)  # golden rules have no paragraph markers: no lines, no wrapped
    assert {r["dataset"] for r in runs if r["condition"] in ("lines", "wrapped")} == {"ewt-test"}
    assert {(r["dataset"], r["n_docs"]) for r in runs} == {("ewt-test", 4), ("golden-rules", 4)}
    scored = [r for r in runs if not r["skipped"] and (r["dataset"], r["condition"]) == ("ewt-test", "clean")]
    assert scored and all(r["f1"] > 0.5 and r["chars_per_s"] > 0 for r in scored)
    assert "| system | dataset | condition |" in result.output


def test_bench_command_rejects_bad_input(tmp_path):
    runner = CliRunner()
    bad_system = runner.invoke(bench, ["--system", "nope", "--dataset", "golden-rules"])
    assert bad_system.exit_code == 2 and "unknown system 'nope'" in bad_system.output
    bad_dataset = runner.invoke(bench, ["--system", "pysbd", "--dataset", "conllu:/missing.conllu"])
    assert bad_dataset.exit_code == 2 and "not found" in bad_dataset.output


# --- agreement with the independent check ------------------------------------------------------------


@pytest.mark.slow
def test_baselines_agree_with_reference_on_ewt_test():
    reference = {"spacy-parser": 0.828, "punkt": 0.810, "pysbd": 0.791, "spacy-sentencizer": 0.787}
    tasks = make_tasks([load_dataset("ewt-test")], ("clean", "corrupt"))
    available = [name for name in reference if _available(name)]
    if not available:
        pytest.skip("no reference baseline can load here")
    for run in run_benchmark(available, tasks):
        if run.condition == "clean":
            assert run.f1 == pytest.approx(reference[run.system], abs=0.01), run
        else:
            assert run.f1 < 0.15, run  # "about 0": the parser still finds a few


def _available(name: str) -> bool:
    try:
        load_system(name)
    except SystemUnavailable:
        return False
    return True


def _thread_reporting_loader(name, options):
    """A module-level loader whose note says what thread settings its process started with and holds."""
    import torch

    note = f"OMP={os.environ.get('OMP_NUM_THREADS')} torch={torch.get_num_threads()}"
    return Adapter(name, lambda texts: [[] for _ in texts], note)


@pytest.mark.parametrize("threads", [1, 2])
def test_every_system_runs_on_the_thread_count_asked_for(tiny_tasks, threads):
    runs = run_benchmark(["fake"], tiny_tasks, loader=_thread_reporting_loader, isolate=True, threads=threads)
    assert {(r.note, r.threads, r.busy) for r in runs} == {(f"OMP={threads} torch={threads}", threads, 0)}


def test_thread_settings_of_the_benchmark_process_itself_are_left_as_they_were(tiny_tasks, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    run_benchmark(["fake"], tiny_tasks, loader=_thread_reporting_loader, isolate=True, threads=1)
    assert os.environ["OMP_NUM_THREADS"] == "7" and "MKL_NUM_THREADS" not in os.environ


def test_busy_companions_spin_while_the_block_runs_and_are_gone_after():
    from segmenter.bench.resources import busy_companions

    with busy_companions(2) as processes:
        assert len(processes) == 2 and all(p.poll() is None for p in processes)
    assert all(p.poll() is not None for p in processes)


def test_busy_runs_are_marked_in_the_rows_and_the_table(tiny_tasks):
    runs = run_benchmark(["fake"], tiny_tasks, loader=_fake_loader({}), threads=1, busy=1)
    assert {(r.threads, r.busy) for r in runs} == {(1, 1)}
    assert "| 1 + 1 busy |" in markdown_table(runs)


def test_each_system_process_chooses_its_wait_policy_under_the_busy_companions(tiny_tasks, monkeypatch):
    """The worker reads the load after the companions started, so with one of them spinning its
    threads wait passively, as the command line's would; the table says so."""
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    loader = _thread_reporting_loader
    runs = run_benchmark(["fake"], tiny_tasks, loader=loader, isolate=True, threads=2, busy=1)
    assert {(r.threads, r.busy, r.wait_policy) for r in runs} == {(2, 1, "PASSIVE")}
    assert "| 2 passive + 1 busy |" in markdown_table(runs)


@pytest.mark.parametrize(("loaded", "expected"), [(False, "PASSIVE"), (True, "default")])
def test_same_process_busy_runs_choose_the_policy_again_while_openmp_is_unloaded(
    tiny_tasks, monkeypatch, loaded, expected
):
    """Without worker processes the systems load in the bench process, after the companions started;
    once torch (and OpenMP) is loaded the policy it started with stays, and the rows say which."""
    environ = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    monkeypatch.setattr(os, "environ", environ)
    monkeypatch.setattr(runner_module.wait_policy, "openmp_loaded", lambda: loaded)
    runs = run_benchmark(["fake"], tiny_tasks, loader=_fake_loader({}), threads=2, busy=1)
    assert {r.wait_policy for r in runs} == {expected}
    assert environ.get("OMP_WAIT_POLICY") == (None if loaded else "PASSIVE")


def test_a_wait_policy_the_user_set_reaches_every_system_process(tiny_tasks, monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    runs = run_benchmark(["fake"], tiny_tasks, loader=_thread_reporting_loader, isolate=True, threads=2)
    assert {r.wait_policy for r in runs} == {"ACTIVE"}
    assert "| 2 |" in markdown_table(runs)


@pytest.mark.parametrize("option", [["--threads", "0"], ["--busy", "-1"]])
def test_bench_refuses_impossible_resources(option):
    result = CliRunner().invoke(bench, ["--system", "pysbd", *option])
    assert result.exit_code == 2 and option[0] in result.output


def test_repeats_run_every_system_in_rounds_and_report_the_median_speed(tiny_tasks, monkeypatch):
    monkeypatch.setattr(runner_module, "MIN_TIMED_SECONDS", 0.0)
    seconds = iter([1.0, 3.0, 2.0, 4.0, 8.0, 6.0])  # fake's pass times: round 1 both tasks, round 2, round 3
    monkeypatch.setattr(runner_module, "_timed", lambda adapter, texts: ([[] for _ in texts], next(seconds)))
    loads = []

    def loader(name, options):
        loads.append(name)
        return _fake_loader({})(name, options)

    runs = run_benchmark(["fake", "missing"], tiny_tasks, loader=loader, repeats=3)
    assert loads == ["fake", "missing"] * 3  # interleaved rounds, each loading the system again
    clean, corrupt, *skipped = runs
    chars = sum(len(item.text) for item in tiny_tasks[0].items)
    assert clean.chars_per_s_rounds == (chars / 1.0, chars / 2.0, chars / 8.0)
    assert clean.chars_per_s == chars / 2.0 and clean.seconds == 2.0  # the median round
    assert corrupt.seconds == 4.0
    assert [run.skipped is not None and run.chars_per_s_rounds is None for run in skipped] == [True, True]
    [single] = run_benchmark(["fake"], tiny_tasks[:1], loader=_fake_loader({}))
    assert single.chars_per_s_rounds is None  # one round: nothing to keep beside chars_per_s


def test_golden_and_conllu_files_keep_line_separators_inside_a_line(tmp_path):
    """JSON and CoNLL-U end lines with LF; U+2028, U+0085 and a form feed inside a case stay in it (they
    are valid raw in a JSON string), and CRLF files still load."""
    text = "Go\u2028on.\x85Next\x0cpage. Done."
    case = {"text": text, "sentences": ["Go\u2028on.\x85Next\x0cpage.", "Done."]}
    golden = tmp_path / "cases.jsonl"
    golden.write_text(
        json.dumps(case, ensure_ascii=False) + "\r\n" + json.dumps(case) + "\n", encoding="utf-8"
    )
    cases = read_golden_cases(golden)
    assert [c["text"] for c in cases] == [text, text]
    conllu = tmp_path / "doc.conllu"
    conllu.write_text("# newdoc id = d\n# text = It\u2028rained.\n1\tIt\n\n# text = Bye.\n1\tBye\n", "utf-8")
    assert read_conllu(conllu)[0].sentences == ("It rained.", "Bye.")  # whitespace collapsed, not cut
