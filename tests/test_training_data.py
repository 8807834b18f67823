"""Training documents: silver documents from raw text, and the train / held-out split."""

from __future__ import annotations

import numpy as np
import pytest

from segmenter.errors import ConfigError
from segmenter.gold.corpus import Document, corrupt_document
from segmenter.training.data import load_training_documents, rule_sentences
from segmenter.training.probe import TrainConfig, conditioned, split_documents
from segmenter.training.tune import TuneConfig


def _docs(n: int, silver: bool = False) -> list[Document]:
    return [
        Document(f"{'s' if silver else 'g'}{i}", (f"Sentence {i}.", "Another one."), silver) for i in range(n)
    ]


def test_raw_text_gives_silver_documents_that_stay_silver_when_corrupted(tmp_path):
    raw = tmp_path / "prose.txt"
    raw.write_text("It rained. We stayed in.\n\nThe sun came out. We left.\n", encoding="utf-8")
    docs, sources = load_training_documents([f"raw:{raw}"])
    assert [d.sentences for d in docs] == [("It rained.", "We stayed in."), ("The sun came out.", "We left.")]
    assert all(d.silver for d in docs) and "silver" in sources[0]
    assert corrupt_document(docs[0]).silver and not corrupt_document(_docs(1)[0]).silver


@pytest.mark.parametrize(
    "paragraph, sentences",
    [
        (
            'It rained. "Stay in," he said. Dr. Who agreed!',
            ["It rained.", '"Stay in," he said.', "Dr. Who agreed!"],
        ),
        ("He left... Then it rained! Did it? Yes.", ["He left...", "Then it rained!", "Did it?", "Yes."]),
        (
            "H. L. Mencken wrote it. Samuel F. B. Morse did not.",
            ["H. L. Mencken wrote it.", "Samuel F. B. Morse did not."],
        ),
        (
            "See Vol. 8, No. 1 of the I.R.S. Journal. It is approx. 30 pages.",
            ["See Vol. 8, No. 1 of the I.R.S. Journal.", "It is approx. 30 pages."],
        ),
        (
            "Mr. Smith met Mrs. Jones, e.g. Here. Then they left.",
            ["Mr. Smith met Mrs. Jones, e.g. Here.", "Then they left."],
        ),
    ],
)
def test_silver_sentences_end_at_punctuation_but_not_after_abbreviations_or_initials(paragraph, sentences):
    assert rule_sentences(paragraph) == sentences
    assert "".join(rule_sentences(paragraph)).replace(" ", "") == paragraph.replace(" ", "")


def test_only_gold_documents_are_held_out():
    gold, silver = _docs(10), _docs(30, silver=True)
    mixed = [*gold[:5], *silver, *gold[5:]]
    train, held = split_documents(mixed, 0.2, seed=0)
    assert len(held) == 2 and not any(d.silver for d in held)
    assert all(d in train for d in silver)
    assert [d.id for d in train] == [d.id for d in mixed if d not in held]  # order kept
    # the gold documents are split as if the silver ones were not there
    assert held == split_documents(gold, 0.2, seed=0)[1]


def test_gold_split_is_a_seeded_random_share():
    docs = _docs(20)
    order = np.random.default_rng(3).permutation(20)
    train, held = split_documents(docs, 0.25, seed=3)
    assert {d.id for d in held} == {f"g{i}" for i in order[:5]}
    assert len(train) == 15 and split_documents(docs, 0.25, seed=4)[1] != held


def test_silver_documents_alone_are_split_too():
    train, held = split_documents(_docs(10, silver=True), 0.2, seed=0)
    assert len(held) == 2 and len(train) == 8


def test_the_split_seed_alone_picks_the_held_out_documents(monkeypatch, tiny_bert_dir):
    from segmenter.config import FeatureConfig, WindowConfig
    from segmenter.encoder.torch.encoder import Encoder
    from segmenter.training import probe as train
    from segmenter.training import tune

    chosen = []

    def spy(docs, holdout, seed):
        chosen.append(seed)
        return split_documents(docs, holdout, seed)

    monkeypatch.setattr(train, "split_documents", spy)
    monkeypatch.setattr(tune, "split_documents", spy)
    docs, window = _docs(6), WindowConfig(16, 10)
    frozen = train.TrainConfig(
        features=FeatureConfig(layers=(1,), hidden=True), window=window, holdout=0.3, seed=1, split_seed=3
    )
    probe = train.train_probe(Encoder(str(tiny_bert_dir), max_layer=1), docs, frozen, ["synthetic"])
    assert (probe.meta["seed"], probe.meta["split_seed"]) == (1, 3)
    tuned = tune.TuneConfig(blocks=1, rank=2, epochs=1, hidden_units=8, window=window, holdout=0.3, seed=1)
    assert tune.tune_probe(str(tiny_bert_dir), docs, tuned, ["synthetic"]).meta["split_seed"] == 1
    assert chosen == [3, 1]  # without split_seed the seed splits


def test_unmarked_share_strips_final_punctuation_of_that_share_of_clean_sentences_only():
    endings = (".", "!", "?", '."', "...")
    docs = [
        Document(
            f"d{i}", tuple(f"Sentence {j} of {i}{endings[j % 5]}" for j in range(10)), paragraph_starts=(5,)
        )
        for i in range(60)
    ]
    plain = conditioned(docs, ("clean", "corrupt", "lines"))
    stripped = conditioned(docs, ("clean", "corrupt", "lines"), unmarked_share=0.3)
    assert conditioned(docs, ("clean", "corrupt", "lines"), unmarked_share=0.3) == stripped  # no random draw
    assert [c for c, _ in stripped] == [c for c, _ in plain]
    changed = 0
    for (condition, before), (_, after) in zip(plain, stripped, strict=True):
        if condition != "clean":
            assert after == before
            continue
        assert len(after.boundaries) == len(before.boundaries)
        for old, new in zip(before.sentences, after.sentences, strict=True):
            if new != old:
                changed += 1
                assert new == old.rstrip('."!?') + ('"' if old.endswith('"') else "")
    assert 0.25 < changed / 600 < 0.35


@pytest.mark.parametrize("config", [TrainConfig, TuneConfig])
def test_unmarked_share_outside_zero_to_one_is_refused(config):
    with pytest.raises(ConfigError, match="unmarked_share"):
        config(unmarked_share=1.5)


def test_ud_train_stands_for_the_six_train_files_and_never_a_dev_or_test_file(tmp_path, monkeypatch):
    from segmenter.errors import InputError
    from segmenter.training.data import UD_TRAIN, expand_specs

    for folder, name in UD_TRAIN:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text(
            "# newdoc id = d\n# text = Hi.\n1\tHi\t_\t_\t_\t_\t0\t_\t_\t_\n\n"
        )
        (tmp_path / folder / name.replace("train", "dev")).write_text("")
    specs = expand_specs([f"ud-train:{tmp_path}", "raw:notes.txt"])
    assert len(specs) == 7 and specs[-1] == "raw:notes.txt"
    assert all(s.startswith("conllu:") and s.endswith("-ud-train.conllu") for s in specs[:6])
    monkeypatch.setenv("SEGMENTER_UD", str(tmp_path))
    assert expand_specs(["ud-train"]) == specs[:6]
    docs, sources = load_training_documents(["ud-train"])
    assert len(docs) == 6 and all("train.conllu" in s for s in sources)
    (tmp_path / UD_TRAIN[2][0] / UD_TRAIN[2][1]).unlink()
    with pytest.raises(InputError, match="en_lines-ud-train.conllu"):
        expand_specs(["ud-train"])
