"""The scale benchmark's pieces: input generator, child measurement, checks and report (no model run)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from segmenter.bench import scale
from segmenter.bench.scale import SizeResult, checks, count_lines, measure, verdict, write_text

PARAGRAPHS = ["One two three. Four five.", "Six seven eight nine.", "Ten."]


@pytest.fixture(scope="module")
def ewt() -> list[str]:
    return scale.ewt_paragraphs()


# --- generator -------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_chars", [30, 100_000])
def test_write_text_size_and_whitespace_cut(tmp_path: Path, ewt: list[str], n_chars: int) -> None:
    chars = write_text(tmp_path / "small.txt", n_chars, ewt)
    text = (tmp_path / "small.txt").read_text(encoding="utf-8")
    assert chars == len(text)
    assert n_chars - 100 < chars <= n_chars  # cut at most one word (EWT words are short) before the size
    assert not text[-1].isspace()
    longer = (write_text(tmp_path / "long.txt", n_chars + 5_000, ewt), (tmp_path / "long.txt").read_text())
    assert longer[1].startswith(text) and longer[1][chars].isspace()  # the cut falls on whitespace
    assert text.startswith(ewt[0][:20])


def test_write_text_is_deterministic_and_has_paragraphs(tmp_path: Path, ewt: list[str]) -> None:
    write_text(tmp_path / "a.txt", 200_000, ewt)
    write_text(tmp_path / "b.txt", 200_000, ewt)
    text = (tmp_path / "a.txt").read_text(encoding="utf-8")
    assert text == (tmp_path / "b.txt").read_text(encoding="utf-8")
    paragraphs = text.split("\n\n")
    assert paragraphs[: len(ewt)] == ewt[: len(paragraphs)]
    assert len(paragraphs) > 10 and "\n\n\n" not in text and "  " not in text


def test_write_text_cycles_the_paragraphs(tmp_path: Path) -> None:
    chars = write_text(tmp_path / "t.txt", 70, PARAGRAPHS)
    expected = "One two three. Four five.\n\nSix seven eight nine.\n\nTen.\n\nOne two three."
    assert (tmp_path / "t.txt").read_text() == expected and chars == len(expected) == 70
    write_text(tmp_path / "t.txt", 69, PARAGRAPHS)  # "three." no longer fits: cut before it
    assert (tmp_path / "t.txt").read_text().endswith("Ten.\n\nOne two")
    assert write_text(tmp_path / "t.txt", 2, PARAGRAPHS) == 0  # not even one word fits


def test_count_lines(tmp_path: Path) -> None:
    (tmp_path / "out.txt").write_text("a\nb\nc\n")
    assert count_lines(tmp_path / "out.txt") == 3


# --- measurement -----------------------------------------------------------------------------------


def test_measure_reads_the_childs_own_peak_rss() -> None:
    m = measure([sys.executable, "-c", "x = bytearray(50_000_000)"])
    assert m.returncode == 0 and m.seconds > 0
    assert m.peak_rss_bytes > 50_000_000


def test_measure_reports_a_failing_child() -> None:
    m = measure([sys.executable, "-c", "import sys; print('first', file=sys.stderr); sys.exit('last line')"])
    assert m.returncode == 1 and m.stderr_tail == "last line"


# --- checks and report -----------------------------------------------------------------------------


def result(size_mb: float, seconds: float, rss_mb: float = 500) -> SizeResult:
    return SizeResult(size_mb, int(size_mb * 1_000_000), seconds, int(rss_mb * 1e6), int(size_mb * 10_000))


def test_checks_pass_for_linear_growth() -> None:
    time_check, rss_check = checks([result(16, 160), result(1, 10), result(4, 40, rss_mb=2000)])
    assert time_check.value == pytest.approx(16) and time_check.limit == pytest.approx(20)
    assert time_check.passed is True
    assert rss_check.value == pytest.approx(500) and rss_check.limit == 1500 and rss_check.passed is True


def test_checks_fail_for_superlinear_time_and_large_memory() -> None:
    time_check, rss_check = checks([result(1, 10), result(16, 201, rss_mb=1600)])
    assert time_check.value == pytest.approx(20.1) and time_check.passed is False
    assert rss_check.passed is False


def test_time_limit_scales_with_the_size_ratio() -> None:
    time_check, _ = checks([result(0.05, 1.0), result(0.1, 2.4)])
    assert time_check.limit == pytest.approx(2.5) and time_check.passed is True
    assert checks([result(0.05, 1.0), result(0.1, 2.6)])[0].passed is False


def test_one_size_skips_the_time_check() -> None:
    time_check, rss_check = checks([result(1, 10)])
    assert verdict(time_check) == "SKIP" and verdict(rss_check) == "PASS"


def test_markdown_and_results_files(tmp_path: Path) -> None:
    results = [result(4, 40), result(1, 8)]
    table = scale.markdown(results, checks(results))
    lines = table.splitlines()
    assert lines[0] == "| size MB | chars | seconds | chars/s | peak RSS MB | segments |"
    assert lines[2] == "| 1 | 1000000 | 8.00 | 125,000 | 500 | 10000 |"  # sorted by size
    assert "- PASS: time ratio largest/smallest 5.00 (limit 5.00)" in lines
    paths = scale.write_results(tmp_path, results, checks(results), {"python": "3"}, None)
    payload = json.loads(paths[0].read_text())
    assert payload["results"][0]["chars_per_s"] == pytest.approx(100_000)
    assert [c["verdict"] for c in payload["checks"]] == ["PASS", "PASS"]
    assert paths[1].read_text() == table


def test_cli_reports_a_failing_child(tmp_path: Path, monkeypatch) -> None:
    failing = (sys.executable, "-c", "import sys; sys.exit('model exploded')")
    monkeypatch.setattr(scale, "SEGMENT_COMMAND", failing)
    monkeypatch.setattr(scale, "environment", lambda command: {"segment_command": list(command)})
    outcome = CliRunner().invoke(scale.main, ["--sizes", "0.001", "--out", str(tmp_path)])
    assert outcome.exit_code == 1
    assert "FAILED: 0.001 MB: exit 1: model exploded" in outcome.output
    assert json.loads((tmp_path / "results.json").read_text())["failure"].endswith("model exploded")


def test_cli_help_and_bad_sizes() -> None:
    assert "--segment-args" in CliRunner().invoke(scale.main, ["-h"]).output
    assert CliRunner().invoke(scale.main, ["--sizes", "1,x"]).exit_code == 2
