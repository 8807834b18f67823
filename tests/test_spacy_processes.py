"""The spaCy component across processes and odd paths: `nlp.pipe(..., n_process=2)` after the encoder
ran in the parent (forked workers inherit it), and a pipeline saved to and loaded from a folder whose
name has spaces and non-ASCII characters."""

from __future__ import annotations

import subprocess
import sys

import spacy
from children import child_environment

TEXTS = [f"It rained on day {i}. We stayed in and read. The end came {i} hours later." for i in range(12)]

FORKED_PIPE = """
import sys, spacy, torch
torch.set_num_threads(2)  # a thread pool in the parent, as on any machine with several cores
nlp = spacy.blank("en")
nlp.add_pipe("attention_segmenter", config={"model": sys.argv[1], "strategy": "similarity"})
texts = [f"It rained on day {i}. We stayed in and read. The end came {i} hours later." for i in range(12)]
one = [[s.text for s in doc.sents] for doc in nlp.pipe(texts)]  # the encoder runs in the parent first
two = [[s.text for s in doc.sents] for doc in nlp.pipe(texts, n_process=2, batch_size=3)]
assert one == two, (one, two)
assert any(len(sents) > 1 for sents in two)
print("same")
"""


def test_pipe_with_two_processes_gives_the_same_sentences(tiny_bert_dir):
    """Regression: the forked workers hung in their first torch call (the thread pool inherited from a
    parent that had run the encoder); run in a child so that a hang fails the test at the timeout."""
    done = subprocess.run(
        [sys.executable, "-c", FORKED_PIPE, str(tiny_bert_dir)],
        env={k: v for k, v in child_environment().items() if k != "OMP_NUM_THREADS"},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "same"


def test_disk_round_trip_through_a_path_with_spaces_and_non_ascii(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("attention_segmenter")  # the packaged model and its shipped probe, which is saved
    before = [[s.text for s in doc.sents] for doc in nlp.pipe(TEXTS)]
    folder = tmp_path / "my pipelines – Zoë’s café 日本語 ✓"
    nlp.to_disk(folder)
    assert (folder / "attention_segmenter" / "probe").is_file()
    loaded = spacy.load(folder)
    assert [[s.text for s in doc.sents] for doc in loaded.pipe(TEXTS)] == before
    saved = nlp.get_pipe("attention_segmenter")._current_probe()
    restored = loaded.get_pipe("attention_segmenter")._current_probe()
    assert saved.arrays().keys() == restored.arrays().keys()
    assert all((saved.arrays()[k] == restored.arrays()[k]).all() for k in saved.arrays())
