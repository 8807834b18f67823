"""Line breaks: paragraph markers in gold data, text laid out in lines, the line-break flag, training
and benchmark conditions built on them, and streaming with a probe that reads the flag."""

from __future__ import annotations

import json
import random
import re

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import segmenter.cli.main as cli
from segmenter.bench.datasets import CONDITIONS, WRAP_WIDTH, evaluation_items, has_paragraphs, load_dataset
from segmenter.bench.runner import make_tasks
from segmenter.config import FeatureConfig
from segmenter.errors import ConfigError, InputError
from segmenter.gold.corpus import Document, corrupt_document, read_conllu, with_line_breaks, wrapped
from segmenter.readers.build import settings_from_meta
from segmenter.text.line_features import (
    LINE_CAP,
    LINE_FEATURES,
    LINE_SCALE,
    TEXT_START,
    line_features,
    line_state_after,
)
from segmenter.text.surface import FLAGS, token_flags
from segmenter.training.probe import LAYOUTS, WRAP_WIDTHS, conditioned

CONLLU = """# newdoc id = d1
# newpar
# text = Title
1\tTitle\t_\t_\t_\t_\t0\troot\t_\t_

# newpar
# text = First line.
1\tFirst\t_\t_\t_\t_\t0\troot\t_\t_

# text = Same paragraph.
1\tSame\t_\t_\t_\t_\t0\troot\t_\t_

# newpar id = p3
# text = Last.
1\tLast\t_\t_\t_\t_\t0\troot\t_\t_

# newdoc id = d2
# text = No paragraphs here.
1\tNo\t_\t_\t_\t_\t0\troot\t_\t_

"""


def test_conllu_paragraph_starts_come_from_newpar(tmp_path):
    path = tmp_path / "p.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    first, second = read_conllu(path)
    assert first.sentences == ("Title", "First line.", "Same paragraph.", "Last.")
    assert first.paragraph_starts == (1, 3)  # the document's first paragraph opens no new one
    assert second.paragraph_starts == ()
    assert with_line_breaks(first).text == "Title\nFirst line. Same paragraph.\nLast."


def test_ewt_dev_has_paragraphs_on_lines_with_unchanged_boundaries():
    docs = load_dataset("ewt-dev").documents
    with_paragraphs = [doc for doc in docs if doc.paragraph_starts]
    assert len(with_paragraphs) > 100
    for doc in with_paragraphs[:50]:
        laid_out = with_line_breaks(doc)
        assert laid_out.boundaries == doc.boundaries
        assert laid_out.text.replace("\n", " ") == doc.text
        breaks = [m.start() + 1 for m in re.finditer("\n", laid_out.text)]
        assert breaks == [doc.boundaries[i - 1] for i in doc.paragraph_starts]


@settings(max_examples=100, deadline=None)
@given(
    words=st.lists(st.sampled_from(["a", "bb", "ccc.", "Dd", "eeeeeeeeeeeeeeee"]), min_size=1, max_size=40),
    cuts=st.lists(st.booleans(), min_size=40, max_size=40),
    width=st.integers(1, 30),
)
def test_wrapped_lines_fit_the_width_and_keep_the_text(words, cuts, width):
    sentences, current = [], []
    for word, cut in zip(words, cuts, strict=False):
        current.append(word)
        if cut:
            sentences.append(" ".join(current))
            current = []
    if current:
        sentences.append(" ".join(current))
    doc = Document("d", tuple(sentences), paragraph_starts=tuple(range(1, len(sentences), 2)))
    laid_out = wrapped(doc, width)
    assert laid_out.text.replace("\n", " ") == doc.text and laid_out.boundaries == doc.boundaries
    assert set(with_line_breaks(doc).line_breaks) <= set(laid_out.line_breaks)
    for line in laid_out.text.split("\n"):
        assert len(line) <= width or " " not in line  # only a single over-long word may overflow


def test_corruption_moves_a_dropped_paragraph_start_to_the_next_sentence():
    doc = Document("d", ("One.", "Two.", "...", "Three.", "Four."), paragraph_starts=(2, 4))
    corrupted = corrupt_document(with_line_breaks(doc))
    assert corrupted.sentences == ("one", "two", "three", "four")
    assert corrupted.paragraph_starts == (2, 3) and corrupted.line_breaks == ()
    assert "\n" not in corrupted.text


def test_line_features_mark_line_starts_with_the_length_of_the_line_before():
    text = "Hi there\nYou  \r\n ok.\u2028end of it\n"
    offsets = np.array([[m.start(), m.end()] for m in re.finditer(r"\S+", text)])
    flags = token_flags(text, offsets, lines=True)
    assert flags.shape == (7, len(FLAGS) + len(LINE_FEATURES))
    np.testing.assert_array_equal(flags[:, : len(FLAGS)], token_flags(text, offsets))  # the others unchanged
    assert flags[:, -2].tolist() == [0, 0, 1, 1, 1, 0, 0]
    # lines before "You", "ok." and "end": "Hi there", "You  " (\r\n is one break), " ok."
    np.testing.assert_allclose(flags[:, -1] * LINE_SCALE, [0, 0, 8, 5, 4, 0, 0], atol=1e-4)
    subwords = np.array([[0, 2], [2, 4], [5, 9]])  # "ab" "cd" in one word, then "efgh" on the next line
    assert line_features("abcd\n\nefgh", subwords)[:, 0].tolist() == [0, 0, 1]
    long_line = np.array([[0, 1], [2, 502], [503, 504]])
    assert line_features("a\n" + "b" * 500 + "\nc", long_line)[2, 1] == LINE_CAP


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(list("ab \n\r\u2028.")), max_size=40),
    cuts=st.lists(st.integers(0, 40), max_size=4),
)
def test_line_features_of_pieces_equal_those_of_the_whole_text(text, cuts):
    """Pieces cut anywhere between tokens (here: words of a and b) see what the text before left open."""
    words = [m.span() for m in re.finditer(r"[ab.]+", text)]
    whole = line_features(text, np.array(words, dtype=np.int64).reshape(-1, 2))
    pieces, state, start = [], TEXT_START, 0
    for cut in [*sorted(c for c in cuts if c <= len(text)), len(text)]:
        if any(a < cut < b for a, b in words) or cut < start:
            continue  # never inside a word
        inside = [(a - start, b - start) for a, b in words if start <= a and b <= cut]
        local = np.array(inside, dtype=np.int64).reshape(-1, 2)
        pieces.append(line_features(text[start:cut], local, state))
        state, start = line_state_after(text[start:cut], local, state), cut
    np.testing.assert_array_equal(np.concatenate(pieces), whole)


def test_line_flag_needs_the_surface_flags_and_old_meta_reads_as_without_it():
    with pytest.raises(ConfigError, match="needs surface"):
        FeatureConfig(layers=(1,), hidden=True, lines=True)
    meta = {"layers": [3], "vectors": False, "signals": False, "span": 4, "hidden": True, "surface": True}
    meta |= {"window": {"size": 128, "stride": 96}, "threshold": 0.5}
    assert settings_from_meta(meta).features.lines is False
    assert settings_from_meta({**meta, "lines": True}).features.lines is True


def test_training_lays_documents_out_in_lines_and_wrapped():
    docs = [
        Document("one-paragraph", ("A b c d e f.", "G h i j k l.")),
        Document(
            "two-paragraphs",
            ("Title", "A b c d e f g h i j k l m n o p q r s t.", "U v."),
            paragraph_starts=(1,),
        ),
    ]
    pairs = conditioned(docs, LAYOUTS)
    assert [(c, d.id) for c, d in pairs] == [
        ("lines", "two-paragraphs"),
        ("wrapped", "one-paragraph"),
        ("wrapped", "two-paragraphs"),
    ]
    assert pairs[0][1].text == "Title\nA b c d e f g h i j k l m n o p q r s t. U v."
    for _, doc in pairs[1:]:
        width = max(len(line) for line in doc.text.split("\n"))
        assert width <= max(WRAP_WIDTHS)
    assert conditioned(docs, LAYOUTS) == pairs  # the wrap width comes from the document, not a global draw
    with pytest.raises(ConfigError, match="unknown training condition"):
        conditioned(docs, ["sideways"])


def test_benchmark_layout_conditions_only_where_there_are_paragraphs():
    ewt = load_dataset("ewt-test").head(30)
    clean = evaluation_items(ewt, "clean")
    for condition in ("lines", "wrapped"):
        laid_out = evaluation_items(ewt, condition)
        assert [i.gold for i in laid_out] == [i.gold for i in clean]
        assert [i.text.replace("\n", " ") for i in laid_out] == [i.text for i in clean]
    lines, wrapped_items = evaluation_items(ewt, "lines"), evaluation_items(ewt, "wrapped")
    assert 20 < sum(i.text.count("\n") for i in lines) < sum(i.text.count("\n") for i in wrapped_items)
    assert max(len(line) for i in wrapped_items for line in i.text.split("\n")) <= WRAP_WIDTH
    golden = load_dataset("golden-rules")
    assert has_paragraphs(ewt) and not has_paragraphs(golden)
    with pytest.raises(InputError, match="no paragraph markers"):
        evaluation_items(golden, "wrapped")
    tasks = make_tasks([ewt, golden], CONDITIONS)
    assert [(t.dataset, t.condition) for t in tasks] == [
        ("ewt-test", "clean"),
        ("ewt-test", "corrupt"),
        ("ewt-test", "lines"),
        ("ewt-test", "wrapped"),
        ("golden-rules", "clean"),
        ("golden-rules", "corrupt"),
    ]


def test_bench_refuses_a_layout_condition_without_paragraphs():
    from segmenter.bench.cli import bench

    args = ["--condition", "lines", "--dataset", "golden-rules", "--system", "pysbd"]
    result = CliRunner().invoke(bench, args)
    assert result.exit_code == 2 and "paragraph markers" in result.output


# -- a probe that reads the flag -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lines_segmenter(tiny_bert_dir, tmp_path_factory, one_torch_thread):
    from segmenter import Segmenter
    from segmenter.config import WindowConfig
    from segmenter.encoder.torch.encoder import Encoder
    from segmenter.training.probe import CONDITIONS, TrainConfig, train_probe

    encoder = Encoder(str(tiny_bert_dir), max_layer=1)
    docs = [
        Document(
            f"d{i}",
            ("Notes", "The cat sat down on the mat.", f"Number {i} ended.", "Bye"),
            paragraph_starts=(1, 3),
        )
        for i in range(6)
    ]
    features = FeatureConfig(layers=(1,), vectors=False, signals=False, hidden=True, surface=True, lines=True)
    config = TrainConfig(features=features, window=WindowConfig(16, 10), conditions=CONDITIONS + LAYOUTS)
    probe = train_probe(encoder, docs, config, ["synthetic"])
    assert probe.meta["lines"] is True and probe.dimension == 2 * (48 + len(FLAGS) + len(LINE_FEATURES))
    folder = probe.save(tmp_path_factory.mktemp("lines-probe"))
    # threshold 0: every candidate gap is a boundary, so every gap's score shows in the spans
    return Segmenter(model=str(tiny_bert_dir), probe=str(folder), batch_size=2, threshold=0.0)


def test_a_line_break_changes_what_a_line_reading_probe_scores(lines_segmenter):
    spaced = lines_segmenter.gap_probabilities(["Notes The cat sat down. Bye"])[0]
    broken = lines_segmenter.gap_probabilities(["Notes\nThe cat sat down.\nBye"])[0]
    np.testing.assert_array_equal(spaced.offsets, broken.offsets)
    assert not np.allclose(spaced.probs, broken.probs)


LINE_WORDS = st.sampled_from(["the", "Cat", "sat.", "It", "ok", "Notes", "Bye", "9.5"])
# a run of zero-width spaces after a line break is long enough to be cut inside: the break then lies in
# an earlier piece than the token it flags
LINE_SEPARATORS = st.sampled_from([" ", " ", "\n", "\r\n", " \n ", "\u2028", "\x0c\n", "\n" + "\u200b" * 40])


@settings(max_examples=40, deadline=None)
@given(
    words=st.lists(LINE_WORDS, max_size=60),
    data=st.data(),
    seed=st.integers(0, 1000),
    n_chunks=st.integers(0, 12),
)
def test_streamed_line_flags_equal_one_piece(
    lines_segmenter, monkeypatch_module, words, data, seed, n_chunks
):
    seps = data.draw(st.lists(LINE_SEPARATORS, min_size=len(words), max_size=len(words)))
    text = "".join(w + s for w, s in zip(words, seps, strict=True))
    rng = random.Random(seed)
    cuts = sorted(rng.randint(0, len(text)) for _ in range(n_chunks))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    # `segment` streams too: `pipe` is the path that tokenizes the whole text at once
    assert list(lines_segmenter.segment_stream(chunks)) == next(lines_segmenter.pipe([text]))


def test_train_command_line_breaks_option(tiny_bert_dir, tiny_conllu, tmp_path):
    out = tmp_path / "probe"
    args = ["train", "probe", "--model", str(tiny_bert_dir), "--data", f"conllu:{tiny_conllu}"]
    args += ["--layers", "1", "--line-breaks", "--window-size", "16", "--out", str(out), "--no-progress"]
    result = CliRunner().invoke(cli.main, args)
    assert result.exit_code == 0, result.output
    meta = json.loads((out / "meta.json").read_text())
    assert meta["lines"] is True and meta["conditions"] == ["clean", "corrupt", "lines", "wrapped"]
