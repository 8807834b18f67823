"""The topic corpus of real documents: the shipped files, their reader, and the builder's parts."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from segmenter.bench.topic_data import TOPIC_GENRES, read_topic_corpus, topic_corpus_file

ROOT = Path(__file__).resolve().parents[1]


def _builder():
    spec = importlib.util.spec_from_file_location("topic_corpus", ROOT / "training" / "topic_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("split", ["dev", "test"])
def test_shipped_files_hold_every_genre_with_valid_section_starts(split):
    docs = read_topic_corpus(topic_corpus_file(split))
    assert {doc.genre for doc in docs} == set(TOPIC_GENRES)
    for doc in docs:
        assert doc.starts, doc.id  # at least two sections
        for start in doc.starts:  # a section opens at a line's first character
            assert doc.text[start - 1] == "\n" and not doc.text[start].isspace(), doc.id


def test_dev_and_test_share_no_document():
    dev = {doc.id for doc in read_topic_corpus(topic_corpus_file("dev"))}
    test = {doc.id for doc in read_topic_corpus(topic_corpus_file("test"))}
    assert dev and test and not dev & test


def test_reader_keeps_line_separators_inside_text_and_rejects_bad_starts(tmp_path):
    record = {"id": "a", "genre": "book", "text": "One.\u2028Two.\n\nThree.", "starts": [11]}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    (doc,) = read_topic_corpus(path)
    assert doc.text == record["text"] and doc.starts == (11,)
    path.write_text(json.dumps({**record, "starts": [11, 3]}) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="t.jsonl:1"):
        read_topic_corpus(path)
    with pytest.raises(ValueError):
        topic_corpus_file("train")


def test_builder_sections_from_interleaved_topic_spans():
    builder = _builder()
    topics = [
        {"topic": "Opening", "relevant_text_span": [["2", "5"], ["20", "22"]]},
        {"topic": "Budget", "relevant_text_span": [["6", "12"]]},
        {"topic": "Design", "relevant_text_span": [["13", "19"]]},
    ]
    # turns 0-1 join the first section; topic "Opening" returns at 20 and opens a section again
    expected = [(0, "Opening"), (6, "Budget"), (13, "Design"), (20, "Opening")]
    assert builder.topic_sections(topics, 23) == expected
    assert builder.topic_sections(topics, 10) == [(0, "Opening"), (6, "Budget")]


def test_builder_renders_turns_and_joins_sections():
    builder = _builder()
    assert builder.written_turn("PM", "I 'm not sure {vocalsound} , are we ?") == "PM: I'm not sure, are we?"
    assert builder.spoken_turn("OK , we 're on . Mm-hmm .") == "ok we're on mm hmm"
    text, starts = builder.join_sections([["a", "b"], ["c"], ["d e"]], "\n\n")
    assert text == "a\n\nb\n\nc\n\nd e" and [text[s] for s in starts] == ["c", "d"]


def test_builder_renders_links_and_drops_comments_and_code_lead_ins():
    builder = _builder()
    page = (
        "See [the `futures` crate][futures]<!-- ignore --> and [docs](https://x.example).\n\n"
        "Add it as a dependency:\n\n```toml\ntrpl = 1\n```\n\nDone.\n"
    )
    assert builder.markdown_paragraphs(page) == ["See the `futures` crate and docs.", "Done."]


def test_builder_keeps_prose_of_a_markdown_page():
    builder = _builder()
    page = (
        "## Title\n\nFirst line\nwrapped here.\n\n```rust\nfn main() {}\n```\n\n"
        '<Listing number="1-1">\n\n- an item\n- another\n\n> quoted\n> text\n'
    )
    assert builder.markdown_paragraphs(page) == [
        "First line wrapped here.",
        "- an item",
        "- another",
        "quoted text",
    ]


@pytest.mark.parametrize(
    ("markdown", "shown"),
    [
        ("**bold**, __bold__, *italic* and _italic_.", "bold, bold, italic and italic."),
        ("The term _trait object_ and **not** *that*", "The term trait object and not that"),
        ("_the `rustc` Book_ and *`Box<T>`*", "the `rustc` Book and `Box<T>`"),
        ("(_letters_) and _don’t_!", "(letters) and don’t!"),
        # not emphasis: intraword underscores, spaced or lone asterisks, escapes, code spans, bullets
        ("snake_case_names and a_b_ and _a_b", "snake_case_names and a_b_ and _a_b"),
        ("2 * 3 * 4 and a*b and * alone", "2 * 3 * 4 and a*b and * alone"),
        (r"\*not\* and \_not\_", r"\*not\* and \_not\_"),
        ("`x_y_z`, `*ptr*`, `_` and `` a_`b`_ ``", "`x_y_z`, `*ptr*`, `_` and `` a_`b`_ ``"),
        ("* a bullet with *one* word", "* a bullet with one word"),
        ("- an item with __two__ and _three_", "- an item with two and three"),
    ],
)
def test_builder_removes_emphasis_markers_only(markdown, shown):
    builder = _builder()
    assert builder.without_emphasis(markdown) == shown
    assert builder.rendered(markdown) == shown


def test_builder_renders_emphasis_around_links_and_code():
    builder = _builder()
    page = "A _[crate](https://crates.io)_ is **the `src/main.rs`** file,\nwith *multiple_words*.\n"
    assert builder.markdown_paragraphs(page) == ["A crate is the `src/main.rs` file, with multiple_words."]


def test_shipped_book_chapters_show_no_emphasis_markers():
    builder = _builder()
    for split in ("dev", "test"):
        for doc in read_topic_corpus(topic_corpus_file(split)):
            if doc.genre == "book":
                for paragraph in doc.text.split("\n\n"):
                    assert builder.without_emphasis(paragraph) == paragraph, doc.id
