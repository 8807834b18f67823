"""Real-document layouts through every entry point of the packaged default: `segment`, `segment_stream`,
`pipe`, the spaCy component and the CLI give the same spans for an e-mail, a markdown answer, a chat log,
a transcript and a reference list, and the e-mail comes out as docs/annotation.md's worked example."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from invariants import assert_invariants
from samples import EMAIL, FENCE, MARKDOWN

from segmenter.cli.main import main

CHAT = """[09:15] <jo_b> yes works fine 👍🏽 upgrade notes: https://example.org/notes#v2.1.3
[09:16] <jo_b> @mira the fix for #412 is in
[09:17] <mira> thanks 🙏🏽 will try it tonight"""
TRANSCRIPT = """A: okay so um thanks everyone for joining today i know it's early
B: yeah sure so i looked at the numbers and honestly the biggest line is travel
A: great thanks jenny anyone disagree"""
REFERENCES = """Results held in every cohort (Table 2).

References
1. Geerts WH, Code KI, Jay RM: A prospective study of venous
thromboembolism after major trauma. N Engl J Med 1994, 331:1601-6.
2. Chen E, Szalai JP: Another study. Am J Surg 1989, 158:515-9.
"""
TEXTS = (EMAIL, MARKDOWN, CHAT, TRANSCRIPT, REFERENCES)


@pytest.fixture(scope="module")
def segmenter(one_torch_thread):
    from segmenter import Segmenter

    return Segmenter()


def _offsets(spans) -> list[tuple[int, int]]:
    return [(span.start, span.end) for span in spans]


def test_the_worked_e_mail_comes_out_as_the_guideline_splits_it(segmenter):
    boundaries = [span.start for span in segmenter.segment(EMAIL)[1:]]
    assert boundaries == [11, 46, 106, 159, 180, 211, 236, 242, 246, 249, 267, 294]


def test_code_blocks_and_table_rows_stay_whole(segmenter):
    texts = [span.text for span in segmenter.segment(MARKDOWN)]
    code = f"{FENCE}python\nx = compute(a, b)  # returns the sum. Do not call twice.\n\ny = 2\n{FENCE}"
    assert code in texts
    assert "| `-o` | Output file. Written atomically. |" in texts and "- [ ] Add tests" in texts


def test_chat_and_transcript_lines_open_segments_and_keep_their_headers(segmenter):
    chat_starts = {span.start for span in segmenter.segment(CHAT)}
    line_starts = [0] + [i + 1 for i, char in enumerate(CHAT) if char == "\n"]
    assert set(line_starts) <= chat_starts  # every message opens a segment
    lines = zip(CHAT.splitlines(), line_starts, strict=True)
    headers = [CHAT.index(line.split("> ", 1)[1], start) for line, start in lines]
    assert not set(headers) & chat_starts  # and keeps its timestamp and nickname
    transcript = segmenter.segment(TRANSCRIPT)
    starts = {span.start for span in transcript}
    for line_start in (0, TRANSCRIPT.index("B:"), TRANSCRIPT.index("A: great")):
        assert line_start in starts  # each turn opens a segment, its label with it
    assert not {TRANSCRIPT.index("okay"), TRANSCRIPT.index("yeah")} & starts


@pytest.mark.parametrize("text", TEXTS, ids=["email", "markdown", "chat", "transcript", "references"])
def test_every_entry_point_gives_the_same_spans(segmenter, text):
    whole = segmenter.segment(text)
    assert_invariants(text, whole)
    chunks = [text[i : i + 7] for i in range(0, len(text), 7)]
    assert _offsets(segmenter.segment_stream(iter(chunks))) == _offsets(whole)
    assert [_offsets(spans) for spans in segmenter.pipe([text, "One more. Text."])][0] == _offsets(whole)


def test_the_spacy_component_and_the_cli_give_the_same_spans(segmenter, tmp_path):
    spacy = pytest.importorskip("spacy")
    nlp = spacy.blank("en")
    nlp.add_pipe("attention_segmenter")
    for text in TEXTS:
        expected = _offsets(segmenter.segment(text))
        doc = nlp(text)
        sentences = [(s.start_char, s.end_char) for s in doc.sents]
        # spaCy sentences run from token to token: compare where each one's text starts
        starts = [start + len(text[start:end]) - len(text[start:end].lstrip()) for start, end in sentences]
        assert starts == [start for start, _ in expected]
        path = tmp_path / "doc.txt"
        path.write_bytes(text.encode("utf-8"))
        result = CliRunner().invoke(main, ["segment", "--format", "jsonl", str(path)])
        assert result.exit_code == 0, result.output
        records = [json.loads(line) for line in result.stdout.splitlines()]
        assert [(r["start"], r["end"]) for r in records] == expected


def test_a_reference_list_gives_one_segment_per_entry(segmenter):
    texts = [span.text for span in segmenter.segment(REFERENCES)]
    assert texts[-2:] == [
        "1. Geerts WH, Code KI, Jay RM: A prospective study of venous\n"
        "thromboembolism after major trauma. N Engl J Med 1994, 331:1601-6.",
        "2. Chen E, Szalai JP: Another study. Am J Surg 1989, 158:515-9.",
    ]
