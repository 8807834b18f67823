"""The CLI, run for real in a shell, against the API: generated texts given through a file, stdin ('-'),
/dev/stdin, a process substitution `<(...)` and a FIFO, in one run, must come out exactly as
`Segmenter.segment` splits each text. And runs writing the same -o at the same time leave one complete
output and no temporary file."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest
from children import child_environment, run_shell
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segmenter.api import Segmenter
from segmenter.cli.main import one_line

WORDS = st.sampled_from(["It", "rained.", "we", "left", "ok", "Yes!", "caf\u00e9", "9.5", "\u201cNo,\u201d"])
SEPARATORS = st.sampled_from([" ", " ", "\n", "\n\n", "\r\n", "\x85\x85", "\x0c", "\u2028", "\t"])
OTHER_WAYS = st.sampled_from(["file", "process substitution", "fifo"])


@st.composite
def texts(draw) -> str:
    words = draw(st.lists(WORDS, min_size=1, max_size=25))
    seps = draw(st.lists(SEPARATORS, min_size=len(words), max_size=len(words)))
    return "".join(w + s for w, s in zip(words, seps, strict=True))


@pytest.fixture(scope="module")
def tiny(tiny_bert_dir, tiny_probe_dir):
    return Segmenter(model=str(tiny_bert_dir), probe=str(tiny_probe_dir))


def segment_command(*options: str) -> str:
    return shlex.join([sys.executable, "-m", "segmenter.cli.main", "segment", *options])


@settings(
    max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(
    first=texts(),
    stdin_name=st.sampled_from(["-", "/dev/stdin"]),
    others=st.lists(st.tuples(texts(), OTHER_WAYS), max_size=3),
)
def test_cli_output_equals_the_api_through_every_kind_of_input(
    tiny, tiny_bert_dir, tiny_probe_dir, tmp_path_factory, first, stdin_name, others
):
    folder = tmp_path_factory.mktemp("cli-property")
    prelude, arguments = [], [stdin_name]
    all_texts = [first, *(text for text, _ in others)]
    for i, text in enumerate(all_texts):
        (folder / f"in{i}.txt").write_bytes(text.encode("utf-8"))
    for i, (_, way) in enumerate(others, start=1):
        if way == "file":
            arguments.append(f"in{i}.txt")
        elif way == "process substitution":
            arguments.append(f"<(cat in{i}.txt)")
        else:
            prelude.append(f"mkfifo fifo{i}; (cat in{i}.txt > fifo{i} &);")
            arguments.append(f"fifo{i}")
    options = segment_command(
        "--format", "jsonl", "--model", str(tiny_bert_dir), "--probe", str(tiny_probe_dir)
    )
    script = " ".join([*prelude, f"cat in0.txt | {options}", *arguments])
    done = run_shell(script, folder)
    assert done.returncode == 0, (script, done.stderr)
    records = [json.loads(line) for line in done.stdout.split("\n") if line]  # not splitlines: U+2028
    names = list(dict.fromkeys(r["file"] for r in records))  # every text has a word: at least one span each
    assert len(names) == len(all_texts), (names, script)
    for name, text in zip(names, all_texts, strict=True):
        got = [(r["start"], r["end"], r["text"]) for r in records if r["file"] == name]
        assert got == [(s.start, s.end, s.text) for s in tiny.segment(text)], (name, script)


def test_concurrent_runs_writing_one_output_leave_one_complete_file(tmp_path, tiny_bert_dir):
    seg = Segmenter(model=str(tiny_bert_dir), strategy="similarity")
    target = tmp_path / "out.txt"
    target.write_text("previous output\n", encoding="utf-8")
    inputs, expected = [], set()
    for i in range(3):
        text = "".join(f"Run {i} sentence {k} ends here. It rained on day {k}.\n" for k in range(300))
        path = tmp_path / f"in{i}.txt"
        path.write_text(text, encoding="utf-8")
        inputs.append(path)
        expected.add("".join(one_line(span.text) + "\n" for span in seg.segment(text)))
    command = [sys.executable, "-m", "segmenter.cli.main", "segment", "--model", str(tiny_bert_dir)]
    command += ["--strategy", "similarity"]
    children = [
        subprocess.Popen(
            [*command, str(path), "-o", str(target)], env=child_environment(), stderr=subprocess.PIPE
        )
        for path in inputs
    ]
    try:
        errors = [child.communicate(timeout=300)[1] for child in children]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
    assert [child.returncode for child in children] == [0, 0, 0], errors
    assert target.read_text(encoding="utf-8") in expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in0.txt", "in1.txt", "in2.txt", "out.txt"]
