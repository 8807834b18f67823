"""Resolve `segmenter train --data` specs into gold or silver documents.

`conllu:PATH`, `golden:PATH` and built-in names are dataset specs (`segmenter.gold.specs`: gold documents).
`ud-train` (or `ud-train:DIR`) stands for the train splits of the six UD English treebanks in UD_TRAIN,
read from DIR, else from `$SEGMENTER_UD`, else from `../shared/data/ud` (the project's data folder
beside a clone); their dev and test splits are never read through it.
`raw:PATH` is punctuated plain text for self-supervision: paragraphs (blank-line blocks) are cut into
silver sentences by a conservative punctuation rule, and training then also sees the corrupted copy,
where that punctuation is gone. This module only builds documents; training happens elsewhere.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from segmenter.errors import InputError
from segmenter.gold.corpus import Document, documents_from_raw_text
from segmenter.gold.specs import load_dataset
from segmenter.io import read_input
from segmenter.text.charclasses import RULE_CLOSING, RULE_OPENING, RULE_SENTENCE_FINAL

# A sentence ends at . ! ? or an ellipsis (RULE_SENTENCE_FINAL), optionally followed by closing quotes or
# brackets (RULE_CLOSING), when the next word starts with an upper-case letter or a digit, after an opening
# quote or bracket (RULE_OPENING) or not, unless the full stop ends an abbreviation or an initial ("Mr.",
# "e.g.", "Vol.", "H. L. Mencken", "I.R.S."); it then stays inside the sentence, also in the few places
# where a sentence really ends there ("type O.").
_SENTENCE_END = re.compile(
    rf"(?<=[{re.escape(RULE_SENTENCE_FINAL)}])[{re.escape(RULE_CLOSING)}]*\s+"
    f"(?=[{re.escape(RULE_OPENING)}]?[A-Z0-9])"
)
_ABBREVIATIONS = re.compile(
    r"\b(?:[A-Z]|Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|vs|etc|e\.g|i\.e|No|Fig|U\.S|Vol|approx)\.$"
)


def rule_sentences(paragraph: str) -> list[str]:
    """Silver sentences of a punctuated paragraph.

    >>> rule_sentences('It rained. "Stay in," he said. Dr. Who agreed!')
    ['It rained.', '"Stay in," he said.', 'Dr. Who agreed!']
    >>> rule_sentences("H. L. Mencken wrote it. See Vol. 8 for more.")
    ['H. L. Mencken wrote it.', 'See Vol. 8 for more.']
    """
    sentences, start = [], 0
    for match in _SENTENCE_END.finditer(paragraph):
        candidate = paragraph[start : match.start()].rstrip()
        if _ABBREVIATIONS.search(candidate):
            continue
        sentences.append(paragraph[start : match.end()].strip())
        start = match.end()
    sentences.append(paragraph[start:].strip())
    return [s for s in sentences if s]


UD_TRAIN = (  # treebank folder, train file: the six UD English train splits
    ("UD_English-EWT", "en_ewt-ud-train.conllu"),
    ("UD_English-GUM", "en_gum-ud-train.conllu"),
    ("UD_English-LinES", "en_lines-ud-train.conllu"),
    ("UD_English-ParTUT", "en_partut-ud-train.conllu"),
    ("UD_English-Atis", "en_atis-ud-train.conllu"),
    ("UD_English-ESLSpok", "en_eslspok-ud-train.conllu"),
)
UD_DEFAULT_DIR = Path("..") / "shared" / "data" / "ud"


def ud_train_specs(spec: str) -> list[str]:
    """The `conllu:` specs that `ud-train` or `ud-train:DIR` stands for (module docstring).

    >>> ud_train_specs("ud-train:/data/ud")[0]
    'conllu:/data/ud/UD_English-EWT/en_ewt-ud-train.conllu'
    """
    _, _, folder = spec.partition(":")
    root = Path(folder or os.environ.get("SEGMENTER_UD") or UD_DEFAULT_DIR).expanduser()
    missing = [f"{tb}/{name}" for tb, name in UD_TRAIN if not (root / tb / name).is_file()]
    if missing:
        raise InputError(
            f"{spec!r}: no UD English train files under {root} (missing {', '.join(missing)}); "
            "give the folder as ud-train:DIR or set SEGMENTER_UD"
        )
    return [f"conllu:{root / tb / name}" for tb, name in UD_TRAIN]


def expand_specs(specs: Sequence[str]) -> list[str]:
    """`specs` with every `ud-train[:DIR]` replaced by the six train files it stands for."""
    return [s for spec in specs for s in (ud_train_specs(spec) if _is_ud_train(spec) else [spec])]


def _is_ud_train(spec: str) -> bool:
    return spec == "ud-train" or spec.startswith("ud-train:")


def load_training_documents(specs: Sequence[str]) -> tuple[list[Document], list[str]]:
    """Documents of every spec, and a description of each source for the probe's meta file."""
    docs: list[Document] = []
    sources: list[str] = []
    for spec in expand_specs(specs):
        if spec.startswith("raw:"):
            path = spec[4:]
            found = list(documents_from_raw_text(read_input(path), path, rule_sentences))
            sources.append(f"raw:{path} (silver sentences from punctuation rules, {len(found)} paragraphs)")
        else:
            dataset = load_dataset(spec)
            found = list(dataset.documents)
            sources.append(f"{spec} ({len(found)} documents, gold)")
        if not found:
            raise InputError(f"training data {spec!r} holds no sentences")
        docs.extend(found)
    return docs, sources
